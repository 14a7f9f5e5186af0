/**
 * How a shop upload is read: streamed through an MD5 with only its first bytes kept, so a 100 MB
 * video costs no more memory than a small one, and the aspect-ratio rule of photos. Formats are
 * recognised in ../media.ts; video frames are not decoded, so the documented 9:16 to 16:9 aspect
 * ratio of videos is not checked (an emulator deviation).
 */
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { SHOP } from '../official-error';

/** 9:16 to 16:9 inclusive, compared in integers. */
export function aspectAllowed(width: number, height: number): boolean {
  return 9 * height <= 16 * width && 9 * width <= 16 * height;
}

export interface Upload {
  /** The first `keepBytes` bytes. */
  head: Buffer;
  size: number;
  /** Upper-case hex, as the platform reports it. */
  md5: string;
}

/**
 * Reads the multipart field `data` to its end. A file over `maxBytes` is still read through (a
 * refusal sent while the client is writing would reach it as a broken pipe) and then refused.
 */
export async function readUpload(request: FastifyRequest, opts: { maxBytes: number; keepBytes: number; what: string }): Promise<Upload> {
  if (!request.isMultipart()) throw SHOP.missing('data');
  const part = await request.file();
  if (!part) throw SHOP.missing('data');
  if (part.fieldname !== 'data') {
    part.file.resume();
    throw SHOP.missing('data');
  }
  const hash = createHash('md5');
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let size = 0;
  for await (const chunk of part.file) {
    const bytes = chunk as Buffer;
    hash.update(bytes);
    size += bytes.length;
    if (keptBytes < opts.keepBytes) {
      const slice = bytes.subarray(0, opts.keepBytes - keptBytes);
      kept.push(slice);
      keptBytes += slice.length;
    }
  }
  if (part.file.truncated || size > opts.maxBytes) {
    throw SHOP.invalid('data', `exceeds the maximum ${opts.what} size of ${opts.maxBytes / (1024 * 1024)} MB`);
  }
  if (size === 0) throw SHOP.invalid('data', 'is empty');
  return { head: Buffer.concat(kept), size, md5: hash.digest('hex').toUpperCase() };
}
