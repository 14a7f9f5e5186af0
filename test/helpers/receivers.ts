/**
 * Loopback HTTP servers the tests point the emulator at: a media host (what a publish downloads)
 * and a webhook receiver that records every push with its raw body and headers.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** The first bytes of an MP4 file (an ftyp box), enough for a container check. */
export const MP4_BYTES = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypisom'), Buffer.alloc(4096, 1)]);
export const JPEG_BYTES = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(2048, 2)]);

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function close(server: http.Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

export interface MediaServer {
  url: string;
  /** Paths requested so far, in order. */
  requests: string[];
  close(): Promise<void>;
}

/** Serves /video.mp4, /photo.jpg and /text.txt; everything else is 404. */
export async function startMediaServer(): Promise<MediaServer> {
  const requests: string[] = [];
  const files: Record<string, [string, Buffer]> = {
    '/video.mp4': ['video/mp4', MP4_BYTES],
    '/photo.jpg': ['image/jpeg', JPEG_BYTES],
    '/text.txt': ['text/plain', Buffer.from('not a video at all')],
  };
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    // A CDN link that sends the client elsewhere first.
    if (req.url === '/moved.mp4') {
      res.writeHead(302, { location: '/video.mp4' }).end();
      return;
    }
    const file = files[req.url ?? ''];
    if (!file) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': file[0], 'content-length': file[1].length }).end(file[1]);
  });
  const url = await listen(server);
  return { url, requests, close: () => close(server) };
}

export interface RecordedPush {
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface WebhookReceiver {
  url: string;
  pushes: RecordedPush[];
  /** Status to answer with; 200 by default. A list is answered in turn, its last entry thereafter. */
  respondWith(status: number | number[]): void;
  /** Answer each push only after this long (default 0). */
  delayEach(ms: number): void;
  /** The most pushes that were in progress at the same time. */
  readonly maxConcurrent: number;
  /** Resolves once `count` pushes matching `filter` have arrived. */
  waitFor(count: number, filter?: (p: RecordedPush) => boolean, timeoutMs?: number): Promise<RecordedPush[]>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const pushes: RecordedPush[] = [];
  let statuses = [200];
  let delayMs = 0;
  let inFlight = 0;
  let maxConcurrent = 0;
  const waiters = new Set<() => void>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    inFlight += 1;
    maxConcurrent = Math.max(maxConcurrent, inFlight);
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      setTimeout(() => {
        inFlight -= 1;
        pushes.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        const status = statuses.length > 1 ? statuses.shift()! : statuses[0]!;
        res.writeHead(status).end();
        for (const wake of waiters) wake();
      }, delayMs);
    });
  });
  const url = await listen(server);
  return {
    url,
    pushes,
    delayEach(ms) {
      delayMs = ms;
    },
    get maxConcurrent() {
      return maxConcurrent;
    },
    respondWith(s) {
      statuses = Array.isArray(s) ? [...s] : [s];
    },
    waitFor(count, filter = () => true, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const matching = pushes.filter(filter);
          if (matching.length >= count) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(matching);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`expected ${count} pushes, got ${pushes.filter(filter).length}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => close(server),
  };
}

export interface ReplyLog {
  /** Bytes of the body the receiver handed to the socket before the answer ended. */
  sent: number;
  /** True when the client closed the connection before the whole body was sent. */
  cutOff: boolean;
  startedAt: number;
  endedAt: number;
}

export interface ReplyingReceiver {
  url: string;
  /** One entry per answer that has ended (sent whole, or cut off by the client), in order. */
  replies: ReplyLog[];
  /** Resolves once `count` answers have ended. */
  waitForReplies(count: number, timeoutMs?: number): Promise<ReplyLog[]>;
  close(): Promise<void>;
}

/**
 * A receiver that answers every push with `status` and a long body: `chunk` again and again,
 * `totalBytes` in all (or without end), as fast as the socket takes it or one chunk every
 * `everyMs`. It counts what it managed to send before the client closed the connection, which
 * tells how much of an answer the client read far more steadily than the client's memory does.
 */
export async function startReplyingReceiver(opts: {
  status: number;
  chunk: Buffer;
  totalBytes: number | 'endless';
  everyMs?: number;
}): Promise<ReplyingReceiver> {
  const replies: ReplyLog[] = [];
  const waiters = new Set<() => void>();
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const log = { sent: 0, cutOff: false, startedAt: Date.now(), endedAt: 0 };
      let timer: NodeJS.Timeout | undefined;
      const ended = () => {
        if (log.endedAt) return;
        clearTimeout(timer);
        log.endedAt = Date.now();
        replies.push(log);
        for (const wake of waiters) wake();
      };
      res.on('close', () => {
        log.cutOff = !res.writableFinished;
        ended();
      });
      res.writeHead(opts.status, { 'content-type': 'text/plain; charset=utf-8' });
      const left = () => (opts.totalBytes === 'endless' ? Infinity : opts.totalBytes - log.sent);
      const more = () => {
        while (!res.destroyed && left() > 0) {
          const piece = left() < opts.chunk.length ? opts.chunk.subarray(0, left()) : opts.chunk;
          log.sent += piece.length;
          const flowing = res.write(piece);
          if (opts.everyMs) {
            timer = setTimeout(more, opts.everyMs);
            return;
          }
          if (!flowing) {
            res.once('drain', more);
            return;
          }
        }
        if (!res.destroyed) res.end();
      };
      more();
    });
  });
  const url = await listen(server);
  return {
    url,
    replies,
    waitForReplies(count, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (replies.length < count) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(replies.slice(0, count));
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`expected ${count} answers to end, got ${replies.length}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => close(server),
  };
}

/** Receivers a test file starts as it goes, all closed together in its afterAll. */
export function receiverPool(): { start(): Promise<WebhookReceiver>; closeAll(): Promise<void> } {
  const started: WebhookReceiver[] = [];
  return {
    async start() {
      const r = await startWebhookReceiver();
      started.push(r);
      return r;
    },
    closeAll: async () => {
      await Promise.all(started.splice(0).map((r) => r.close()));
    },
  };
}

/** Polls `read` until `done` holds, for state that changes on the emulator's or a workflow's clock. */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not reached in ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
