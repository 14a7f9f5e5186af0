/**
 * Real images for upload tests, made in memory: a PNG of any size (optionally padded to a file
 * size), a JPEG header with its size, and POST /v1/photos as multipart.
 */
import { randomBytes } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';
import type { Envelope } from './http';

export interface Photo {
  photoUri: string;
  format: string;
  width: number;
  height: number;
  sizeBytes: number;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A real grey PNG of that size; `padTo` appends a private ancillary chunk until the file is that long. */
export function png(width: number, height: number, padTo = 0): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 0, 0, 0, 0], 8); // 8-bit greyscale
  const raw = Buffer.alloc((width + 1) * height, 0x80);
  for (let y = 0; y < height; y++) raw[y * (width + 1)] = 0; // filter type of each row
  const parts = [Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), pngChunk('IHDR', ihdr), pngChunk('IDAT', deflateSync(raw))];
  const size = parts.reduce((n, p) => n + p.length, 0) + 12;
  if (padTo > size + 12) parts.push(pngChunk('prVt', Buffer.alloc(padTo - size - 12)));
  parts.push(pngChunk('IEND', Buffer.alloc(0)));
  return Buffer.concat(parts);
}

/** A baseline JPEG header (SOI, APP0, SOF0 with the size) followed by filler and EOI. */
export function jpeg(width: number, height: number): Buffer {
  const app0 = Buffer.from([0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00]);
  const sof = Buffer.from([
    0xff,
    0xc0,
    0x00,
    0x11,
    0x08,
    height >> 8,
    height & 0xff,
    width >> 8,
    width & 0xff,
    0x03,
    1,
    0x22,
    0,
    2,
    0x11,
    1,
    3,
    0x11,
    1,
  ]);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, sof, randomBytes(256), Buffer.from([0xff, 0xd9])]);
}

export async function postPhoto(
  baseUrl: string,
  key: string | undefined,
  parts: Array<[string, string | { fileName: string; bytes: Buffer; type?: string }]>,
  headers: Record<string, string> = {},
): Promise<Envelope<Photo>> {
  const form = new FormData();
  for (const [name, value] of parts) {
    if (typeof value === 'string') form.append(name, value);
    else form.append(name, new Blob([value.bytes], { type: value.type ?? 'image/png' }), value.fileName);
  }
  const res = await fetch(`${baseUrl}/v1/photos`, {
    method: 'POST',
    body: form,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: JSON.parse(text) as Envelope<Photo>['body'] };
}
