/**
 * The client of GET /v1/events/stream: an async iterable of events that reconnects by itself and
 * resumes with Last-Event-ID, so a consumer sees every event once, in the log's order, across
 * dropped connections and gateway restarts. A refusal it cannot fix by waiting (a bad key, a bad
 * pattern, an unknown resume id: codes 1001 to 2007) is thrown, never retried, so a misconfigured
 * listener stops instead of looping; a rate limit (2002) waits for Retry-After; 5xx answers and
 * network failures back off exponentially and try again, without a limit, as EventSource does.
 */
import type { EventJson } from './api-types';
import { isEnvelope, parseRetryAfter, VpsApiError, VpsNetworkError } from './errors';

/**
 * The position a stream opened before the customer's first event announces: resuming from it
 * replays the whole log. Part of the API (GET /v1/events/stream), like the event types.
 */
export const LOG_START_ID = 'start';

/** One thing an SSE stream says: an event, a comment (heartbeats) or a new reconnection time. */
export type SseFrame =
  | {
      kind: 'event';
      /** The last event id the stream has set so far ('' when none): what a reconnect resumes after. */
      id: string;
      /** The `event` field, `message` when absent. */
      type: string;
      data: string;
    }
  /** A block with an id and no data: where the stream stands, for a later Last-Event-ID. */
  | { kind: 'position'; id: string }
  | { kind: 'comment'; text: string }
  | { kind: 'retry'; ms: number };

/**
 * The text/event-stream format as the HTML standard parses it: lines end with CRLF, LF or CR (also
 * when split across chunks), `data` lines of one event join with LF, `id` persists until changed,
 * a block without data is no event, unknown fields and a leading BOM are ignored. Feed it decoded
 * text; it keeps the incomplete tail for the next call. Pure, so the rules are unit-tested.
 */
export class SseParser {
  private buffer = '';
  private started = false;
  private data: string[] = [];
  private type = '';
  private lastEventId = '';
  private sawId = false;
  private afterCr = false;

  push(text: string): SseFrame[] {
    if (text === '') return [];
    // The LF of a CRLF whose CR ended the previous chunk.
    if (this.afterCr && text.startsWith('\n')) text = text.slice(1);
    this.afterCr = false;
    this.buffer += text;
    if (!this.started && this.buffer !== '') {
      this.started = true;
      if (this.buffer.startsWith('\uFEFF')) this.buffer = this.buffer.slice(1);
    }
    const frames: SseFrame[] = [];
    let start = 0;
    for (;;) {
      const cr = this.buffer.indexOf('\r', start);
      const lf = this.buffer.indexOf('\n', start);
      const end = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
      if (end === -1) break;
      const line = this.buffer.slice(start, end);
      start = end + (end === cr && this.buffer[end + 1] === '\n' ? 2 : 1);
      // A CR that ends the text may be the first half of a CRLF: the line is complete either way.
      if (end === cr && start === this.buffer.length) this.afterCr = true;
      const frame = this.line(line);
      if (frame) frames.push(frame);
    }
    this.buffer = this.buffer.slice(start);
    return frames;
  }

  private line(line: string): SseFrame | undefined {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return { kind: 'comment', text: line.slice(1).replace(/^ /, '') };
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    switch (field) {
      case 'data':
        this.data.push(value);
        return undefined;
      case 'event':
        this.type = value;
        return undefined;
      case 'id':
        // The standard ignores an id with a NUL in it.
        if (!value.includes('\0')) {
          this.lastEventId = value;
          this.sawId = true;
        }
        return undefined;
      case 'retry':
        return /^\d+$/.test(value) ? { kind: 'retry', ms: Number(value) } : undefined;
      default:
        return undefined;
    }
  }

  private dispatch(): SseFrame | undefined {
    const data = this.data;
    const type = this.type;
    const sawId = this.sawId;
    this.data = [];
    this.type = '';
    this.sawId = false;
    if (data.length === 0) return sawId && this.lastEventId !== '' ? { kind: 'position', id: this.lastEventId } : undefined;
    return { kind: 'event', id: this.lastEventId, type: type || 'message', data: data.join('\n') };
  }
}

