/**
 * The cover photo rule (spec, Limits: at most 10 MB, aspect ratio 9:16 to 16:9), judged from the
 * bytes alone: the format from the file's signature and the size from the image's own header
 * (core/media/formats.ts recognises media for every upload), never from the client's name or type.
 * The gateway reads at most PHOTO_MAX_BYTES + 1 bytes, so one byte too many is enough to refuse.
 */
import { IMAGE_CONTENT_TYPES, imageInfo, type ImageFormat } from '../media/formats';

/** 10 MB as the shop counts it (binary megabytes). */
export const PHOTO_MAX_BYTES = 10 * 1024 * 1024;
export const PHOTO_FORMATS: readonly ImageFormat[] = ['JPEG', 'PNG', 'WEBP', 'HEIC', 'BMP'];
/** Width to height, inclusive bounds: 9:16 (portrait) to 16:9 (landscape). */
export const ASPECT_RANGE = { narrowest: [9, 16], widest: [16, 9] } as const;

export interface CheckedPhoto {
  format: ImageFormat;
  width: number;
  height: number;
  contentType: string;
}

/** Why a photo is refused: the reason follows `file: ` in the 2001 message. */
export class PhotoRefused extends Error {}

/** Compared in integers, so 9:16 and 16:9 themselves are inside and nothing rounds across a bound. */
export function aspectAllowed(width: number, height: number): boolean {
  const [nw, nh] = ASPECT_RANGE.narrowest;
  const [ww, wh] = ASPECT_RANGE.widest;
  return width * nh >= height * nw && width * wh <= height * ww;
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/** `9:17`: the ratio in lowest terms, as a person would read it. */
export function ratioText(width: number, height: number): string {
  const d = gcd(width, height) || 1;
  return `${width / d}:${height / d}`;
}

export async function checkPhoto(bytes: Buffer): Promise<CheckedPhoto> {
  if (bytes.length === 0) throw new PhotoRefused('is empty');
  if (bytes.length > PHOTO_MAX_BYTES) throw new PhotoRefused(`larger than the limit of ${PHOTO_MAX_BYTES} bytes (10 MB)`);
  const info = await imageInfo(bytes);
  if (!info || !PHOTO_FORMATS.includes(info.format)) {
    throw new PhotoRefused(`is not a supported image: its bytes are not ${PHOTO_FORMATS.join(', ')}`);
  }
  if (!info.size) throw new PhotoRefused(`is a ${info.format} whose width and height cannot be read from its header`);
  const { width, height } = info.size;
  if (!aspectAllowed(width, height)) {
    const [nw, nh] = ASPECT_RANGE.narrowest;
    const [ww, wh] = ASPECT_RANGE.widest;
    throw new PhotoRefused(
      `has an aspect ratio of ${ratioText(width, height)} (${width}x${height}), outside the allowed ${nw}:${nh} to ${ww}:${wh}`,
    );
  }
  return { format: info.format, width, height, contentType: IMAGE_CONTENT_TYPES[info.format] };
}
