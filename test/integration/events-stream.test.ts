/**
 * The event stream, at two levels against the real test database: WatchEvents with the EventHub
 * (replay, live delivery, fan-out across instances), and GET /v1/events/stream over real HTTP in
 * front of a core that serves WatchEvents through the real interceptors, reached both in process
 * and over Connect HTTP.
 */
import { Agent } from 'undici';
import { SseReader, within, type SseBlock } from '../helpers/sse';
import { create } from '@bufbuild/protobuf';
import type { ConnectRouter, Transport } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import type { FastifyInstance } from 'fastify';
import { AuthService } from '../../gen/vps/auth/v1/auth_pb';
import { EventService, WatchEventsRequestSchema } from '../../gen/vps/event/v1/event_pb';
import { customerOf, type CustomerPrincipal } from '../../core/context';
import { generateApiKey } from '../../core/crypto/api-keys';
import { openDatabase, type Database } from '../../core/db/client';
import { insertEvent, type EventRow } from '../../core/db/repositories/events';
import { insertApiKey, insertCustomer, insertUser } from '../../core/db/repositories/tenancy';
import { ApiError } from '../../core/errors';
import { EventHub } from '../../core/events/event-hub';
import { bodyFromMessage, eventBody } from '../../core/events/present';
import { LOG_START_ID, watchEvents, type WatchEventsDeps, type WatchEventsMessage } from '../../core/events/watch-events';
import { createInProcessTransport } from '../../core/in-process-transport';
import { accessInterceptor } from '../../core/interceptors/access.interceptor';
import { errorsInterceptor } from '../../core/interceptors/errors.interceptor';
import { createLogger } from '../../core/logger';
import type { CoreHandlers } from '../../core/router';
import { startCoreServer } from '../../core/server';
import { AuthHandlers } from '../../core/services/auth.service';
import os from 'node:os';
import { FolderMediaStore } from '../../core/media/folder-store';
import { buildApp } from '../../gateway/app';
import { SSE_RETRY_MS } from '../../gateway/routes/v1/event-stream';
import { requiredEnv } from '../helpers/stack';

const logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent', 'test');
/** Long enough that, unless a test wants heartbeats, only notifications can deliver live events. */
const NO_HEARTBEAT = 600_000;

function openTestDatabase(): Promise<Database> {
  return openDatabase({ url: requiredEnv('TEST_DATABASE_URL'), dataDir: '.data', poolSize: 5, migrate: false });
}

let customerCounter = 0;

async function newCustomer(database: Database): Promise<CustomerPrincipal> {
  const customer = await insertCustomer(database.db, { name: `Stream ${++customerCounter}`, seatQuota: 1, planExpiresAt: null });
  return { kind: 'customer', customerId: customer.id, userId: 'usr_test', apiKeyId: 'key_test', planExpiresAt: null, planExpired: false };
}

async function storeEvent(database: Database, customerId: string, type = 'vplat.message.received', n = 0): Promise<EventRow> {
  const { event } = await insertEvent(database.db, {
    customerId,
    seatId: 'seat_test',
    platform: 'vplat',
    type,
    event: type === 'vplat.message.received' ? 'im_receive_msg' : 'comment.update',
    occurredAt: new Date(),
    data: { n },
    sourceKey: null,
  });
  return event;
}

async function storeEvents(database: Database, customerId: string, count: number): Promise<EventRow[]> {
  const rows: EventRow[] = [];
  for (let i = 0; i < count; i++) rows.push(await storeEvent(database, customerId, 'vplat.message.received', i));
  return rows;
}

/** Rejects when `promise` takes longer than `ms`, naming what was awaited. */

