/**
 * A multipart/form-data body generated while it is sent: the text fields, then the file, read in
 * chunks (never whole into memory), with the bytes sent reported as they go.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { UploadFile } from './endpoint';

export interface MultipartBody {
  contentType: string;
  body: AsyncIterable<Uint8Array>;
  /** The file's size, when known before sending. */
  fileBytes: number | undefined;
  /** A body from a path or bytes can be generated again for a retry; a stream cannot. */
  replayable: boolean;
}

/** Quotes a value for a Content-Disposition parameter; line breaks cannot appear in one. */
function quoted(value: string): string {
  return `"${value.replace(/[\r\n]/g, ' ').replace(/(["\\])/g, '\\$1')}"`;
}

export function fileName(file: UploadFile): string {
  return 'path' in file ? (file.name ?? path.basename(file.path)) : file.name;
}

export function multipartBody(
  fields: object,
  file: UploadFile,
  onProgress?: (sentBytes: number, totalBytes: number | undefined) => void,
): MultipartBody {
  const boundary = `----vps-${randomBytes(12).toString('hex')}`;
  const fileBytes = 'path' in file ? fs.statSync(file.path).size : 'bytes' in file ? file.bytes.byteLength : file.size;
  async function* generate(): AsyncGenerator<Uint8Array> {
    let head = '';
    for (const [name, value] of Object.entries(fields)) {
      if (value === undefined || value === null) continue;
      head += `--${boundary}\r\nContent-Disposition: form-data; name=${quoted(name)}\r\n\r\n${typeof value === 'string' ? value : JSON.stringify(value)}\r\n`;
    }
    head += `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename=${quoted(fileName(file))}\r\nContent-Type: ${file.contentType ?? 'application/octet-stream'}\r\n\r\n`;
    yield Buffer.from(head);
    const source: AsyncIterable<Uint8Array> =
      'path' in file ? fs.createReadStream(file.path) : 'bytes' in file ? chunks(file.bytes) : file.stream;
    let sent = 0;
    onProgress?.(0, fileBytes);
    for await (const chunk of source) {
      sent += chunk.byteLength;
      yield chunk;
      onProgress?.(sent, fileBytes);
    }
    yield Buffer.from(`\r\n--${boundary}--\r\n`);
  }
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: generate(), fileBytes, replayable: !('stream' in file) };
}

async function* chunks(bytes: Uint8Array, size = 256 * 1024): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.byteLength; i += size) yield bytes.subarray(i, i + size);
}
