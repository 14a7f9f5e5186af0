/**
 * GET /v1/events/stream: the caller's events as Server-Sent Events, one EventService.WatchEvents
 * call per connection. Every refusal (key, types, resume id) is known before the first message
 * from core, so it is answered with the usual envelope and HTTP status; only then is the stream
 * committed. A client that disconnects ends the core call, and a closing gateway ends every stream
 * so clients reconnect, with Last-Event-ID, to another instance.
 *
 * Resume: the `Last-Event-ID` header, as EventSource sends it on reconnect. Clients that cannot set
 * headers may pass `lastEventId` in the query instead; the header wins when both are present,
 * because a browser keeps the original URL (and its query) while the header tracks the newest event.
 */
import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { Type, type Static } from '@sinclair/typebox';
import { ConnectError, type Transport } from '@connectrpc/connect';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { EventService, type WatchEventsResponse } from '../../../gen/vps/event/v1/event_pb';
import { Access } from '../../../gen/vps/options/v1/options_pb';
import { ApiError, renderConnectError } from '../../../core/errors';
import { bodyFromMessage } from '../../../core/events/present';
import { RATE_LIMIT_LIMIT_HEADER, RATE_LIMIT_REMAINING_HEADER } from '../../../core/interceptors/access.interceptor';
import { authorizeCaller, forwardedHeaders, nulField, single } from '../../rpc-route';
import type { Metrics } from '../../../core/observability/metrics';

/** Sent first: how long an EventSource waits before reconnecting after the stream ends. */
export const SSE_RETRY_MS = 3_000;

const EventStreamQuery = Type.Object(
  {
    types: Type.Optional(
      Type.Array(Type.String({ maxLength: 1_000 }), {
        maxItems: 20,
        description: 'Comma-separated subscription patterns: "*", "vplat.*" or exact types; all events when absent',
      }),
    ),
    lastEventId: Type.Optional(
      Type.String({
        maxLength: 200,
        description:
          'Resume after this event, for clients that cannot send the Last-Event-ID header; "start" (the id a stream opened before the first event begins with) replays the whole log',
      }),
    ),
  },
  { additionalProperties: false },
);
type EventStreamQuery = Static<typeof EventStreamQuery>;

/** After a gateway closes, clients reconnect between 250 ms and 1.25 s later. */
const RECONNECT_MIN_MS = 250;
const RECONNECT_JITTER_MS = 1_000;

/** How long a closing gateway waits for its streams' responses to end before cutting them off. */
const CLOSE_GRACE_MS = 2_000;

export function registerEventStreamRoute(app: FastifyInstance, opts: { transport: Transport; metrics: Metrics }): void {
  const { transport } = opts;
  /** Every response of this route still open, with the core call it reads. */
  const open = new Map<ServerResponse, AbortController>();
  let closing = false;
  // Ends the streams before the server closes, and waits for their responses to end: Node closes
  // the connections that are idle at that moment only, so one still streaming would keep it open.
  app.addHook('preClose', async () => {
    closing = true;
    const ended = [...open].map(([res, call]) => {
      call.abort();
      return new Promise<void>((resolve) => res.once('close', () => resolve()));
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(ended), new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_GRACE_MS)))]);
    clearTimeout(timer);
    // A client that stopped reading can hold its response open; it reconnects all the same.
    for (const res of open.keys()) res.destroy();
  });

  app.route<{ Querystring: EventStreamQuery }>({
    method: 'GET',
    url: '/events/stream',
    // A HEAD would open a stream that never ends.
    exposeHeadRoute: false,
    schema: {
      summary: 'Stream events as Server-Sent Events; resume with Last-Event-ID',
      querystring: EventStreamQuery,
      response: {
        200: {
          description:
            'text/event-stream: `id`, `event` (the type) and `data` (the event object) per event; `: heartbeat` comments while idle',
          content: { 'text/event-stream': { schema: Type.String() } },
        },
      },
    },
    config: { access: Access.READ },
    attachValidation: true,
    handler: async (req, reply) => {
      const invalid = req.validationError?.message ?? nulField(req);
      if (invalid) {
        await authorizeCaller(transport, req, Access.READ);
        throw new ApiError(2001, invalid);
      }
      const query = req.query;
      const types = (query.types ?? [])
        .flatMap((t) => t.split(','))
        .map((t) => t.trim())
        .filter((t) => t !== '');
      const header = req.headers['last-event-id'];
      const fromHeader = typeof header === 'string' && header.trim() !== '';
      const afterEventId = (fromHeader ? header : (query.lastEventId ?? '')).trim();

      const call = new AbortController();
      open.set(reply.raw, call);
      opts.metrics.eventStreams.inc();
      // A client that leaves ends the core call at once, even while core has nothing to send.
      reply.raw.once('close', () => {
        call.abort();
        open.delete(reply.raw);
        opts.metrics.eventStreams.dec();
      });
      const release = () => call.abort();

      let messages: AsyncIterator<WatchEventsResponse>;
      let first: IteratorResult<WatchEventsResponse>;
      try {
        const res = await transport.stream(
          EventService.method.watchEvents,
          call.signal,
          undefined,
          forwardedHeaders(req),
          single({ afterEventId, types }),
        );
        messages = res.message[Symbol.asyncIterator]();
        // Core sends a first message once the stream is live: every refusal comes before it.
        first = await messages.next();
        for (const name of [RATE_LIMIT_LIMIT_HEADER, RATE_LIMIT_REMAINING_HEADER]) {
          const value = res.header.get(name);
          if (value !== null) void reply.header(name, value);
        }
      } catch (err) {
        release();
        // A client that left while the stream was being set up is owed no answer, and its
        // cancelled call is no failure of ours.
        if (reply.raw.destroyed) {
          req.log.debug({ err }, 'client left before the event stream started');
          reply.hijack();
          return;
        }
        throw resumeRefusal(err, fromHeader ? 'Last-Event-ID' : 'lastEventId');
      }
      void reply
        .code(200)
        .header('content-type', 'text/event-stream; charset=utf-8')
        .header('cache-control', 'no-cache')
        // Tells nginx-style proxies not to hold events back in a buffer.
        .header('x-accel-buffering', 'no');
      return reply.send(Readable.from(sseFrames(first, messages, { signal: call.signal, closing: () => closing }, release, req.log)));
    },
  });
}