async function until(condition: () => boolean, what: string, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A WatchEvents call read message by message, as a test would read a log. */
class Watch {
  readonly controller = new AbortController();
  private readonly it: AsyncIterator<WatchEventsMessage>;

  constructor(deps: WatchEventsDeps, principal: CustomerPrincipal, req: { afterEventId?: string; types?: string[] } = {}) {
    this.it = watchEvents(deps, principal, create(WatchEventsRequestSchema, req), this.controller.signal);
  }

  /** The first message: the stream is live once it has arrived. It carries no event. */
  resumeId: string | undefined;
  async ready(): Promise<this> {
    const first = await within(5_000, 'the stream to start', this.it.next());
    expect(first.done).toBe(false);
    expect(first.value.event).toBeUndefined();
    this.resumeId = (first.value as WatchEventsMessage).resumeId;
    return this;
  }

  next(ms = 5_000): Promise<IteratorResult<WatchEventsMessage>> {
    return within(ms, 'a message', this.it.next());
  }

  /** The next `count` events' ids, skipping heartbeats. */
  async events(count: number, ms = 5_000): Promise<string[]> {
    const ids: string[] = [];
    while (ids.length < count) {
      const r = await this.next(ms);
      if (r.done) throw new Error(`stream ended after ${ids.length} of ${count} events`);
      if (r.value.event) ids.push(r.value.event.id);
    }
    return ids;
  }

  /** Event ids sent within `ms`, heartbeats skipped; the pending read is left for the next call. */
  private pending: Promise<IteratorResult<WatchEventsMessage>> | undefined;
  async eventsWithin(ms: number): Promise<string[]> {
    const ids: string[] = [];
    const deadline = Date.now() + ms;
    for (;;) {
      this.pending ??= this.it.next();
      const left = deadline - Date.now();
      if (left <= 0) return ids;
      const r = await Promise.race([this.pending, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), left))]);
      if (r === undefined) return ids;
      this.pending = undefined;
      if (r.done) return ids;
      if (r.value.event) ids.push(r.value.event.id);
    }
  }

  async close(): Promise<void> {
    this.controller.abort();
    await this.it.return?.(undefined);
  }
}

