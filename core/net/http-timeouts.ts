/**
 * How long our HTTP servers wait for a client, so that no connection is held open by one that
 * stops sending. Node's own timers cover the headers and the pause between kept-alive requests.
 * The body needs more than Node offers: its `requestTimeout` is one deadline for the whole request,
 * which would cut an upload of a gigabyte that is still arriving. So the body is watched here: on
 * every route, a body that pauses longer than `bodyIdleMs` is cut off, however long it has been
 * arriving; on routes other than uploads, a body must also be complete within `requestMs`.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyRequest, FastifyServerOptions } from 'fastify';
import type { Env } from '../../config/config';
import { NOSNIFF } from './security-headers';

export interface HttpTimeouts {
  /** Time a client has to send a request's headers, from its first byte (or from the connection). */
  headersMs: number;
  /** How long a kept-alive connection waits, idle, for its next request. */
  keepAliveMs: number;
  /** Longest pause in a request body, uploads included. */
  bodyIdleMs: number;
  /** Time a body has to arrive whole, once the headers are in, on routes that are not uploads. */
  requestMs: number;
}

/** The configuration's defaults, for servers built without a configuration (tests, benchmarks). */
export const DEFAULT_HTTP_TIMEOUTS: HttpTimeouts = { headersMs: 20_000, keepAliveMs: 72_000, bodyIdleMs: 30_000, requestMs: 60_000 };

export function httpTimeoutsFromConfig(env: Env): HttpTimeouts {
  return {
    headersMs: env.HTTP_HEADERS_TIMEOUT_MS,
    keepAliveMs: env.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    bodyIdleMs: env.HTTP_BODY_IDLE_TIMEOUT_MS,
    requestMs: env.HTTP_REQUEST_TIMEOUT_MS,
  };
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes an upload: its body may arrive for as long as it keeps arriving. */
    upload?: boolean;
  }
}

/**
 * How often the servers look for a timed-out request: Node checks headers on this interval (its
 * default, 30 s, would let a 20 s limit run to 50 s), and the body watch below on the same one.
 * A tenth of the shortest limit keeps the overshoot at 10 %; a check is a walk over the requests
 * in flight, so once a second is plenty for limits of seconds.
 */
export function checkIntervalMs(t: HttpTimeouts): number {
  return Math.max(20, Math.min(1_000, Math.floor(Math.min(t.headersMs, t.bodyIdleMs, t.requestMs) / 10)));
}

/** Fastify's server options for these timeouts; Node's whole-request deadline stays off (see above). */
export function serverTimeoutOptions(t: HttpTimeouts): Pick<
  FastifyServerOptions,
  'keepAliveTimeout' | 'requestTimeout' | 'connectionTimeout'
> & {
  http: { headersTimeout: number; connectionsCheckingInterval: number };
} {
  return {
    keepAliveTimeout: t.keepAliveMs,
    requestTimeout: 0,
    connectionTimeout: 0,
    http: { headersTimeout: t.headersMs, connectionsCheckingInterval: checkIntervalMs(t) },
  };
}

/**
 * The answer to a request cut off for its slowness, written straight to the socket, since the
 * route is still waiting for the body and has not answered: HTTP 408 with the envelope (2001, the
 * client's doing), and the connection closed.
 */
export function timeoutAnswer(message: string, opts: { head?: boolean } = {}): string {
  const body = JSON.stringify({ code: 2001, message, data: {} });
  return [
    'HTTP/1.1 408 Request Timeout',
    'Connection: close',
    'Content-Type: application/json',
    `${NOSNIFF[0]}: ${NOSNIFF[1]}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    '',
    opts.head ? '' : body,
  ].join('\r\n');
}

/** After a timeout answer, how long the client has to read it before the connection is dropped. */
const CLOSE_GRACE_MS = 1_000;

interface Watched {
  req: FastifyRequest;
  res: ServerResponse;
  socket: Socket;
  started: number;
  lastProgress: number;
  bytesRead: number;
  deadlineMs: number | undefined;
}

/**
 * Watches every request whose body is still arriving. A body makes progress when the socket read
 * something since the last look, or when bytes wait unread on our side: the route is slower than
 * the client (its store is busy, its parser full), and Node stops reading the socket until the
 * route catches up, so a client held back by our own backpressure is never counted as idle.
 */
export function watchRequestBodies(app: FastifyInstance, t: HttpTimeouts): void {
  const watched = new Set<Watched>();
  let timer: NodeJS.Timeout | undefined;

  const cut = (w: Watched, message: string) => {
    watched.delete(w);
    const { req, socket } = w;
    req.log.info({ route: req.routeOptions.url, reason: message }, 'request cut off: the client was too slow');
    if (socket.destroyed) return;
    // The route answered early (a refusal while the body still came): the answer is out; only
    // the rest of the body is not coming.
    if (w.res.headersSent) {
      socket.destroy();
      return;
    }
    const grace = setTimeout(() => socket.destroy(), CLOSE_GRACE_MS);
    grace.unref();
    socket.end(timeoutAnswer(message, { head: req.method === 'HEAD' }), () => {
      clearTimeout(grace);
      socket.destroy();
    });
  };

  const check = () => {
    const now = performance.now();
    for (const w of watched) {
      const raw = w.req.raw;
      if (raw.complete || w.socket.destroyed) {
        watched.delete(w);
        continue;
      }
      if (w.socket.bytesRead !== w.bytesRead || raw.readableLength > 0) {
        w.bytesRead = w.socket.bytesRead;
        w.lastProgress = now;
      }
      if (w.deadlineMs !== undefined && now - w.started >= w.deadlineMs) {
        cut(w, `request: the body did not arrive within ${durationText(w.deadlineMs)}; the connection is closed`);
      } else if (now - w.lastProgress >= t.bodyIdleMs) {
        cut(w, `request: no byte of the body arrived for ${durationText(t.bodyIdleMs)}; the connection is closed`);
      }
    }
    if (watched.size === 0) {
      clearInterval(timer);
      timer = undefined;
    }
  };

  app.addHook('onRequest', async (req, reply) => {
    const raw = req.raw;
    // A request without a body, or whose body came with its headers, is complete by now.
    if (raw.complete) return;
    const now = performance.now();
    const w: Watched = {
      req,
      res: reply.raw,
      socket: raw.socket,
      started: now,
      lastProgress: now,
      bytesRead: raw.socket.bytesRead,
      deadlineMs: req.routeOptions.config?.upload ? undefined : t.requestMs,
    };
    watched.add(w);
    raw.once('close', () => watched.delete(w));
    if (!timer) {
      timer = setInterval(check, checkIntervalMs(t));
      timer.unref();
    }
  });
  app.addHook('onClose', async () => {
    clearInterval(timer);
    watched.clear();
  });
}

/** `30 s`, or `1500 ms` where seconds would round. */
export function durationText(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
