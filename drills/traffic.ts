/**
 * What the drills and the topology tests do to the service and how they judge it: a client of the
 * public API that retries with an Idempotency-Key as the SDK does, a publisher, an emitter of
 * platform events (comments and direct messages the emulator pushes as official webhooks), SSE
 * followers that reconnect with Last-Event-ID, webhook receivers that can be made to fail, and the
 * audit that compares all of it with the event log, the publish records and the emulator.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { LOG_START_ID, SseParser } from '../sdk/event-stream';
import { createUpstream } from '../core/upstream';
import { SANDBOX_APP } from '../core/upstream/settings';
import { listVideos } from '../core/upstream/vplat/insights';
import type { SeatHandle, TenantHandle, Topology } from './topology';

export interface ApiAnswer<T = Record<string, unknown>> {
  status: number;
  code: number;
  message: string;
  data: T;
  headers: Headers;
}

/** One request to a gateway, with a timeout; a network failure throws. */
export async function api<T = Record<string, unknown>>(
  baseUrl: string,
  key: string,
  method: string,
  path: string,
  opts: { json?: unknown; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<ApiAnswer<T>> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, ...opts.headers };
  if (opts.json !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    ...(opts.json !== undefined ? { body: JSON.stringify(opts.json) } : {}),
    signal: AbortSignal.timeout(opts.timeoutMs ?? 15_000),
  });
  const text = await res.text();
  let body: { code: number; message: string; data: T };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    body = { code: -1, message: `HTTP ${res.status}: ${text.slice(0, 200)}`, data: {} as T };
  }
  return { status: res.status, code: body.code, message: body.message, data: body.data, headers: res.headers };
}

/** Whether an answer is worth the same request again (with its Idempotency-Key): outages and "still running". */
function retryable(answer: ApiAnswer): boolean {
  return answer.status >= 500 || answer.code === 2002 || answer.code === -1;
}

export interface PublishAttempt {
  caption: string;
  seat: SeatHandle;
  startedAt: number;
  endedAt?: number;
  /** The record id, once a gateway answered code 0. */
  recordId?: string;
  /** The last failure, when no gateway accepted it. */
  error?: string;
  /** Each failed try: when it ended (ms after the first began), on which gateway, and why. */
  failures: string[];
  tries: number;
}

export interface PublishRecord {
  id: string;
  status: string;
  postId: string | null;
  caption?: string;
  seatId: string;
  shareId: string | null;
  reason: string | null;
  /** The service stopped following it without a final status (its status stays the last known). */
  unconfirmed: boolean;
}

export const TERMINAL = ['publish_complete', 'publish_failed', 'publish_draft_inbox', 'service_error'];

/** Done: a terminal status, and for a completed post its post id too (the workflow waits for it); or ended unconfirmed. */
export const isSettled = (r: PublishRecord) =>
  r.unconfirmed || (TERMINAL.includes(r.status) && (r.status !== 'publish_complete' || r.postId !== null));

/**
 * Publishes with one Idempotency-Key per publish, as the SDK does: a network failure, a 5xx or a
 * 2002 is tried again (on the next gateway) with the same key, at most `tries` times in
 * `deadlineMs`, so a lost answer never makes a second publish.
 */
export async function publishOnce(
  gateways: string[],
  startAt: number,
  key: string,
  seat: SeatHandle,
  mediaUrl: string,
  caption: string,
  opts: { tries?: number; deadlineMs?: number } = {},
): Promise<PublishAttempt> {
  const attempt: PublishAttempt = { caption, seat, startedAt: Date.now(), tries: 0, failures: [] };
  const failed = (gateway: string, why: string) => {
    attempt.error = why;
    attempt.failures.push(`+${Date.now() - attempt.startedAt} ms ${new URL(gateway).port}: ${why}`);
  };
  const idempotencyKey = randomUUID();
  const deadline = Date.now() + (opts.deadlineMs ?? 20_000);
  for (let i = 0; i < (opts.tries ?? 6) && Date.now() < deadline; i++) {
    attempt.tries += 1;
    const gateway = gateways[(startAt + i) % gateways.length]!;
    try {
      const answer = await api<{ id: string }>(gateway, key, 'POST', '/v1/vplat/v1.3/business/video/publish', {
        json: { account: seat.openId, videoUrl: `${mediaUrl}/video.mp4`, caption, isBrandOrganic: false, isBrandedContent: false },
        headers: { 'idempotency-key': idempotencyKey },
        timeoutMs: Math.max(1_000, Math.min(15_000, deadline - Date.now())),
      });
      if (answer.code === 0) {
        attempt.recordId = answer.data.id;
        attempt.endedAt = Date.now();
        delete attempt.error;
        return attempt;
      }
      failed(gateway, `HTTP ${answer.status} code ${answer.code}: ${answer.message}`);
      if (!retryable(answer)) break;
    } catch (err) {
      failed(gateway, (err as Error).message);
    }
    await new Promise((r) => setTimeout(r, 300 * (i + 1)));
  }
  attempt.endedAt = Date.now();
  return attempt;
}

