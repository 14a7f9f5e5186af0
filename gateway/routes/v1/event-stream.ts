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
import { bodyFromMessage, type EventBody } from '../../../core/events/present';
import { RATE_LIMIT_LIMIT_HEADER, RATE_LIMIT_REMAINING_HEADER } from '../../../core/interceptors/access.interceptor';
import { LOG_START_ID } from '../../../core/events/watch-events';
import { authorizeCaller, forwardedHeaders, nulField, single } from '../../rpc-route';
import { EXAMPLE_EVENT, IncludeTest } from '../../schemas/events';
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
    includeTest: Type.Optional(IncludeTest),
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
      description: STREAM_DESCRIPTION,
      querystring: EventStreamQuery,
      response: {
        200: {
          description: FRAMES_DESCRIPTION,
          content: { 'text/event-stream': { schema: Type.String(), example: STREAM_EXAMPLE } },
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
          single({ afterEventId, types, includeTest: query.includeTest ?? false }),
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
    yield RETRY_FRAME;
    // An id without data moves the client's Last-Event-ID to where the stream starts: a client
    // that reconnects before its first event then resumes from here instead of losing the gap.
    if (!first.done && first.value.resumeId) yield positionFrame(first.value.resumeId);
    // The first message only says the stream is live; an event in it is still sent.
    if (!first.done && first.value.event) yield eventFrame(bodyFromMessage(first.value.event));
    let next = first.done ? first : await messages.next();
    while (!next.done) {
      yield next.value.event ? eventFrame(bodyFromMessage(next.value.event)) : HEARTBEAT_FRAME;
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

const RETRY_FRAME = `retry: ${SSE_RETRY_MS}\n\n`;
const HEARTBEAT_FRAME = ': heartbeat\n\n';

function positionFrame(resumeId: string): string {
  return `id: ${resumeId}\n\n`;
}

/**
 * No `event:` field: a named event reaches only listeners registered for its name, so a plain
 * EventSource `onmessage` handler would receive nothing. The type is the body's `type`.
 */
function eventFrame(body: EventBody): string {
  // JSON.stringify escapes line breaks, so the body always fits on one data line.
  return `id: ${body.id}\ndata: ${JSON.stringify(body)}\n\n`;
}

/**
 * The start of a stream as the OpenAPI document shows it, written by the functions that write the
 * real frames; test/integration/events-stream.test.ts compares it with what a real stream sends.
 */
const STREAM_EXAMPLE = [RETRY_FRAME, positionFrame(LOG_START_ID), eventFrame(EXAMPLE_EVENT), HEARTBEAT_FRAME].join('');

const FRAMES_DESCRIPTION = `A \`text/event-stream\`, starting as the example shows:
- \`retry: ${SSE_RETRY_MS}\`, the reconnection delay in milliseconds;
- \`id: <the event the stream starts after>\` with no data (\`id: ${LOG_START_ID}\` while the log is empty), so a client that loses the connection before its first event resumes from there;
- one frame per event: \`id: <event id>\` and \`data: <the event object, as one line of JSON>\` (the Event schema, the same object as a push body);
- \`: heartbeat\` comments while there is nothing to send (every 15 s by default).

**Frames carry no \`event:\` field**: every event arrives as an unnamed \`message\`. With \`EventSource\`, handle \`onmessage\` (or \`addEventListener('message', …)\`) and switch on the body's \`type\`; a listener registered for a type name (\`addEventListener('vplat.comment.created', …)\`) never receives anything.`;

const STREAM_DESCRIPTION = `Events stored after the connection is made, as Server-Sent Events; events missed while disconnected are read with GET /v1/events. On reconnect an \`EventSource\` sends \`Last-Event-ID\` and the stream replays the events after it first (clients that cannot send the header pass \`lastEventId\`; the header wins).

Test events (service.endpoint.test) are left out unless \`includeTest=true\` or \`types\` names them.

**Refusals come before the stream**, as the JSON envelope with its HTTP status, and a browser \`EventSource\` cannot read them: any status but 200 fires one \`error\` event and closes it for good (\`readyState\` 2, CLOSED; it never reconnects by itself).
- **The saved id is gone (404, code 1005)**: the \`Last-Event-ID\` or \`lastEventId\` is not an event of this account's log (an id from another account or deployment, or a log restored from a backup). To reconcile, open a new \`EventSource\` without a resume id (it starts at the newest event), then page GET /v1/events from the \`nextCursor\` you kept (or \`since\` a little before the \`occurred_at\` of the last event you handled) until \`hasMore\` is false, dropping events whose \`id\` you have already handled.
- 401 or 403 (1001, 1002): the key was revoked or its user disabled; a stream already open ends, and its reconnect gets this answer.
- 429 (2002): too many open streams; open a new \`EventSource\` after \`Retry-After\` seconds.`;
