/**
 * A remote source on loopback for fetch tests that interrupt a transfer: one MP4-headed file at
 * /video.mp4, sent at a set pace so a test can act midway, with a strong ETag and Last-Modified,
 * Range and If-Range answered as RFC 9110 says (or ignored, as by a source without range support),
 * and every byte it writes counted.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mp4Bytes } from './videos';

export interface RangeSource {
  url: string;
  file: Buffer;
  sha256: string;
  /** Bytes written to responses so far, over all requests (a killed client's unread ones included). */
  sent(): number;
  /** Each GET as it arrived. */
  requests: Array<{ range?: string; ifRange?: string; status: number }>;
  close(): Promise<void>;
}

export async function startRangeSource(opts: { bytes: number; bytesPerSecond: number; ranges: boolean }): Promise<RangeSource> {
  const file = mp4Bytes(opts.bytes);
  const sha256 = createHash('sha256').update(file).digest('hex');
  const etag = `"${sha256.slice(0, 16)}"`;
  const lastModified = new Date(Date.now() - 60_000).toUTCString();
  const requests: RangeSource['requests'] = [];
  let sent = 0;
  const server = http.createServer((req, res) => {
    const range = req.headers.range;
    const ifRange = typeof req.headers['if-range'] === 'string' ? req.headers['if-range'] : undefined;
    const asked = opts.ranges && range ? /^bytes=(\d+)-$/.exec(range) : null;
    const start = asked && (ifRange === undefined || ifRange === etag || ifRange === lastModified) ? Number(asked[1]) : 0;
    const headers: http.OutgoingHttpHeaders = {
      'content-type': 'video/mp4',
      etag,
      'last-modified': lastModified,
      ...(opts.ranges ? { 'accept-ranges': 'bytes' } : {}),
    };
    if (start >= file.length) {
      requests.push({ range, ifRange, status: 416 });
      res.writeHead(416, { 'content-range': `bytes */${file.length}` }).end();
      return;
    }
    const status = start > 0 ? 206 : 200;
    requests.push({ range, ifRange, status });
    res.writeHead(status, {
      ...headers,
      'content-length': file.length - start,
      ...(status === 206 ? { 'content-range': `bytes ${start}-${file.length - 1}/${file.length}` } : {}),
    });
    void pace(res, file.subarray(start), opts.bytesPerSecond, (n) => (sent += n));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/video.mp4`,
    file,
    sha256,
    sent: () => sent,
    requests,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** Writes the body in slices, one every few milliseconds, until it is all out or the client is gone. */
async function pace(res: http.ServerResponse, body: Buffer, bytesPerSecond: number, onSent: (n: number) => void): Promise<void> {
  const sliceMs = 20;
  const slice = Math.max(1, Math.round((bytesPerSecond * sliceMs) / 1000));
  for (let at = 0; at < body.length; at += slice) {
    if (res.destroyed) return;
    const chunk = body.subarray(at, at + slice);
    onSent(chunk.length);
    if (!res.write(chunk)) {
      await new Promise<void>((resolve) => {
        const go = () => {
          res.off('drain', go).off('close', go);
          resolve();
        };
        res.on('drain', go).on('close', go);
      });
    }
    await new Promise((resolve) => setTimeout(resolve, sliceMs));
  }
  res.end();
}