/** One event off the stream: the event object, exactly the shape of a push body. */
export type StreamedEvent = EventJson;

export type StreamState =
  | { state: 'connected'; resumedAfter: string | undefined }
  | { state: 'disconnected'; reason: string }
  | { state: 'retrying'; delayMs: number; attempt: number };

export interface ReconnectBackoff {
  /** First wait after a connection ends or fails; by default the stream's own `retry:` (3 s from this service), else 1 s. */
  initialMs: number;
  /** Doubling stops here. */
  maxMs: number;
}

export interface EventStreamOptions {
  /** The service's address, e.g. http://127.0.0.1:8080 (no /v1). */
  baseUrl: string;
  /** The bare API key; the client adds `Bearer`. */
  apiKey: string;
  /** Subscription patterns ("*", "vplat.*", exact types); every event when absent. */
  types?: string[];
  /** Also the test events (service.endpoint.test), which the service leaves out otherwise. */
  includeTest?: boolean;
  /** Start after this event (replaying what came after it) instead of at the time of connection. */
  lastEventId?: string;
  /** Ends the iteration, without an error. */
  signal?: AbortSignal;
  backoff?: Partial<ReconnectBackoff>;
  /**
   * A connection that sends nothing, not even a heartbeat, for this long is taken for dead and
   * replaced. The service sends a heartbeat every 15 s by default, so 60 s allows three to be lost.
   */
  idleTimeoutMs?: number;
  userAgent?: string;
  /** Told of every connection, disconnection and wait, for logs and status lines. */
  onState?: (state: StreamState) => void;
}

const DEFAULT_INITIAL_MS = 1_000;
const DEFAULT_MAX_MS = 30_000;
const DEFAULT_IDLE_TIMEOUT_MS = 60_000;

/** Why one connection ended and how long to wait before the next. */
type Outcome = { reason: string; waitMs?: number };

export async function* streamEvents(options: EventStreamOptions): AsyncGenerator<StreamedEvent> {
  const { signal } = options;
  let lastEventId = options.lastEventId;
  let serverRetryMs: number | undefined;
  /** Failed attempts since the last connection that was accepted. */
  let failures = 0;
  while (!signal?.aborted) {
    const attempt = new AbortController();
    const stop = () => attempt.abort(signal?.reason);
    signal?.addEventListener('abort', stop, { once: true });
    let outcome: Outcome = { reason: 'the service ended the stream' };
    try {
      const res = await connect(options, lastEventId, attempt.signal);
      if (!(res instanceof Response)) outcome = res;
      else {
        failures = 0;
        options.onState?.({ state: 'connected', resumedAfter: lastEventId });
        const frames = readFrames(res, attempt, options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS);
        try {
          for (;;) {
            let next: IteratorResult<SseFrame>;
            try {
              next = await frames.next();
            } catch (err) {
              if (signal?.aborted) return;
              outcome = { reason: describe(err) };
              break;
            }
            if (next.done) break;
            const frame = next.value;
            if (frame.kind === 'retry') serverRetryMs = frame.ms;
            if (frame.kind === 'position') lastEventId = frame.id;
            if (frame.kind !== 'event') continue;
            yield parseEvent(frame);
            // Only once the consumer has taken it: a reconnect resumes after what it has seen.
            lastEventId = frame.id;
          }
        } finally {
          // Also when the consumer stops iterating mid-stream: clears the idle timer, ends the body.
          await frames.return(undefined);
        }
      }
    } catch (err) {
      if (signal?.aborted) return;
      throw err;
    } finally {
      signal?.removeEventListener('abort', stop);
      attempt.abort();
    }
    if (signal?.aborted) return;
    failures++;
    options.onState?.({ state: 'disconnected', reason: outcome.reason });
    const initial = options.backoff?.initialMs ?? serverRetryMs ?? DEFAULT_INITIAL_MS;
    const ceiling = Math.min(options.backoff?.maxMs ?? DEFAULT_MAX_MS, initial * 2 ** (failures - 1));
    // Jitter over the upper half spreads the clients of a restarted gateway over time.
    const delayMs = Math.max(outcome.waitMs ?? 0, Math.round(ceiling / 2 + (Math.random() * ceiling) / 2));
    options.onState?.({ state: 'retrying', delayMs, attempt: failures });
    if (!(await sleep(delayMs, signal))) return;
  }
}