async function* sseFrames(
  first: IteratorResult<WatchEventsResponse>,
  messages: AsyncIterator<WatchEventsResponse>,
  ending: { signal: AbortSignal; closing: () => boolean },
  release: () => void,
  log: FastifyBaseLogger,
): AsyncGenerator<string> {
  const { signal } = ending;
  try {
    yield `retry: ${SSE_RETRY_MS}\n\n`;
    // An id without data moves the client's Last-Event-ID to where the stream starts: a client
    // that reconnects before its first event then resumes from here instead of losing the gap.
    if (!first.done && first.value.resumeId) yield `id: ${first.value.resumeId}\n\n`;
    // The first message only says the stream is live; an event in it is still sent.
    if (!first.done && first.value.event) yield eventFrame(first.value);
    let next = first.done ? first : await messages.next();
    while (!next.done) {
      yield next.value.event ? eventFrame(next.value) : ': heartbeat\n\n';
      next = await messages.next();
    }
  } catch (err) {
    // The response is committed, so the client learns by the stream ending: it reconnects with
    // Last-Event-ID and misses nothing. An abort (client gone, gateway closing) is not a failure.
    if (signal.aborted) {
      // The client left or the gateway is closing: no failure.
    } else if (err instanceof ConnectError && renderConnectError(err).code < 5000) {
      // Core ended the stream on purpose (the key was revoked): the reconnect gets the envelope.
      log.info({ code: renderConnectError(err).code }, `event stream ended by core: ${err.rawMessage}`);
    } else {
      log.error({ err }, 'event stream from core failed; ending the SSE response');
    }
  } finally {
    release();
    // Released first, so a core stream still waiting for events has already been told to stop.
    try {
      await messages.return?.();
    } catch (err) {
      // Over HTTP an aborted call may report its own cancellation here; the response is over anyway.
      log.debug({ err }, 'core event stream ended with an error after the SSE response was released');
    }
  }
  // The gateway is stopping: the client is told to come back soon, and with jitter, so that the
  // clients of one instance do not all land on the next at the same moment.
  if (ending.closing()) yield reconnectFrame();
}

/**
 * Core names the resume point by its RPC field; the caller sent a header or a query parameter, and
 * is told about what it sent.
 */
function resumeRefusal(err: unknown, sentAs: 'Last-Event-ID' | 'lastEventId'): unknown {
  if (!(err instanceof ConnectError)) return err;
  const rendered = renderConnectError(err);
  if (rendered.data.field !== 'after_event_id') return err;
  const where = sentAs === 'Last-Event-ID' ? 'the Last-Event-ID header' : 'the lastEventId parameter';
  return new ApiError(rendered.code, rendered.message.replace(/^after_event_id: /, `${where}: `), {
    data: { ...rendered.data, field: sentAs },
  });
}

/** Sent last by a closing gateway; a comment says why the stream ends, `retry` when to return. */
export function reconnectFrame(random = Math.random): string {
  const retryMs = RECONNECT_MIN_MS + Math.floor(random() * RECONNECT_JITTER_MS);
  return `: gateway closing; reconnect with Last-Event-ID\nretry: ${retryMs}\n\n`;
}

/**
 * No `event:` field: a named event reaches only listeners registered for its name, so a plain
 * EventSource `onmessage` handler would receive nothing. The type is the body's `type`.
 */
function eventFrame(message: WatchEventsResponse): string {
  const event = message.event!;
  // JSON.stringify escapes line breaks, so the body always fits on one data line.
  return `id: ${event.id}\ndata: ${JSON.stringify(bodyFromMessage(event))}\n\n`;
}