describe('WatchEvents with the event hub', () => {
  let database: Database;
  let hub: EventHub;
  let deps: WatchEventsDeps;
  const watches: Watch[] = [];

  function watch(principal: CustomerPrincipal, req: { afterEventId?: string; types?: string[] } = {}, heartbeatMs = NO_HEARTBEAT): Watch {
    const w = new Watch({ ...deps, heartbeatMs }, principal, req);
    watches.push(w);
    return w;
  }

  beforeAll(async () => {
    database = await openTestDatabase();
    hub = new EventHub({ listen: database.listen, logger });
    deps = { db: database.db, hub, heartbeatMs: NO_HEARTBEAT };
  });

  afterEach(async () => {
    await Promise.all(watches.splice(0).map((w) => w.close()));
  });

  afterAll(async () => {
    await hub.close();
    await database.close();
  });

  it('starts at the time of connection and then sends each new event as it is stored, in order', async () => {
    const principal = await newCustomer(database);
    const before = await storeEvent(database, principal.customerId);
    const w = await watch(principal).ready();
    // Where it starts, so a client that leaves before its first event can resume from there.
    expect(w.resumeId).toBe(before.id);
    const stored = [
      await storeEvent(database, principal.customerId),
      await storeEvent(database, principal.customerId, 'vplat.comment.created'),
    ];
    const received: WatchEventsMessage[] = [];
    while (received.length < 2) {
      const r = await w.next();
      if (!r.done && r.value.event) received.push(r.value);
    }
    expect(received.map((m) => bodyFromMessage(m.event!))).toEqual(stored.map(eventBody));
    expect(received.map((m) => m.event!.position)).toEqual(stored.map((e) => BigInt(e.position)));
  });

  it('starts a customer with no event yet at the start of the log, from which a resume replays every event', async () => {
    const principal = await newCustomer(database);
    const w = await watch(principal).ready();
    expect(w.resumeId).toBe(LOG_START_ID);
    await w.close();
    // Stored while the client was away, before it had received anything.
    const missed = await storeEvents(database, principal.customerId, 3);
    const again = await watch(principal, { afterEventId: LOG_START_ID }).ready();
    expect(again.resumeId).toBe(LOG_START_ID);
    expect(await again.events(3)).toEqual(missed.map((e) => e.id));
    expect(await again.eventsWithin(200)).toEqual([]);
  });

  it('replays exactly the events after the Last-Event-ID, in order and across pages, then continues live', async () => {
    const principal = await newCustomer(database);
    const stored = await storeEvents(database, principal.customerId, 230);
    const w = await watch(principal, { afterEventId: stored[9]!.id }).ready();
    expect(await w.events(220)).toEqual(stored.slice(10).map((e) => e.id));
    const live = await storeEvent(database, principal.customerId);
    expect(await w.events(1)).toEqual([live.id]);
    expect(await w.eventsWithin(300)).toEqual([]);
  });

  it('neither loses nor repeats events stored while the replay is being sent', async () => {
    const principal = await newCustomer(database);
    const before = await storeEvents(database, principal.customerId, 150);
    // Heartbeats every 50 ms add catch-up reads that race with notifications and the replay.
    const w = await watch(principal, { afterEventId: before[0]!.id }, 50).ready();
    const during: Promise<EventRow[]> = (async () => {
      const rows: EventRow[] = [];
      for (let i = 0; i < 60; i++) {
        rows.push(await storeEvent(database, principal.customerId, 'vplat.message.received', 1_000 + i));
        if (i % 10 === 0) await new Promise((r) => setTimeout(r, 5));
      }
      return rows;
    })();
    const received: string[] = [];
    while (received.length < 149 + 60) {
      received.push(...(await w.events(1)));
      // A slow reader: the writer keeps storing while the replay is still being read.
      if (received.length % 25 === 0) await new Promise((r) => setTimeout(r, 10));
    }
    const expected = [...before.slice(1), ...(await during)].map((e) => e.id);
    expect(received).toEqual(expected);
    expect(await w.eventsWithin(300)).toEqual([]);
  });

  it("never sends another customer's events, and refuses to resume from another customer's event", async () => {
    const mine = await newCustomer(database);
    const theirs = await newCustomer(database);
    const w = await watch(mine).ready();
    const other = await storeEvent(database, theirs.customerId);
    const own = await storeEvent(database, mine.customerId);
    expect(await w.events(1)).toEqual([own.id]);
    expect(await w.eventsWithin(200)).toEqual([]);

    const resume = watch(mine, { afterEventId: other.id });
    await expect(resume.next()).rejects.toMatchObject({ code: 1005, options: { data: { field: 'after_event_id' } } });
  });

  it('refuses an unknown Last-Event-ID with 1005 rather than replaying everything or nothing', async () => {
    const principal = await newCustomer(database);
    await storeEvent(database, principal.customerId);
    const w = watch(principal, { afterEventId: 'evt_does_not_exist' });
    const failure = w.next();
    await expect(failure).rejects.toBeInstanceOf(ApiError);
    await expect(failure).rejects.toMatchObject({ code: 1005 });
    expect(hub.size).toBe(0);
  });

  it('sends only the types asked for, and names a pattern it does not know', async () => {
    const principal = await newCustomer(database);
    const w = await watch(principal, { types: ['vplat.comment.created'] }).ready();
    await storeEvent(database, principal.customerId, 'vplat.message.received');
    const comment = await storeEvent(database, principal.customerId, 'vplat.comment.created');
    expect(await w.events(1)).toEqual([comment.id]);

    // The stream's read matches the patterns in SQL: a prefix, and two exact types.
    const prefixed = await watch(principal, { types: ['vplat.*'] }).ready();
    const exact = await watch(principal, { types: ['service.endpoint.disabled', 'vplat.message.received'] }).ready();
    const disabled = await storeEvent(database, principal.customerId, 'service.endpoint.disabled');
    const message = await storeEvent(database, principal.customerId, 'vplat.message.received');
    const deleted = await storeEvent(database, principal.customerId, 'vplat.comment.deleted');
    expect(await prefixed.events(2)).toEqual([message.id, deleted.id]);
    expect(await exact.events(2)).toEqual([disabled.id, message.id]);

    const bad = watch(principal, { types: ['vplat.*', 'vplat.comment.*'] });
    await expect(bad.next()).rejects.toMatchObject({ code: 2001, message: expect.stringMatching(/^types\[1\]: /) });
  });

  it('sends live events from their notices, without reading the log', async () => {
    const principal = await newCustomer(database);
    // The stream's own connection is closed once it has read the log and waits: any read now fails.
    const own = await openTestDatabase();
    const w = new Watch({ ...deps, db: own.db }, principal, { types: ['vplat.*'] });
    watches.push(w);
    await w.ready();
    expect(await w.eventsWithin(100)).toEqual([]);
    await own.close();
    const stored = [
      await storeEvent(database, principal.customerId, 'vplat.message.received', 1),
      await storeEvent(database, principal.customerId, 'service.endpoint.disabled', 2),
      await storeEvent(database, principal.customerId, 'vplat.comment.created', 3),
    ];
    expect(await w.eventsWithin(500)).toEqual([stored[0]!.id, stored[2]!.id]);
  });

  it('reads an event too large for its notice from the log, in order with the events around it', async () => {
    const principal = await newCustomer(database);
    const w = await watch(principal).ready();
    const small = await storeEvent(database, principal.customerId);
    const { event: large } = await insertEvent(database.db, {
      customerId: principal.customerId,
      seatId: 'seat_test',
      platform: 'vplat',
      type: 'vplat.message.received',
      event: 'im_receive_msg',
      occurredAt: new Date(),
      data: { text: 'x'.repeat(10_000) },
      sourceKey: null,
    });
    const after = await storeEvent(database, principal.customerId);
    expect(await w.events(3)).toEqual([small.id, large.id, after.id]);
    expect(await w.eventsWithin(200)).toEqual([]);
  });

  it('reads the log again when the listening connection was re-established, so a notice lost meanwhile loses no event', async () => {
    const principal = await newCustomer(database);
    const relistens: Array<() => void> = [];
    let holding = false;
    const held: Array<{ payload: string; deliver: (payload: string) => void }> = [];
    // A hub whose notices of this customer the test can hold back, and whose connection it can say
    // was re-established.
    const lossy = new EventHub({
      listen: (channel, onPayload, onRelisten) => {
        if (onRelisten) relistens.push(onRelisten);
        return database.listen(
          channel,
          (payload) => {
            if (holding && payload.startsWith(`${principal.customerId}:`)) held.push({ payload, deliver: onPayload });
            else onPayload(payload);
          },
          onRelisten,
        );
      },
      logger,
    });
    try {
      const w = new Watch({ ...deps, hub: lossy }, principal);
      watches.push(w);
      await w.ready();
      expect(await w.eventsWithin(100)).toEqual([]);
      holding = true;
      const lost = await storeEvent(database, principal.customerId);
      const next = await storeEvent(database, principal.customerId);
      await until(() => held.length === 2, 'both notices to be held');
      holding = false;
      // As postgres.js does after a reconnect: the new connection's first notice is handed on as it
      // is read, and the LISTEN's completion is reported a few promise ticks later. The first
      // notice was lost with the old connection.
      const [, second] = held;
      second!.deliver(second!.payload);
      void Promise.resolve().then(() => relistens.forEach((relisten) => relisten()));
      expect(await w.eventsWithin(1_000)).toEqual([lost.id, next.id]);
    } finally {
      await lossy.close();
    }
  });

  it('sends a message without an event after each quiet heartbeat interval', async () => {
    const principal = await newCustomer(database);
    const w = await watch(principal, {}, 60).ready();
    const started = Date.now();
    const beats = [await w.next(), await w.next(), await w.next()];
    expect(beats).toEqual([0, 1, 2].map(() => ({ done: false, value: {} })));
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
  });

  it('ends without an error when its signal aborts, and gives up its subscription', async () => {
    const principal = await newCustomer(database);
    const w = await watch(principal).ready();
    expect(hub.size).toBe(1);
    const waiting = w.next();
    w.controller.abort();
    await expect(waiting).resolves.toEqual({ done: true, value: undefined });
    expect(hub.size).toBe(0);
  });

  it('gives up its subscription when the reader stops reading', async () => {
    const principal = await newCustomer(database);
    const w = await watch(principal).ready();
    expect(hub.size).toBe(1);
    await w.close();
    expect(hub.size).toBe(0);
  });

  it('reaches the streams of every instance: two hubs on two connections both get an event stored through one', async () => {
    const second = await openTestDatabase();
    const secondHub = new EventHub({ listen: second.listen, logger });
    try {
      const principal = await newCustomer(database);
      const here = await watch(principal).ready();
      const there = await new Watch({ db: second.db, hub: secondHub, heartbeatMs: NO_HEARTBEAT }, principal).ready();
      try {
        const stored = await storeEvent(second, principal.customerId);
        expect(await here.events(1)).toEqual([stored.id]);
        expect(await there.events(1)).toEqual([stored.id]);
      } finally {
        await there.close();
      }
    } finally {
      await secondHub.close();
      await second.close();
    }
  });
});

