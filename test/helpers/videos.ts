/**
 * Video library helpers: multipart uploads over real HTTP (small ones through FormData, large ones
 * generated on the fly as a stream, never held in memory), video-like bytes, and a loopback
 * source server for remote uploads with the answers the failure cases need.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Readable } from 'node:stream';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { request } from 'undici';
import { FolderMediaStore } from '../../core/media/folder-store';
import type { S3MediaStore } from '../../core/media/s3-store';
import type { Envelope } from './http';
import type { Stack } from './stack';

/** Bytes a container check takes for an MP4 (an ftyp box), then `size` bytes in all. */
export function mp4Bytes(size = 64 * 1024): Buffer {
  const head = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypisom'), Buffer.from([0, 0, 2, 0]), Buffer.from('isomiso2')]);
  return Buffer.concat([head, randomBytes(Math.max(0, size - head.length))]);
}

/** A WebM header (EBML magic and the DocType), then filler. */
export function webmBytes(size = 8 * 1024): Buffer {
  const head = Buffer.concat([Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x82, 0x84]), Buffer.from('webm')]);
  return Buffer.concat([head, randomBytes(size - head.length)]);
}

export const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

export interface UploadPart {
  name: string;
  value: string | { fileName: string; bytes: Buffer; type?: string };
}

/** POST /v1/videos as multipart/form-data, the parts in the order given. */
export async function uploadMultipart<T = Record<string, unknown>>(
  baseUrl: string,
  key: string | undefined,
  parts: UploadPart[],
  headers: Record<string, string> = {},
): Promise<Envelope<T>> {
  const form = new FormData();
  for (const part of parts) {
    if (typeof part.value === 'string') form.append(part.name, part.value);
    else form.append(part.name, new Blob([part.value.bytes], { type: part.value.type ?? 'video/mp4' }), part.value.fileName);
  }
  const res = await fetch(`${baseUrl}/v1/videos`, {
    method: 'POST',
    body: form,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
  });
  const text = await res.text();
  try {
    return { status: res.status, headers: res.headers, body: JSON.parse(text) as Envelope<T>['body'] };
  } catch {
    throw new Error(`POST /v1/videos: HTTP ${res.status} with a body that is not JSON: ${text.slice(0, 200)}`);
  }
}

/**
 * A multipart body with the fields, then a file of `fileBytes` generated chunk by chunk (an MP4
 * header, then a repeated pseudo-random block), hashed as it goes. Nothing but one block is held.
 */
/**
 * A multipart body of `fileBytes` generated on the fly. `pauseAt` lists offsets into the file where
 * the generator stops and awaits `onPause` before sending more, so a test can look at the receiver
 * while no bytes are in flight.
 */
export function streamingMultipart(
  fields: Record<string, string>,
  fileBytes: number,
  pauses: { at: number[]; onPause: (sent: number) => Promise<void> | void } = { at: [], onPause: () => {} },
) {
  const boundary = `----vps-test-${randomBytes(8).toString('hex')}`;
  const hash = createHash('sha256');
  const block = randomBytes(1024 * 1024);
  const head = mp4Bytes(64);
  let sha256Hex: string | undefined;
  async function* generate(): AsyncGenerator<Buffer> {
    let preamble = '';
    for (const [name, value] of Object.entries(fields)) {
      preamble += `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    }
    preamble += `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="large.mp4"\r\nContent-Type: video/mp4\r\n\r\n`;
    yield Buffer.from(preamble);
    let sent = 0;
    const pending = [...pauses.at].sort((a, b) => a - b);
    while (sent < fileBytes) {
      while (pending.length > 0 && sent >= pending[0]!) {
        pending.shift();
        await pauses.onPause(sent);
      }
      let chunk = sent === 0 ? Buffer.concat([head, block.subarray(head.length)]) : block;
      if (chunk.length > fileBytes - sent) chunk = chunk.subarray(0, fileBytes - sent);
      hash.update(chunk);
      sent += chunk.length;
      yield chunk;
    }
    sha256Hex = hash.digest('hex');
    yield Buffer.from(`\r\n--${boundary}--\r\n`);
  }
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    body: Readable.from(generate(), { objectMode: false }),
    /** Known once the body has been sent. */
    sha256: () => sha256Hex,
  };
}

/** Sends a streamed body with undici; the answer's envelope as it came. */
export async function postStream<T = Record<string, unknown>>(
  url: string,
  key: string,
  body: Readable,
  contentType: string,
): Promise<Envelope<T>> {
  const res = await request(url, {
    method: 'POST',
    body,
    headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
    bodyTimeout: 120_000,
    headersTimeout: 120_000,
  });
  const text = await res.body.text();
  return {
    status: res.statusCode,
    headers: new Headers(res.headers as Record<string, string>),
    body: JSON.parse(text) as Envelope<T>['body'],
  };
}

export interface SourceServer {
  url: string;
  /** The bytes served at /video.mp4 and /redirect. */
  video: Buffer;
  /** Requests per path. */
  hits: Map<string, number>;
  close(): Promise<void>;
}

/**
 * /video.mp4, /redirect (→ /video.mp4), /redirects/<n> (a chain of n), /missing (404),
 * /flaky (503), /text.txt (not a video), /huge (an endless stream without Content-Length),
 * /declared-huge (a Content-Length far beyond any cap), /slow?ms=<n> (the video, its headers at
 * once and its body after n ms), /slow-missing?ms=<n> (a 404 after n ms).
 */
export async function startSourceServer(): Promise<SourceServer> {
  const video = mp4Bytes(200 * 1024);
  const hits = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const path = req.url ?? '';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const chain = /^\/redirects\/(\d+)$/.exec(path);
    const slow = /^\/slow\?ms=(\d+)$/.exec(path);
    const slowMissing = /^\/slow-missing\?ms=(\d+)$/.exec(path);
    if (path === '/video.mp4') res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': video.length }).end(video);
    else if (path === '/redirect') res.writeHead(302, { location: '/video.mp4' }).end();
    else if (chain) res.writeHead(302, { location: Number(chain[1]) > 1 ? `/redirects/${Number(chain[1]) - 1}` : '/video.mp4' }).end();
    else if (slow) {
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': video.length }).flushHeaders();
      setTimeout(() => res.end(video), Number(slow[1]));
    } else if (slowMissing) setTimeout(() => res.writeHead(404).end('no such file'), Number(slowMissing[1]));
    else if (path === '/flaky') res.writeHead(503).end('try later');
    else if (path === '/text.txt') res.writeHead(200, { 'content-type': 'text/plain' }).end('this is not a video, only words');
    else if (path === '/declared-huge') res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(10 * 1024 ** 3) }).end();
    else if (path === '/huge') {
      res.writeHead(200, { 'content-type': 'video/mp4' });
      const chunk = mp4Bytes(64 * 1024);
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
      };
      res.on('drain', pump);
      pump();
    } else res.writeHead(404).end('no such file');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    video,
    hits,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * What the stack's store holds under the staging prefix, where an upload whose target fields come
 * after its file waits for them: empty once every upload has been bound or refused.
 */
export async function stagedUploads(stack: Stack): Promise<string[]> {
  if (stack.media instanceof FolderMediaStore) return readdir(path.join(stack.media.root, 'staging')).catch(() => []);
  const store = stack.media as S3MediaStore;
  const listed = await store.client.send(
    new ListObjectsV2Command({ Bucket: stack.mediaEnv.MEDIA_S3_BUCKET, Prefix: `${stack.mediaEnv.MEDIA_S3_PREFIX ?? ''}staging/` }),
  );
  return (listed.Contents ?? []).map((o) => o.Key!);
}
