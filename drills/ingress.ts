/**
 * The load balancer in front of the gateways, for the platform's webhooks only: the platform pushes
 * to one callback URL, and in production that URL is a balancer over every gateway. Requests go
 * round-robin; a gateway that refuses the connection (killed, restarting) is skipped for the next
 * one, as a balancer's passive health check does. Answers are passed back as they came, so the
 * platform's own retries still see a gateway's 5xx. Loopback only.
 *
 * A request a gateway received is never sent to another: like a production balancer with a POST,
 * a gateway that answers too slowly gets 504 back to the platform, whose own retry follows. Sending
 * it on would double the load exactly when the gateways are slowest (it did, in the drills).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { LISTEN_BACKLOG } from '../core/net/listen-backlog';

/** As long as the platform itself waits for an answer (the emulator's push timeout). */
const GATEWAY_TIMEOUT_MS = 10_000;

function connectionRefused(err: unknown): boolean {
  const cause = (err as { cause?: { code?: string } }).cause;
  return cause?.code === 'ECONNREFUSED';
}

export interface Ingress {
  url: string;
  /** Requests that reached no gateway at all (answered 502). */
  readonly unrouted: number;
  close(): Promise<void>;
}

export async function startIngress(targets: () => string[]): Promise<Ingress> {
  let next = 0;
  let unrouted = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const list = targets();
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) {
          if (typeof v === 'string' && !['host', 'connection', 'content-length', 'transfer-encoding'].includes(k)) headers[k] = v;
        }
        const first = next++;
        for (let i = 0; i < list.length; i++) {
          const target = list[(first + i) % list.length]!;
          let answer: Response;
          try {
            answer = await fetch(`${target}${req.url ?? '/'}`, {
              method: req.method,
              headers,
              ...(req.method === 'GET' || req.method === 'HEAD' ? {} : { body }),
              signal: AbortSignal.timeout(GATEWAY_TIMEOUT_MS),
            });
          } catch (err) {
            // Refused: this gateway is down, and the next one gets the request.
            if (connectionRefused(err)) continue;
            res.writeHead(504, { 'content-type': 'application/json' }).end('{"error":"the gateway did not answer in time"}');
            return;
          }
          const text = Buffer.from(await answer.arrayBuffer());
          res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(text);
          return;
        }
        unrouted += 1;
        res.writeHead(502, { 'content-type': 'application/json' }).end('{"error":"no gateway answered"}');
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: LISTEN_BACKLOG }, resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    get unrouted() {
      return unrouted;
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