interface Tenant {
  principal: CustomerPrincipal;
  apiKey: string;
}

async function newTenant(database: Database): Promise<Tenant> {
  const principal = await newCustomer(database);
  const user = await insertUser(database.db, {
    customerId: principal.customerId,
    email: `stream-${principal.customerId}@example.com`,
    name: 'Stream',
  });
  const key = generateApiKey();
  await insertApiKey(database.db, {
    customerId: principal.customerId,
    userId: user!.id,
    name: 'stream',
    prefix: key.prefix,
    keyHash: key.hash,
  });
  return { principal: { ...principal, userId: user!.id }, apiKey: key.plaintext };
}

describe.each(['in-process', 'connect-http'] as const)('GET /v1/events/stream, gateway reaching core %s', (kind) => {
  let database: Database;
  let hub: EventHub;
  let app: FastifyInstance;
  let baseUrl: string;
  let transport: Transport;
  let closeCore: () => Promise<void>;
  /** Core-side streams open now: the generators that a closed connection must end. */
  let open = 0;
  const readers: SseReader[] = [];

  async function startGateway(): Promise<void> {
    // buildApp registers the stream route under /v1, as in every role.
    // This gateway takes no uploads; its media folder is never written.
    app = await buildApp({ transport, logger, media: new FolderMediaStore(os.tmpdir()), maxUploadBytes: 1024 });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  }

  beforeAll(async () => {
    database = await openTestDatabase();
    hub = new EventHub({ listen: database.listen, logger });
    const deps: WatchEventsDeps = { db: database.db, hub, heartbeatMs: 200 };
    const core: CoreHandlers = {
      routes: (router: ConnectRouter) => {
        router.service(AuthService, new AuthHandlers());
        router.service(EventService, {
          async *watchEvents(req, ctx) {
            open++;
            try {
              yield* watchEvents(deps, customerOf(ctx), req, ctx.signal);
            } finally {
              open--;
            }
          },
        });
      },
      interceptors: [errorsInterceptor(logger), accessInterceptor({ db: database.db, adminToken: undefined, ratePerMinute: 1_000 })],
    };
    if (kind === 'connect-http') {
      const server = await startCoreServer(core, { host: '127.0.0.1', port: 0, logger });
      closeCore = server.close;
      transport = createConnectTransport({ baseUrl: server.url, httpVersion: '1.1', useBinaryFormat: true });
    } else {
      closeCore = async () => undefined;
      transport = createInProcessTransport(core);
    }
    await startGateway();
  });

  afterEach(async () => {
    await Promise.all(readers.splice(0).map((r) => r.cancel()));
    await until(() => open === 0, 'every core stream to end');
  });

  afterAll(async () => {
    await app.close();
    await closeCore();
    await hub.close();
    await database.close();
  });

  async function connect(path: string, headers: Record<string, string> = {}): Promise<{ res: Response; sse: SseReader }> {
    const sse = await SseReader.open(`${baseUrl}${path}`, headers);
    readers.push(sse);
    expect(sse.res.status).toBe(200);
    expect(await sse.next()).toEqual({ retry: String(SSE_RETRY_MS) });
    return { res: sse.res, sse };
  }

  it('answers 1001 in the JSON envelope, before any stream, without a key', async () => {
    const res = await fetch(`${baseUrl}/v1/events/stream`);
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toMatchObject({ code: 1001, data: {} });
    expect(open).toBe(0);
  });

  it('answers 1001 rather than 2001 for an anonymous malformed request, and 2001 naming the pattern with a key', async () => {
    const anonymous = await fetch(`${baseUrl}/v1/events/stream?colour=blue`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ code: 1001 });
    const { apiKey } = await newTenant(database);
    const res = await fetch(`${baseUrl}/v1/events/stream?types=vplat.comment.created,vplat.nope`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({
      code: 2001,
      message: expect.stringMatching(/^types\[1\]: unknown event type or pattern "vplat.nope"/),
    });
  });

  it("answers 1005 for a Last-Event-ID that is not one of the caller's events, naming what the client sent", async () => {
    const { apiKey } = await newTenant(database);
    const res = await fetch(`${baseUrl}/v1/events/stream`, {
      headers: { authorization: `Bearer ${apiKey}`, 'last-event-id': 'evt_unknown' },
    });
    expect(res.status).toBe(404);
    const body = (await res.json()) as { code: number; message: string; data: { field: string } };
    expect(body).toMatchObject({
      code: 1005,
      message: expect.stringMatching(/^the Last-Event-ID header: no event "evt_unknown"/),
      data: { field: 'Last-Event-ID' },
    });
    expect(body.message).not.toContain('after_event_id');
    const byQuery = await fetch(`${baseUrl}/v1/events/stream?lastEventId=evt_unknown`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(await byQuery.json()).toMatchObject({
      code: 1005,
      message: expect.stringMatching(/^the lastEventId parameter: /),
      data: { field: 'lastEventId' },
    });
  });

  it('reaches a plain EventSource onmessage handler (the eventsource client) with every event, the type in the data, and no per-type listener', async () => {
    const { EventSource } = await import('eventsource');
    const tenant = await newTenant(database);
    const received: Array<{ id: string; type: string; lastEventId: string }> = [];
    /** What a reader who took frames for named by type would have registered. */
    const byTypeName: string[] = [];
    // A connection pool of its own, destroyed at the end: the gateway's close must find none left.
    const agent = new Agent();
    const source = new EventSource(`${baseUrl}/v1/events/stream`, {
      fetch: (input, init) =>
        fetch(input, {
          ...init,
          headers: { ...init?.headers, authorization: `Bearer ${tenant.apiKey}` },
          dispatcher: agent,
        } as RequestInit),
    });
    try {
      source.onmessage = (m) => {
        const body = JSON.parse(m.data as string) as { id: string; type: string };
        received.push({ id: body.id, type: body.type, lastEventId: m.lastEventId });
      };
      for (const type of ['vplat.comment.created', 'vplat.message.received'])
        source.addEventListener(type, (m) => byTypeName.push((m as { data: string }).data));
      await new Promise<void>((resolve, reject) => {
        source.onopen = () => resolve();
        source.onerror = (e) => reject(new Error(`EventSource failed: ${String(e.message)}`));
      });
      const stored = [
        await storeEvent(database, tenant.principal.customerId, 'vplat.comment.created'),
        await storeEvent(database, tenant.principal.customerId, 'vplat.message.received'),
      ];
      await until(() => received.length === 2, 'two events on onmessage');
      expect(received).toEqual(stored.map((e) => ({ id: e.id, type: e.type, lastEventId: e.id })));
      // Dispatched in order, so by the time onmessage had both, a named listener would have had them too.
      expect(byTypeName).toEqual([]);
    } finally {
      source.close();
      await agent.destroy();
    }
  });

  it('streams each new event as id and data lines carrying the event object, with no event name', async () => {
    const tenant = await newTenant(database);
    const { res, sse } = await connect('/v1/events/stream', { authorization: `Bearer ${tenant.apiKey}` });
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('x-accel-buffering')).toBe('no');
    expect(res.headers.get('x-ratelimit-limit')).toBe('1000');

    const stored = await storeEvent(database, tenant.principal.customerId, 'vplat.comment.created', 7);
    const block = await sse.nextEvent();
    expect(block.id).toBe(stored.id);
    // Unnamed, so generic clients' message handlers get it; the type is in the body.
    expect(block.event).toBe('message');
    expect(JSON.parse(block.data!)).toMatchObject({ type: 'vplat.comment.created' });
    expect(JSON.parse(block.data!)).toEqual(eventBody(stored));
    expect(Object.keys(JSON.parse(block.data!))).toEqual([
      'id',
      'platform',
      'type',
      'event',
      'occurred_at',
      'received_at',
      'seat_id',
      'data',
    ]);
  });

  it('starts with the id of the latest event and no data, where a client that leaves before its first event resumes', async () => {
    const tenant = await newTenant(database);
    const latest = await storeEvent(database, tenant.principal.customerId);
    const { sse } = await connect('/v1/events/stream', { authorization: `Bearer ${tenant.apiKey}` });
    expect(await sse.next()).toEqual({ id: latest.id });
    await sse.cancel();
    const missed = await storeEvent(database, tenant.principal.customerId, 'vplat.comment.created');
    const again = await connect('/v1/events/stream', { authorization: `Bearer ${tenant.apiKey}`, 'last-event-id': latest.id });
    expect(await again.sse.next()).toEqual({ id: latest.id });
    expect((await again.sse.nextEvent()).id).toBe(missed.id);
  });

  it('starts a customer with no event yet at id "start", from which a client that left before its first event resumes', async () => {
    const tenant = await newTenant(database);
    const { sse } = await connect('/v1/events/stream', { authorization: `Bearer ${tenant.apiKey}` });
    expect(await sse.next()).toEqual({ id: 'start' });
    await sse.cancel();
    const missed = await storeEvent(database, tenant.principal.customerId, 'vplat.comment.created');
    const again = await connect('/v1/events/stream', { authorization: `Bearer ${tenant.apiKey}`, 'last-event-id': 'start' });
    expect(await again.sse.next()).toEqual({ id: 'start' });
    expect((await again.sse.nextEvent()).id).toBe(missed.id);
  });

  it('sends heartbeat comments while there is nothing to send', async () => {
    const tenant = await newTenant(database);
    const { sse } = await connect('/v1/events/stream', { authorization: `Bearer ${tenant.apiKey}` });
    expect(await sse.next()).toEqual({ id: 'start' });
    expect(await sse.next()).toEqual({ comment: 'heartbeat' });
  });

  it('resumes after the Last-Event-ID header with exactly the missed events, filtered by types', async () => {
    const tenant = await newTenant(database);
    const { customerId } = tenant.principal;
    const seen = await storeEvent(database, customerId, 'vplat.comment.created', 1);
    const missed = [
      await storeEvent(database, customerId, 'vplat.comment.created', 2),
      await storeEvent(database, customerId, 'vplat.message.received', 3),
      await storeEvent(database, customerId, 'vplat.comment.created', 4),
    ];
    const { sse } = await connect('/v1/events/stream?types=vplat.comment.created', {
      authorization: `Bearer ${tenant.apiKey}`,
      'last-event-id': seen.id,
    });
    expect([(await sse.nextEvent()).id, (await sse.nextEvent()).id]).toEqual([missed[0]!.id, missed[2]!.id]);
    const live = await storeEvent(database, customerId, 'vplat.comment.created', 5);
    expect((await sse.nextEvent()).id).toBe(live.id);
  });

  it('resumes from the lastEventId query parameter for clients that cannot set headers; the header wins over it', async () => {
    const tenant = await newTenant(database);
    const [first, second, third] = await storeEvents(database, tenant.principal.customerId, 3);
    const byQuery = await connect(`/v1/events/stream?lastEventId=${first!.id}`, { authorization: `Bearer ${tenant.apiKey}` });
    expect((await byQuery.sse.nextEvent()).id).toBe(second!.id);
    const both = await connect(`/v1/events/stream?lastEventId=${first!.id}`, {
      authorization: `Bearer ${tenant.apiKey}`,
      'last-event-id': second!.id,
    });
    expect((await both.sse.nextEvent()).id).toBe(third!.id);
  });

  it('ends the core stream and its subscription when the client disconnects', async () => {
    const tenant = await newTenant(database);
    const { sse } = await connect('/v1/events/stream', { authorization: `Bearer ${tenant.apiKey}` });
    expect(open).toBe(1);
    expect(hub.size).toBe(1);
    await sse.cancel();
    await until(() => open === 0 && hub.size === 0, 'the core stream to end after the client left');
  });

  it('ends open streams when the gateway closes, so clients reconnect elsewhere', async () => {
    const tenant = await newTenant(database);
    const { sse } = await connect('/v1/events/stream', { authorization: `Bearer ${tenant.apiKey}` });
    const closing = app.close();
    const rest: Array<SseBlock | undefined> = [];
    for (let block = await sse.next(); block; block = await sse.next()) rest.push(block);
    // Where the stream started, heartbeats until then; last, why the stream ends and a prompt, jittered reconnect.
    expect(rest.shift()).toEqual({ id: 'start' });
    const last = rest.splice(-2);
    expect(rest.every((b) => b?.comment === 'heartbeat')).toBe(true);
    expect(last).toEqual([{ comment: 'gateway closing; reconnect with Last-Event-ID' }, { retry: expect.stringMatching(/^\d+$/) }]);
    await within(5_000, 'the gateway to close', closing);
    await until(() => open === 0, 'the core stream to end after the gateway closed');
    // A fresh gateway on the same core, for any test that follows.
    await startGateway();
  });
});
