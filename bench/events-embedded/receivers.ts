/**
 * Loopback receivers that answer 200 and note when each comment first arrived, found by its text
 * (each injected comment's text is unique). Two kinds: a customer's webhook endpoint (the service's
 * event body: `data.text`) and a bare stand-in for the service's platform receiver (the official
 * envelope: `content` is JSON text holding `text`), used by the baseline.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readEventStream } from '../harness';

export type BodyKind = 'service-event' | 'official-push';

export interface Receiver {
  name: string;
  url: string;
  /** First arrival (ms since the epoch) of each comment text. */
  arrivals: Map<string, number>;
  /** The service's received_at of each comment's event (service-event only). */
  receivedAt: Map<string, number>;
  requests(): number;
  duplicates(): number;
  close(): Promise<void>;
}

export function textOf(kind: BodyKind, raw: string): { text?: string; receivedAt?: number } {
  try {
    const body = JSON.parse(raw) as Record<string, unknown>;
    if (kind === 'service-event') {
      const data = body.data as Record<string, unknown> | undefined;
      const receivedAt = typeof body.received_at === 'string' ? Date.parse(body.received_at) : undefined;
      return { text: typeof data?.text === 'string' ? data.text : undefined, receivedAt };
    }
    const content = JSON.parse(String(body.content)) as Record<string, unknown>;
    return { text: typeof content.text === 'string' ? content.text : undefined };
  } catch {
    return {};
  }
}

/**
 * How a receiver answers: 200 ('ok'), 500 at once ('fail'), or never ('hang': the request is held
 * until the receiver closes, so every attempt runs into the service's attempt timeout).
 */
export type Behaviour = 'ok' | 'fail' | 'hang';

export async function startReceiver(name: string, kind: BodyKind, behaviour: Behaviour = 'ok'): Promise<Receiver> {
  const arrivals = new Map<string, number>();
  const receivedAt = new Map<string, number>();
  let requests = 0;
  let duplicates = 0;
  const server = http.createServer((req, res) => {
    const at = Date.now();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests += 1;
      const parsed = textOf(kind, Buffer.concat(chunks).toString('utf8'));
      if (parsed.text !== undefined) {
        if (arrivals.has(parsed.text)) duplicates += 1;
        else arrivals.set(parsed.text, at);
        if (parsed.receivedAt !== undefined) receivedAt.set(parsed.text, parsed.receivedAt);
      }
      if (behaviour === 'hang') return;
      res.writeHead(behaviour === 'ok' ? 200 : 500, { 'content-type': 'application/json' }).end('{"code":0}');
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    name,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    arrivals,
    receivedAt,
    requests: () => requests,
    duplicates: () => duplicates,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * An SSE client of GET /v1/events/stream noting each comment's first arrival by its text. Resolves
 * once the stream answered; `close()` aborts it.
 */
export async function openEventStream(
  gateway: string,
  apiKey: string,
): Promise<{ arrivals: Map<string, number>; events(): number; close(): void }> {
  const arrivals = new Map<string, number>();
  let events = 0;
  const abort = new AbortController();
  await readEventStream(
    gateway,
    apiKey,
    (event, at) => {
      events += 1;
      const text = event.data.text;
      if (typeof text === 'string' && !arrivals.has(text)) arrivals.set(text, at);
    },
    [],
    abort.signal,
  );
  // readEventStream reports a failed stream on stderr; a stream that stopped shows as missing arrivals.
  return { arrivals, events: () => events, close: () => abort.abort() };
}
