/**
 * Media as the platforms judge them: by their bytes, not their declared type or name. The format
 * comes from `file-type`, which walks each container's own structure (the `ftyp` brand of ISO
 * files, the EBML DocType of Matroska and WebM, the stream properties of ASF, …); an image's size
 * from `image-size`, which reads it from the header (frames are never decoded). Core judges what
 * customers upload with this module; the emulator judges what it is sent the same way, as the
 * platforms would.
 */
import { fileTypeFromBuffer, type FileTypeResult } from 'file-type';
import { imageSize } from 'image-size';

export type VideoFormat = 'MP4' | 'MOV' | '3GP' | 'WEBM' | 'MKV' | 'AVI' | 'FLV' | 'WMV' | 'MPEG';
export type ImageFormat = 'PNG' | 'JPEG' | 'WEBP' | 'BMP' | 'HEIC';

/**
 * `file-type`'s extension for each container we name. Every ISO brand that is not an image or an
 * audio-only brand is an MP4 to the platforms, as `file-type` itself reports it.
 */
const VIDEO_BY_EXTENSION: Readonly<Record<string, VideoFormat>> = {
  mp4: 'MP4',
  m4v: 'MP4',
  m4p: 'MP4',
  f4v: 'MP4',
  f4p: 'MP4',
  mov: 'MOV',
  '3gp': '3GP',
  '3g2': '3GP',
  webm: 'WEBM',
  mkv: 'MKV',
  avi: 'AVI',
  flv: 'FLV',
  asf: 'WMV',
  mpg: 'MPEG',
  mts: 'MPEG',
};

/** An animated PNG is still a PNG; HEIF and HEIC (stills or sequences) are one format to the platforms. */
const IMAGE_BY_EXTENSION: Readonly<Record<string, ImageFormat>> = {
  png: 'PNG',
  apng: 'PNG',
  jpg: 'JPEG',
  webp: 'WEBP',
  bmp: 'BMP',
  heic: 'HEIC',
};

export const VIDEO_FORMATS: readonly VideoFormat[] = [...new Set(Object.values(VIDEO_BY_EXTENSION))];

/** What the bytes are, or undefined when no known signature matches (or the bytes are cut short). */
async function detect(bytes: Uint8Array): Promise<FileTypeResult | undefined> {
  if (bytes.length === 0) return undefined;
  try {
    return await fileTypeFromBuffer(bytes);
  } catch {
    // A few of file-type's parsers throw on a structure they find broken: bytes it cannot make
    // out are unrecognised, a refusal for the caller, never a failure of ours.
    return undefined;
  }
}

/** The container of a video from its first bytes (4 KB is plenty); undefined for anything else, audio included. */
export async function videoFormat(head: Uint8Array): Promise<VideoFormat | undefined> {
  const type = await detect(head);
  if (!type || type.mime.startsWith('audio/')) return undefined;
  return VIDEO_BY_EXTENSION[type.ext];
}

export interface ImageSize {
  width: number;
  height: number;
}

/** The size in the image's header, when the bytes hold it and it names a picture of at least 1×1. */
function headerSize(bytes: Uint8Array): ImageSize | undefined {
  try {
    // image-size reads through a DataView of the whole underlying ArrayBuffer, so a header cut
    // short inside a pooled Buffer would be completed with a neighbour's bytes. A copy of its own
    // makes a cut header fail to read, as it should.
    const { width, height } = imageSize(new Uint8Array(bytes));
    return width > 0 && height > 0 ? { width, height } : undefined;
  } catch {
    // image-size throws a TypeError for a header it cannot read: a cut or damaged image has no size.
    return undefined;
  }
}

/** The image's format, and its size when the header could be read; `undefined` for other formats. */
export async function imageInfo(bytes: Uint8Array): Promise<{ format: ImageFormat; size?: ImageSize } | undefined> {
  const type = await detect(bytes);
  const format = type && IMAGE_BY_EXTENSION[type.ext];
  if (!format) return undefined;
  const size = headerSize(bytes);
  return size ? { format, size } : { format };
}

export const IMAGE_CONTENT_TYPES: Record<ImageFormat, string> = {
  PNG: 'image/png',
  JPEG: 'image/jpeg',
  WEBP: 'image/webp',
  BMP: 'image/bmp',
  HEIC: 'image/heic',
};