/** Every publish record of the tenant (all pages). */
export async function listRecords(gateway: string, key: string): Promise<PublishRecord[]> {
  const out: PublishRecord[] = [];
  let cursor = '';
  for (let page = 0; page < 50; page++) {
    const answer = await api<{ items: PublishRecord[]; nextCursor: string | null }>(
      gateway,
      key,
      'GET',
      `/v1/publish/records?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    if (answer.code !== 0) throw new Error(`GET /v1/publish/records: ${answer.status} ${answer.code} ${answer.message}`);
    out.push(...answer.data.items);
    if (!answer.data.nextCursor) return out;
    cursor = answer.data.nextCursor;
  }
  throw new Error('more than 50 pages of publish records');
}

export interface LoggedEvent {
  id: string;
  type: string;
  occurred_at: string;
  data: Record<string, unknown>;
}

/**
 * The tenant's event log, read on from where the last read ended: the recovery check reads it
 * every half second, and reading the whole log each time (30 pages and more) loaded the very
 * gateways and core whose recovery it measures. The log is append-only in cursor order, and the
 * cursor of its last page reads on to the events stored later.
 */
export class EventLogReader {
  private readonly items: LoggedEvent[] = [];
  private cursor = '';

  constructor(private readonly key: string) {}

  async read(gateway: string): Promise<LoggedEvent[]> {
    for (let page = 0; page < 100; page++) {
      const answer = await api<{ items: LoggedEvent[]; nextCursor: string; hasMore: boolean }>(
        gateway,
        this.key,
        'GET',
        `/v1/events?limit=100${this.cursor ? `&cursor=${encodeURIComponent(this.cursor)}` : ''}`,
      );
      if (answer.code !== 0) throw new Error(`GET /v1/events: ${answer.status} ${answer.code} ${answer.message}`);
      this.items.push(...answer.data.items);
      if (answer.data.nextCursor) this.cursor = answer.data.nextCursor;
      if (!answer.data.hasMore) return this.items;
    }
    throw new Error('more than 100 pages of events');
  }
}

/** The tenant's whole event log, oldest first. */
export function listEvents(gateway: string, key: string): Promise<LoggedEvent[]> {
  return new EventLogReader(key).read(gateway);
}

export interface EmittedEvent {
  kind: 'comment' | 'message';
  /** The official id the event's data carries (comment_id or message_id). */
  officialId: string;
  seat: SeatHandle;
  at: number;
}

/** A third party comments on, or writes to, the seat's account; the emulator pushes it as a webhook. */
export async function emitPlatformEvent(
  topology: Topology,
  seat: SeatHandle,
  kind: 'comment' | 'message',
  text: string,
): Promise<EmittedEvent> {
  if (kind === 'comment') {
    const c = await topology.sandbox<{ commentId: string }>('POST', `/_sandbox/accounts/${seat.openId}/comments`, { text });
    return { kind, officialId: String(c.commentId), seat, at: Date.now() };
  }
  const m = await topology.sandbox<{ messageId: string }>('POST', `/_sandbox/accounts/${seat.openId}/messages`, { text });
  return { kind, officialId: String(m.messageId), seat, at: Date.now() };
}

/** The event of the log that an emitted platform event became, if any. */
export function officialIdOf(e: LoggedEvent): string | undefined {
  if (e.type === 'vplat.comment.created') return e.data.comment_id === undefined ? undefined : String(e.data.comment_id);
  if (e.type === 'vplat.message.received') return e.data.message_id === undefined ? undefined : String(e.data.message_id);
  return undefined;
}

/**
 * An SSE client of GET /v1/events/stream that, when its stream ends, fails or falls silent for
 * three heartbeats, reconnects to the next gateway with Last-Event-ID, as an EventSource behind a
 * balancer does. It records every event id it received, in order.
 */
export class SseFollower {
  readonly received: string[] = [];
  private readonly seen = new Set<string>();
  /** Reconnections that carried a Last-Event-ID. */
  resumes = 0;
  connects = 0;
  lastId = '';
  /** Where the first connection started (the position the stream announced); '' for an empty log. */
  startAfter: string | undefined;
  errors: string[] = [];
  private stopped = false;
  private controller: AbortController | undefined;
  private loop: Promise<void> | undefined;
  private gatewayIndex: number;
  private onEvent = new Set<() => void>();

  constructor(
    readonly name: string,
    private readonly gateways: () => string[],
    private readonly key: string,
    firstGateway: number,
    private readonly silenceMs = 6_000,
  ) {
    this.gatewayIndex = firstGateway;
  }

  /** Connects, and resolves once the stream has announced where it starts. */
  async start(timeoutMs = 15_000): Promise<void> {
    this.loop = this.run();
    const deadline = Date.now() + timeoutMs;
    while (this.startAfter === undefined) {
      if (Date.now() > deadline) throw new Error(`${this.name}: the stream did not start: ${this.errors.slice(-3).join('; ')}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  has(id: string): boolean {
    return this.seen.has(id);
  }

  /** The ids received, kept as they arrive: the audit reads it for every event, every poll. */
  receivedSet(): ReadonlySet<string> {
    return this.seen;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.controller?.abort();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const gateway = this.gateways()[this.gatewayIndex % this.gateways().length]!;
      const controller = new AbortController();
      this.controller = controller;
      const agent = new Agent({ connectTimeout: 2_000 });
      let silence: NodeJS.Timeout | undefined;
      const armSilence = () => {
        clearTimeout(silence);
        silence = setTimeout(() => controller.abort(new Error('silent for three heartbeats')), this.silenceMs);
      };
      try {
        const headers: Record<string, string> = { authorization: `Bearer ${this.key}`, accept: 'text/event-stream' };
        if (this.lastId) headers['last-event-id'] = this.lastId;
        armSilence();
        const res = await fetch(`${gateway}/v1/events/stream`, { headers, signal: controller.signal, dispatcher: agent } as RequestInit);
        if (res.status !== 200 || !res.body) throw new Error(`HTTP ${res.status}: ${(await res.text()).slice(0, 200)}`);
        this.connects += 1;
        if (this.lastId) this.resumes += 1;
        const parser = new SseParser();
        const decoder = new TextDecoder();
        const reader = res.body.getReader();
        for (;;) {
          const chunk = await reader.read();
          if (chunk.done) throw new Error('the stream ended');
          armSilence();
          for (const frame of parser.push(decoder.decode(chunk.value, { stream: true }))) {
            if (frame.kind === 'position') {
              // A customer with no events yet starts at the log's start, which the audit reads as ''.
              this.startAfter ??= frame.id === LOG_START_ID ? '' : frame.id;
              if (!this.lastId) this.lastId = frame.id;
            } else if (frame.kind === 'event') {
              this.startAfter ??= '';
              this.received.push(frame.id);
              this.seen.add(frame.id);
              this.lastId = frame.id;
              for (const wake of this.onEvent) wake();
            }
          }
        }
      } catch (err) {
        if (this.stopped) break;
        this.errors.push(`${new Date().toISOString()} ${gateway}: ${(err as Error).message}`);
        // The next gateway, as a balancer would pick one that answers.
        this.gatewayIndex += 1;
        await new Promise((r) => setTimeout(r, 200));
      } finally {
        clearTimeout(silence);
        controller.abort();
        await agent.destroy().catch(() => undefined);
      }
    }
  }
}

/** A webhook endpoint's receiver: records each push by event id; can answer 500 for a while. */
export class Receiver {
  /** Pushes answered 2xx, by event id. */
  readonly delivered = new Map<string, number>();
  pushes = 0;
  failing = false;
  /** When the receiver last answered 2xx. */
  lastOkAt = 0;
  url = '';
  /** The webhook endpoint that pushes here, once created. */
  endpointId = '';
  private server: http.Server;

  constructor(readonly name: string) {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.pushes += 1;
        if (this.failing) {
          res.writeHead(500).end('failing on purpose');
          return;
        }
        let id = req.headers['x-service-event-id'];
        if (typeof id !== 'string') {
          try {
            id = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string }).id;
          } catch {
            id = '';
          }
        }
        this.delivered.set(id, (this.delivered.get(id) ?? 0) + 1);
        this.lastOkAt = Date.now();
        res.writeHead(200).end();
      });
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** Creates a webhook endpoint subscribed to every event type. */
export async function createEndpoint(gateway: string, key: string, url: string): Promise<string> {
  const answer = await api<{ id: string }>(gateway, key, 'POST', '/v1/webhook-endpoints', { json: { url, eventTypes: ['*'] } });
  if (answer.code !== 0) throw new Error(`POST /v1/webhook-endpoints: ${answer.status} ${answer.code} ${answer.message}`);
  return answer.data.id;
}

