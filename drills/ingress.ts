/**
 * The load balancer in front of the gateways, for the platform's webhooks only: the platform pushes
 * to one callback URL, and in production that URL is a balancer over every gateway. Requests go
 * round-robin; a gateway that refuses the connection (killed, restarting) is skipped for the next
 * one, as a balancer's passive health check does. Answers are passed back as they came, so the
 * platform's own retries still see a gateway's 5xx. Loopback only.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

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
              signal: AbortSignal.timeout(15_000),
            });
          } catch {
            // Connection refused or reset: this gateway is down; the next one gets the request.
            continue;
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
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
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
