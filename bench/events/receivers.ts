/**
 * Loopback webhook receivers for bench/events. A healthy one answers 200 and notes when each event
 * first arrived (by the push's event-id header, so duplicates of an at-least-once delivery do not
 * count twice); a failing one answers 500; a hanging one never answers, until `release()` drops the
 * connections it holds (so the run can end without waiting for the service's attempt timeouts).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';

export type ReceiverBehaviour = 'ok' | 'fail' | 'hang';

export const EVENT_ID_HEADER = 'x-service-event-id';

export interface Receiver {
  behaviour: ReceiverBehaviour;
  url: string;
  /** First arrival (ms since the epoch) of each event id. */
  arrivals: Map<string, number>;
  /** Requests received, duplicates included. */
  requests(): number;
  reset(): void;
  /** Drops the requests a hanging receiver holds. */
  release(): void;
  close(): Promise<void>;
}

export async function startReceiver(behaviour: ReceiverBehaviour): Promise<Receiver> {
  const arrivals = new Map<string, number>();
  const held = new Set<Socket>();
  let requests = 0;
  const server = http.createServer((req, res) => {
    const at = Date.now();
    req.resume();
    req.on('end', () => {
      requests += 1;
      const id = req.headers[EVENT_ID_HEADER];
      if (typeof id === 'string' && !arrivals.has(id)) arrivals.set(id, at);
      if (behaviour === 'ok') res.writeHead(200).end();
      else if (behaviour === 'fail') res.writeHead(500).end('bench: failing on purpose');
      else held.add(req.socket);
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const release = () => {
    for (const socket of held) socket.destroy();
    held.clear();
  };
  return {
    behaviour,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    arrivals,
    requests: () => requests,
    reset() {
      arrivals.clear();
      requests = 0;
    },
    release,
    async close() {
      release();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Receivers that all answer 200: the sum of their requests. */
export function totalRequests(receivers: readonly Receiver[]): number {
  return receivers.reduce((sum, r) => sum + r.requests(), 0);
}