export interface Undelivered {
  receiver: Receiver;
  eventId: string;
}

/**
 * What became of pushes a receiver never answered 2xx, by the service's delivery log: `late` when
 * the delivery is still pending (it will be tried again), `lost` when there is no delivery to that
 * endpoint, or it ended (failed, cancelled, or succeeded without the receiver seeing it).
 */
export async function classifyUndelivered(gateway: string, key: string, pairs: Undelivered[]): Promise<{ late: string[]; lost: string[] }> {
  const late: string[] = [];
  const lost: string[] = [];
  for (const pair of pairs) {
    const answer = await api<{ items: Array<{ endpointId: string; status: string; attempts: unknown[] }> }>(
      gateway,
      key,
      'GET',
      `/v1/events/${pair.eventId}/deliveries`,
    );
    const label = `${pair.receiver.name}:${pair.eventId}`;
    if (answer.code !== 0) {
      lost.push(`${label} (delivery log: ${answer.code} ${answer.message})`);
      continue;
    }
    const mine = answer.data.items.filter((d) => d.endpointId === pair.receiver.endpointId);
    const pending = mine.find((d) => d.status === 'pending');
    if (pending) late.push(`${label} (pending, ${pending.attempts.length} attempts)`);
    else lost.push(`${label} (${mine.map((d) => d.status).join(', ') || 'no delivery'})`);
  }
  return { late, lost };
}

