/**
 * Media as the platforms judge them: by their bytes, not their declared type or name. Videos are
 * recognised by their container signature (frames are not decoded); images by their signature,
 * with the size read from their header (PNG IHDR, JPEG SOFn, WEBP VP8/VP8L/VP8X, BMP DIB header,
 * HEIC `ispe`). Core judges what customers upload with it; the emulator judges what it is sent the
 * same way, as the platforms would.
 */

export type VideoFormat = 'MP4' | 'MOV' | '3GP' | 'WEBM' | 'MKV' | 'AVI' | 'FLV' | 'WMV' | 'MPEG';
export type ImageFormat = 'PNG' | 'JPEG' | 'WEBP' | 'BMP' | 'HEIC';

const ascii = (buf: Buffer, at: number, length: number) => buf.toString('latin1', at, at + length);
const startsWith = (buf: Buffer, bytes: number[], at = 0) => bytes.every((b, i) => buf[at + i] === b);

/** ISO base media files (MP4, MOV, 3GP, HEIC) open with an `ftyp` box naming their brand. */
function ftypBrand(head: Buffer): string | undefined {
  return head.length >= 12 && ascii(head, 4, 4) === 'ftyp' ? ascii(head, 8, 4) : undefined;
}

const HEIC_BRANDS = new Set(['heic', 'heix', 'heim', 'heis', 'hevc', 'hevx', 'mif1', 'msf1']);

/** Checked in order; the first match names the format. */
const VIDEO_SIGNATURES: ReadonlyArray<{ format: VideoFormat; matches: (head: Buffer) => boolean }> = [
  { format: '3GP', matches: (h) => ftypBrand(h)?.startsWith('3g') === true },
  { format: 'MOV', matches: (h) => ftypBrand(h) === 'qt  ' },
  { format: 'MP4', matches: (h) => ftypBrand(h) !== undefined && !HEIC_BRANDS.has(ftypBrand(h)!) },
  // Matroska and WebM share the EBML header; WebM names itself in the DocType element.
  { format: 'WEBM', matches: (h) => startsWith(h, [0x1a, 0x45, 0xdf, 0xa3]) && h.subarray(0, 64).includes('webm') },
  { format: 'MKV', matches: (h) => startsWith(h, [0x1a, 0x45, 0xdf, 0xa3]) },
  { format: 'AVI', matches: (h) => ascii(h, 0, 4) === 'RIFF' && ascii(h, 8, 4) === 'AVI ' },
  { format: 'FLV', matches: (h) => ascii(h, 0, 3) === 'FLV' && h[3] === 0x01 },
  // The ASF header object GUID, which WMV files open with.
  { format: 'WMV', matches: (h) => startsWith(h, [0x30, 0x26, 0xb2, 0x75, 0x8e, 0x66, 0xcf, 0x11]) },
  // MPEG program stream pack header, elementary stream sequence header, or two transport packets.
  {
    format: 'MPEG',
    matches: (h) => startsWith(h, [0, 0, 1, 0xba]) || startsWith(h, [0, 0, 1, 0xb3]) || (h[0] === 0x47 && h[188] === 0x47),
  },
];

export const VIDEO_FORMATS = VIDEO_SIGNATURES.map((s) => s.format);

export function videoFormat(head: Buffer): VideoFormat | undefined {
  return VIDEO_SIGNATURES.find((s) => s.matches(head))?.format;
}

export interface ImageSize {
  width: number;
  height: number;
}

/** Start-of-frame markers that carry the dimensions (not DHT C4, JPG C8, DAC CC). */
const JPEG_SOF = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

function jpegSize(buf: Buffer): ImageSize | undefined {
  let i = 2;
  while (i + 9 <= buf.length) {
    if (buf[i] !== 0xff) return undefined;
    const marker = buf[i + 1]!;
    if (marker === 0xff) {
      i += 1; // fill byte
      continue;
    }
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) {
      i += 2; // markers without a length
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) return undefined; // image data before any frame header
    if (JPEG_SOF.has(marker)) return { height: buf.readUInt16BE(i + 5), width: buf.readUInt16BE(i + 7) };
    i += 2 + buf.readUInt16BE(i + 2);
  }
  return undefined;
}

function webpSize(buf: Buffer): ImageSize | undefined {
  const chunk = ascii(buf, 12, 4);
  if (chunk === 'VP8 ' && buf.length >= 30 && startsWith(buf, [0x9d, 0x01, 0x2a], 23)) {
    return { width: buf.readUInt16LE(26) & 0x3fff, height: buf.readUInt16LE(28) & 0x3fff };
  }
  if (chunk === 'VP8L' && buf.length >= 25 && buf[20] === 0x2f) {
    const bits = buf.readUInt32LE(21);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === 'VP8X' && buf.length >= 30) {
    return { width: buf.readUIntLE(24, 3) + 1, height: buf.readUIntLE(27, 3) + 1 };
  }
  return undefined;
}

function bmpSize(buf: Buffer): ImageSize | undefined {
  if (buf.length < 26) return undefined;
  // The old OS/2 core header stores 16-bit sizes; every later header 32-bit signed ones (negative
  // height means a top-down bitmap).
  if (buf.readUInt32LE(14) === 12) return { width: buf.readUInt16LE(18), height: buf.readUInt16LE(20) };
  return { width: Math.abs(buf.readInt32LE(18)), height: Math.abs(buf.readInt32LE(22)) };
}

/** HEIF keeps the image size in an `ispe` property box: version/flags, then width and height. */
function heicSize(buf: Buffer): ImageSize | undefined {
  const at = buf.indexOf('ispe');
  if (at < 0 || at + 16 > buf.length) return undefined;
  return { width: buf.readUInt32BE(at + 8), height: buf.readUInt32BE(at + 12) };
}

const IMAGE_READERS: ReadonlyArray<{ format: ImageFormat; matches: (b: Buffer) => boolean; size: (b: Buffer) => ImageSize | undefined }> = [
  {
    format: 'PNG',
    matches: (b) => startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    size: (b) => (b.length >= 24 && ascii(b, 12, 4) === 'IHDR' ? { width: b.readUInt32BE(16), height: b.readUInt32BE(20) } : undefined),
  },
  { format: 'JPEG', matches: (b) => startsWith(b, [0xff, 0xd8, 0xff]), size: jpegSize },
  { format: 'WEBP', matches: (b) => ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 4) === 'WEBP', size: webpSize },
  { format: 'BMP', matches: (b) => ascii(b, 0, 2) === 'BM', size: bmpSize },
  { format: 'HEIC', matches: (b) => HEIC_BRANDS.has(ftypBrand(b) ?? ''), size: heicSize },
];

/** The image's format, and its size when the header could be read; `undefined` for other formats. */
export function imageInfo(bytes: Buffer): { format: ImageFormat; size?: ImageSize } | undefined {
  const reader = IMAGE_READERS.find((r) => r.matches(bytes));
  if (!reader) return undefined;
  const size = reader.size(bytes);
  return size && size.width > 0 && size.height > 0 ? { format: reader.format, size } : { format: reader.format };
}

export const IMAGE_CONTENT_TYPES: Record<ImageFormat, string> = {
  PNG: 'image/png',
  JPEG: 'image/jpeg',
  WEBP: 'image/webp',
  BMP: 'image/bmp',
  HEIC: 'image/heic',
};
