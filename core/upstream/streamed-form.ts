/**
 * A multipart/form-data body of one file part, sent as its bytes arrive. undici's FormData (7 and
 * later) takes only a Blob, and a Blob of a stream is read whole before it is sent; a video handed
 * on to the shop may be 100 MB, so it goes through this instead.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { ReadableStream } from 'node:stream/web';

export interface StreamedForm {
  readonly contentType: string;
  /** Known when the file's size is: the request then needs no chunked encoding. */
  readonly contentLength?: number;
  readonly body: Readable;
}

export interface StreamedFile {
  fileName: string;
  contentType: string;
  stream: Readable | ReadableStream<Uint8Array>;
  size?: number;
}

/** A name as a part's header carries it: quotes and line breaks percent-encoded, as browsers send them. */
function quoted(name: string): string {
  return `"${name.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A')}"`;
}

export function streamedFileForm(field: string, file: StreamedFile): StreamedForm {
  const boundary = `----vps-${randomBytes(12).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name=${quoted(field)}; filename=${quoted(file.fileName)}\r\n` +
      `Content-Type: ${file.contentType}\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const source = file.stream instanceof Readable ? file.stream : Readable.fromWeb(file.stream);
  async function* parts(): AsyncGenerator<Uint8Array> {
    yield head;
    yield* source;
    yield tail;
  }
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    ...(file.size !== undefined ? { contentLength: head.length + file.size + tail.length } : {}),
    body: Readable.from(parts(), { objectMode: false }),
  };
}

export function isStreamedForm(body: unknown): body is StreamedForm {
  return typeof body === 'object' && body !== null && 'contentType' in body && (body as StreamedForm).body instanceof Readable;
}