export interface AuditInput {
  gateway: string;
  tenant: TenantHandle;
  /** Publishes the load made (accepted or not). */
  publishes: PublishAttempt[];
  emitted: EmittedEvent[];
  receivers: Receiver[];
  followers: SseFollower[];
  /** Reads the event log on from the last audit's end; the whole log is read when absent. */
  eventLog?: EventLogReader;
}

export interface Audit {
  /** Publishes a gateway accepted (code 0) plus records whose answer was lost. */
  acceptedPublishes: number;
  records: PublishRecord[];
  events: LoggedEvent[];
  /** Accepted publishes missing from the records, or records not settled. */
  unsettledPublishes: string[];
  /** Settled records with no status event of their final status in the log. */
  missingStatusEvents: string[];
  /** Emitted platform events absent from the log. */
  missingEvents: string[];
  /** Platform events logged more than once. */
  duplicateEvents: string[];
  /** (endpoint, event) pairs never answered 2xx. */
  undelivered: Undelivered[];
  /** (follower, event) pairs a stream never received, counting from where it started. */
  sseGaps: string[];
  /** Events a stream received twice. */
  sseDuplicates: string[];
  ok: boolean;
}

/** Compares what the load did with what the service holds. Cheap enough to poll every second. */
export async function audit(input: AuditInput): Promise<Audit> {
  const [records, events] = await Promise.all([
    listRecords(input.gateway, input.tenant.apiKey),
    (input.eventLog ?? new EventLogReader(input.tenant.apiKey)).read(input.gateway),
  ]);
  const byId = new Map(records.map((r) => [r.id, r]));
  const unsettled: string[] = [];
  for (const p of input.publishes) {
    if (!p.recordId) continue;
    const r = byId.get(p.recordId);
    if (!r) unsettled.push(`${p.recordId} (${p.caption}): accepted, no record`);
  }
  for (const r of records) if (!isSettled(r)) unsettled.push(`${r.id}: ${r.status}${r.postId ? '' : ' (no post id)'}`);

  const statusKey = (id: unknown, status: unknown, postId: unknown, unconfirmed: unknown) =>
    unconfirmed ? `${String(id)}:unconfirmed` : `${String(id)}:${String(status)}:${postId ? 'post' : ''}`;
  const statusEvents = new Set(
    events
      .filter((e) => e.type === 'vplat.publish.status_changed' || e.type === 'vplat.publish.unconfirmed')
      .map((e) => statusKey(e.data.record_id, e.data.status, e.data.post_id, e.type === 'vplat.publish.unconfirmed')),
  );
  const missingStatusEvents = records
    .filter(isSettled)
    .filter((r) => !statusEvents.has(statusKey(r.id, r.status, r.postId, r.unconfirmed)))
    .map((r) => `${r.id}: no ${r.unconfirmed ? 'unconfirmed' : r.status} event`);

  const officialCounts = new Map<string, number>();
  for (const e of events) {
    const id = officialIdOf(e);
    if (id) officialCounts.set(`${e.type}:${id}`, (officialCounts.get(`${e.type}:${id}`) ?? 0) + 1);
  }
  const keyOf = (x: EmittedEvent) => `${x.kind === 'comment' ? 'vplat.comment.created' : 'vplat.message.received'}:${x.officialId}`;
  const missingEvents = input.emitted.filter((x) => !officialCounts.has(keyOf(x))).map(keyOf);
  const duplicateEvents = [...officialCounts].filter(([, n]) => n > 1).map(([k, n]) => `${k} x${n}`);

  const undelivered: Undelivered[] = [];
  for (const r of input.receivers) for (const e of events) if (!r.delivered.has(e.id)) undelivered.push({ receiver: r, eventId: e.id });

  const sseGaps: string[] = [];
  const sseDuplicates: string[] = [];
  for (const f of input.followers) {
    const got = f.receivedSet();
    const startIndex = f.startAfter ? events.findIndex((e) => e.id === f.startAfter) + 1 : 0;
    for (const e of events.slice(startIndex)) if (!got.has(e.id)) sseGaps.push(`${f.name}:${e.id}`);
    if (got.size !== f.received.length) {
      const seen = new Set<string>();
      for (const id of f.received) {
        if (seen.has(id)) sseDuplicates.push(`${f.name}:${id}`);
        seen.add(id);
      }
    }
  }
  const accepted = new Set([...input.publishes.filter((p) => p.recordId).map((p) => p.recordId!), ...records.map((r) => r.id)]);
  const result = {
    acceptedPublishes: accepted.size,
    records,
    events,
    unsettledPublishes: unsettled,
    missingStatusEvents,
    missingEvents,
    duplicateEvents,
    undelivered,
    sseGaps,
    sseDuplicates,
  };
  return {
    ...result,
    ok: unsettled.length + missingStatusEvents.length + missingEvents.length + undelivered.length + sseGaps.length === 0,
  };
}

