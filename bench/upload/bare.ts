/**
 * The baselines of bench/upload, as a process of their own (so its memory is read from outside, as
 * the service's is): a bare `node:http` server with nothing between the socket and the store.
 *
 *   POST /upload/<name>           the raw request body (multipart framing and all, unparsed and
 *                                 unhashed) into the store under bare/<name>
 *   POST /fetch/<name>?url=<url>  a GET of url with undici (the service's HTTP client for sources),
 *                                 its body into the store under bare/<name>
 *
 * Each answers 200 once the object is complete (the file closed, the multipart upload finished).
 * The store is BARE_STORE=folder (BARE_DIR, a plain write stream buffering as much as the service's
 * folder store does; with `?buffer=node` Node's default 16 KiB; with `?buffer=store` the service's
 * own folder store, which also sizes the file, keeps its head and hashes it on its thread, with
 * nothing else of the service around it) or BARE_STORE=s3 (an
 * `@aws-sdk/lib-storage` Upload with the part size and parts in flight given, through a client set
 * up as the service's: no per-part checksums). It prints `listening <port>` once it listens.
 */
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { request } from 'undici';
import { WRITE_BUFFER_BYTES } from '../../core/media/folder-sink';
import { FolderMediaStore } from '../../core/media/folder-store';

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

/** How a folder transfer writes: see the header. */
type Buffering = 'store' | 'node' | 'folder';
type Sink = (key: string, body: Readable, buffering: Buffering) => Promise<void>;

function folderSink(root: string): Sink {
  const store = new FolderMediaStore(root, undefined, { direct: process.env.BARE_FOLDER_WRITES !== 'page-cache' });
  return async (key, body, buffering) => {
    if (buffering === 'store') return void (await store.write(key, body, { maxBytes: Number.MAX_SAFE_INTEGER }));
    const file = path.join(root, key);
    await mkdir(path.dirname(file), { recursive: true });
    await pipeline(body, createWriteStream(file, buffering === 'node' ? {} : { highWaterMark: WRITE_BUFFER_BYTES }));
  };
}

function s3Sink(): Sink {
  const client = new S3Client({
    endpoint: required('BARE_S3_ENDPOINT'),
    region: required('BARE_S3_REGION'),
    forcePathStyle: true,
    credentials: { accessKeyId: required('BARE_S3_ACCESS_KEY_ID'), secretAccessKey: required('BARE_S3_SECRET_ACCESS_KEY') },
    // As the service's client (core/media/s3-store.ts): the SDK's default would add a CRC32 of
    // every part, work the service does not do, and the baseline would be slower for it.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const bucket = required('BARE_S3_BUCKET');
  const prefix = process.env.BARE_S3_PREFIX ?? '';
  const partSize = Number(required('BARE_S3_PART_SIZE_BYTES'));
  const queueSize = Number(required('BARE_S3_PARTS_IN_FLIGHT'));
  return async (key, body) => {
    await new Upload({
      client,
      params: { Bucket: bucket, Key: `${prefix}${key}`, Body: body },
      partSize,
      queueSize,
      leavePartsOnError: false,
    }).done();
  };
}

const sink = process.env.BARE_STORE === 's3' ? s3Sink() : folderSink(required('BARE_DIR'));

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://bare');
  const route = /^\/(upload|fetch)\/([a-z0-9_-]+)$/.exec(url.pathname);
  if (req.method !== 'POST' || !route) return void res.writeHead(404).end();
  const key = `bare/${route[2]}`;
  const work = async () => {
    const asked = url.searchParams.get('buffer');
    const buffering: Buffering = asked === 'node' || asked === 'store' ? asked : 'folder';
    if (route[1] === 'upload') return sink(key, req, buffering);
    const source = await request(url.searchParams.get('url') ?? '', { method: 'GET', headersTimeout: 60_000, bodyTimeout: 60_000 });
    if (source.statusCode !== 200) throw new Error(`the source answered HTTP ${source.statusCode}`);
    return sink(key, source.body, buffering);
  };
  work().then(
    () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'),
    (err: unknown) => {
      console.error(`bare ${url.pathname}:`, err);
      res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err));
    },
  );
});
// No request or header timeout: a 1 GiB body on a busy machine may take a while.
server.requestTimeout = 0;
server.listen(0, '127.0.0.1', () => console.log(`listening ${(server.address() as AddressInfo).port}`));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