/**
 * Opens one connection: the response when the stream started, an Outcome to retry after, or a
 * thrown VpsApiError for a refusal that waiting cannot fix.
 */
async function connect(options: EventStreamOptions, lastEventId: string | undefined, signal: AbortSignal): Promise<Response | Outcome> {
  const url = new URL(`${options.baseUrl.replace(/\/+$/, '')}/v1/events/stream`);
  if (options.types?.length) url.searchParams.set('types', options.types.join(','));
  if (options.includeTest) url.searchParams.set('includeTest', 'true');
  const headers: Record<string, string> = { authorization: `Bearer ${options.apiKey}`, accept: 'text/event-stream' };
  if (options.userAgent) headers['user-agent'] = options.userAgent;
  if (lastEventId) headers['last-event-id'] = lastEventId;
  let res: Response;
  try {
    res = await fetch(url, { headers, signal });
  } catch (err) {
    if (signal.aborted) throw err;
    return { reason: `cannot reach ${options.baseUrl}: ${describe(err)}` };
  }
  if (res.status === 200 && (res.headers.get('content-type') ?? '').startsWith('text/event-stream')) return res;
  const text = await res.text().catch((err: unknown) => {
    if (signal.aborted) throw err;
    return '';
  });
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined; // not the service's envelope: judged by the HTTP status below
  }
  if (!isEnvelope(body)) {
    if (res.status >= 500) return { reason: `HTTP ${res.status}` };
    // A 200 or 4xx that is not the service (a wrong base URL, a proxy's page) will not heal by itself.
    throw new VpsNetworkError(`GET ${url.pathname}: HTTP ${res.status} without an event stream or the service's envelope`);
  }
  const data = body.data && typeof body.data === 'object' ? (body.data as Record<string, unknown>) : {};
  const error = new VpsApiError(
    body.code,
    body.message,
    res.status,
    data,
    parseRetryAfter(res.headers.get('retry-after')),
    res.headers.get('x-request-id') ?? undefined,
  );
  if (body.code === 2002) return { reason: `${body.code} ${body.message}`, waitMs: (error.retryAfterSeconds ?? 1) * 1_000 };
  // The spec: codes 1001 to 2007 are not retried blindly; the request must change first.
  if (body.code >= 1001 && body.code <= 2007) throw error;
  return { reason: `${body.code} ${body.message}` };
}

/** The frames of one response; aborts the attempt when nothing arrives for `idleMs`. */
async function* readFrames(res: Response, attempt: AbortController, idleMs: number): AsyncGenerator<SseFrame> {
  const parser = new SseParser();
  const decoder = new TextDecoder();
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => attempt.abort(new Error(`no data for ${idleMs} ms`)), idleMs);
  };
  arm();
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      arm();
      yield* parser.push(decoder.decode(chunk, { stream: true }));
    }
    // An abort can end the body quietly rather than with an error: report why it ended.
    if (attempt.signal.aborted) throw attempt.signal.reason;
  } finally {
    clearTimeout(timer);
  }
}

function parseEvent(frame: Extract<SseFrame, { kind: 'event' }>): StreamedEvent {
  try {
    return JSON.parse(frame.data) as StreamedEvent;
  } catch (err) {
    throw new VpsNetworkError(`event ${frame.id || '(no id)'}: data is not JSON`, { cause: err });
  }
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${err.message}${cause}`;
}

/** Resolves true after `ms`, false at once when `signal` aborts first. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