/**
 * Posts on each seat's account, by caption, as the platform lists them: a caption seen twice is a
 * publish sent twice upstream. Read through the official video/list with the account's token
 * (after faults are cleared: it is an official call like any other).
 */
export async function upstreamPostsByCaption(topology: Topology, seats: SeatHandle[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const base = topology.urls.sandbox;
  const upstream = createUpstream({
    vplat: { baseUrl: base, appId: SANDBOX_APP.vplatAppId, appSecret: SANDBOX_APP.vplatAppSecret },
    shop: { baseUrl: base, authBaseUrl: base, appKey: SANDBOX_APP.shopAppKey, appSecret: SANDBOX_APP.shopAppSecret },
    timeouts: { connectMs: 2_000, totalMs: 10_000 },
  });
  try {
    for (const seat of seats) {
      let cursor: number | undefined;
      for (let page = 0; page < 50; page++) {
        const data = await listVideos(upstream.vplat, seat.accessToken, {
          business_id: seat.openId,
          fields: ['item_id', 'caption'],
          max_count: 20,
          ...(cursor !== undefined ? { cursor } : {}),
        });
        for (const v of data.videos) if (v.caption) counts.set(v.caption, (counts.get(v.caption) ?? 0) + 1);
        if (!data.has_more || data.cursor === undefined) break;
        cursor = Number(data.cursor);
      }
    }
  } finally {
    await upstream.close();
  }
  return counts;
}
