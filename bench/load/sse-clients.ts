/**
 * Many Server-Sent Event clients on raw node:http sockets: the least client-side work per frame, so
 * 1,000 streams in the bench process measure the servers rather than the clients. Each client
 * notes, per event id, when the chunk carrying it arrived.
 */
import http from 'node:http';
import { inBatches } from '../harness';

export interface StreamClients {
  /** Per stream: event id → arrival time (ms). */
  arrivals: Array<Map<string, number>>;
  /** Events received over every stream. */
  received(): number;
  /** Streams that ended or failed before close(). */
  broken(): number;
  close(): void;
}

/** How long one stream may take to answer with its head. */
const OPEN_TIMEOUT_MS = 30_000;

/**
 * Opens `count` streams of `origin`/v1/events/stream, stream i with `keys[i % keys.length]`,
 * `concurrency` at a time; resolves once every stream has its response head (it is then live:
 * both servers subscribe before they answer).
 */
export async function openStreams(origin: string, keys: string[], count: number, concurrency: number): Promise<StreamClients> {
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const url = new URL('/v1/events/stream', origin);
  const requests: http.ClientRequest[] = [];
  const arrivals = Array.from({ length: count }, () => new Map<string, number>());
  let received = 0;
  let broken = 0;
  let closing = false;

  const open = (index: number) =>
    new Promise<void>((resolve, reject) => {
      const req = http.request(url, {
        agent,
        headers: { authorization: `Bearer ${keys[index % keys.length]!}`, accept: 'text/event-stream' },
      });
      requests.push(req);
      const timer = setTimeout(() => req.destroy(new Error(`stream ${index} did not open within ${OPEN_TIMEOUT_MS} ms`)), OPEN_TIMEOUT_MS);
      req.once('error', (err) => {
        clearTimeout(timer);
        if (!closing) broken += 1;
        reject(err);
      });
      req.once('response', (res) => {
        clearTimeout(timer);
        if (res.statusCode !== 200) {
          res.resume();
          reject(new Error(`stream ${index}: HTTP ${res.statusCode}`));
          return;
        }
        res.setEncoding('utf8');
        let buffer = '';
        const seen = arrivals[index]!;
        res.on('data', (chunk: string) => {
          const at = Date.now();
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const frame = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            // Event frames only: `retry:`, heartbeats and the bare resume id carry no data line.
            if (!frame.startsWith('id: ') || !frame.includes('\ndata: ')) continue;
            const id = frame.slice(4, frame.indexOf('\n'));
            if (!seen.has(id)) {
              seen.set(id, at);
              received += 1;
            }
          }
        });
        res.once('close', () => {
          if (!closing) broken += 1;
        });
        resolve();
      });
      req.end();
    });

  try {
    await inBatches([...Array(count).keys()], concurrency, open);
  } catch (err) {
    closing = true;
    for (const req of requests) req.destroy();
    agent.destroy();
    throw err;
  }
  return {
    arrivals,
    received: () => received,
    broken: () => broken,
    close() {
      closing = true;
      for (const req of requests) req.destroy();
      agent.destroy();
    },
  };
}
