/**
 * One sample of each container and image format the platforms take: just enough bytes for the
 * format's own structure (its signature, and for images the header that holds the size), built
 * by hand so that the tests say exactly which bytes make each format.
 */

export function concat(...parts: Array<Buffer | string | number[]>): Buffer {
  return Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.isBuffer(p) ? p : Buffer.from(p))));
}

const uint = (bytes: number, n: number, littleEndian: boolean) => {
  const b = Buffer.alloc(bytes);
  if (littleEndian) b.writeUIntLE(n, 0, bytes);
  else b.writeUIntBE(n, 0, bytes);
  return b;
};
const u16be = (n: number) => uint(2, n, false);
const u32be = (n: number) => uint(4, n, false);
const u24le = (n: number) => uint(3, n, true);
const u32le = (n: number) => uint(4, n >>> 0, true);
export const filler = (n: number) => Buffer.alloc(n, 0x11);

/** An ISO base media box: its size, its type, its contents. */
const box = (type: string, ...contents: Array<Buffer | string | number[]>) => {
  const body = concat(...contents);
  return concat(u32be(8 + body.length), type, body);
};
/** An ISO file type box naming a major brand, as MP4, MOV, 3GP and HEIF files open. */
const ftyp = (brand: string, ...compatible: string[]) => box('ftyp', brand, u32be(0x200), ...compatible);

/** An EBML header whose DocType names the Matroska flavour (`webm` or `matroska`). */
const ebml = (docType: string) => {
  const element = concat([0x42, 0x82, 0x80 | docType.length], docType);
  return concat([0x1a, 0x45, 0xdf, 0xa3, 0x80 | (element.length + 4)], [0x42, 0x86, 0x81, 0x01], element, filler(100));
};

/** The ASF header object (its GUID, size and object count), as WMV files open. */
const asfHeader = concat([0x30, 0x26, 0xb2, 0x75, 0x8e, 0x66, 0xcf, 0x11, 0xa6, 0xd9, 0x00, 0xaa, 0x00, 0x62, 0xce, 0x6c], filler(100));

export const VIDEO_SAMPLES: Readonly<Record<string, Buffer>> = {
  MP4: concat(ftyp('isom', 'isomiso2'), filler(200)),
  MOV: concat(ftyp('qt  ', 'qt  '), filler(200)),
  '3GP': concat(ftyp('3gp4', 'isom3gp4'), filler(200)),
  WEBM: ebml('webm'),
  MKV: ebml('matroska'),
  AVI: concat('RIFF', u32le(1000), 'AVI LIST', filler(100)),
  FLV: concat('FLV', [0x01, 0x05, 0, 0, 0, 9], filler(100)),
  WMV: asfHeader,
  MPEG: concat([0, 0, 1, 0xba, 0x44], filler(100)),
};

export const pngHeader = (w: number, h: number) =>
  concat([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], u32be(13), 'IHDR', u32be(w), u32be(h), [8, 6, 0, 0, 0], u32be(0), filler(20));

/** A progressive JPEG: SOI, APP0, a quantisation table, then SOF2 with the size. */
export const jpegHeader = (w: number, h: number) =>
  concat(
    [0xff, 0xd8],
    [0xff, 0xe0],
    u16be(16),
    'JFIF\0',
    [1, 1, 0, 0, 1, 0, 1, 0, 0],
    [0xff, 0xdb],
    u16be(4),
    [0, 0],
    [0xff, 0xc2],
    u16be(17),
    [8],
    u16be(h),
    u16be(w),
    [3],
    filler(9),
    [0xff, 0xd9],
  );

/** An extended WebP (VP8X), which stores width and height less one. */
export const webpHeader = (w: number, h: number) =>
  concat('RIFF', u32le(30), 'WEBP', 'VP8X', u32le(10), [0, 0, 0, 0], u24le(w - 1), u24le(h - 1), filler(20));

/** A bottom-up-negated (top-down) BMP with a BITMAPINFOHEADER. */
export const bmpHeader = (w: number, h: number) => concat('BM', u32le(70), u32le(0), u32le(54), u32le(40), u32le(w), u32le(-h), filler(40));

/** A HEIC still: its size is the `ispe` property inside meta → iprp → ipco. */
export const heicHeader = (w: number, h: number) =>
  concat(
    ftyp('heic', 'mif1heic'),
    box(
      'meta',
      u32be(0),
      box('hdlr', u32be(0), u32be(0), 'pict', filler(12), [0]),
      box('iprp', box('ipco', box('ispe', u32be(0), u32be(w), u32be(h)))),
    ),
    filler(20),
  );
