/**
 * The event surface as its documents describe it, seen by a client over real HTTP: the names an
 * event carries (rows stored under the names of earlier releases included), the stream as the
 * served OpenAPI document shows it against a real stream, and what an `EventSource` (the
 * `eventsource` package) sees when the id it saved is gone, with the reconciliation the document
 * prescribes.
 */
import { eq } from 'drizzle-orm';
import { Agent } from 'undici';
import { insertEvent, type EventRow } from '../../core/db/repositories/events';
import { events as eventsTable } from '../../core/db/schema';
import { call } from '../helpers/http';
import { parseSse, SseReader, type SseBlock } from '../helpers/sse';
import { createTenant, startStack, type Stack, type Tenant } from '../helpers/stack';

interface EventJson {
  id: string;
  platform: string;
  type: string;
  event: string;
  data: Record<string, unknown>;
}
interface StreamOperation {
  description: string;
  responses: Record<string, { description: string; content?: Record<string, { example?: string; schema?: unknown }> }>;
}
interface Document {
  paths: Record<string, Record<string, StreamOperation>>;
  components: { schemas: { Event: { properties: Record<string, unknown> } } };
}

describe('events as documented', () => {
  let stack: Stack;
  let doc: Document;

  beforeAll(async () => {
    // Heartbeats every 200 ms, so the documented heartbeat comment shows up within the test.
    stack = await startStack({ sseHeartbeatMs: 200 });
    const res = await fetch(`${stack.baseUrl}/openapi.json`);
    expect(res.status).toBe(200);
    doc = (await res.json()) as Document;
  }, 120_000);
  afterAll(() => stack?.close());

  const record = (tenant: Tenant, row: { type: string; event: string; platform: string }, data: Record<string, unknown> = {}) =>
    insertEvent(stack.database.db, {
      customerId: tenant.customerId,
      seatId: null,
      ...row,
      occurredAt: new Date(),
      data,
      sourceKey: null,
    }).then((s) => s.event);
  const pull = async (tenant: Tenant, query = '') => {
    const res = await call<{ items: EventJson[]; nextCursor: string; hasMore: boolean }>(stack.baseUrl, 'GET', `/v1/events${query}`, {
      key: tenant.apiKey,
    });
    expect(res.body.code).toBe(0);
    return res.body.data;
  };

  it('shows events stored under the names of earlier releases with the catalogue names, in pull, lookup and stream', async () => {
    const tenant = await createTenant(stack);
    // What the previous release wrote for the events it made itself.
    const former = [
      { platform: 'vplat', type: 'vplat.message.sent', event: 'message.send', now: 'im_send_msg' },
      { platform: 'vplat', type: 'vplat.publish.status_changed', event: 'publish.status_changed', now: 'vplat.publish.status_changed' },
      { platform: 'vplat', type: 'vplat.publish.unconfirmed', event: 'publish.unconfirmed', now: 'vplat.publish.unconfirmed' },
      {
        platform: 'vplat',
        type: 'vplat.account.authorization_removed',
        event: 'token_refresh_refused',
        now: 'vplat.account.authorization_removed',
      },
      { platform: 'service', type: 'service.endpoint.disabled', event: 'endpoint_disabled', now: 'service.endpoint.disabled' },
      { platform: 'service', type: 'service.endpoint.test', event: 'endpoint_test', now: 'service.endpoint.test' },
    ];
    const rows: EventRow[] = [];
    for (const f of former) rows.push(await record(tenant, f));
    const expected = former.map((f, i) => ({ id: rows[i]!.id, platform: f.platform, type: f.type, event: f.now }));
    const names = (e: EventJson) => ({ id: e.id, platform: e.platform, type: e.type, event: e.event });

    expect((await pull(tenant, '?includeTest=true')).items.map(names)).toEqual(expected);
    const one = await call<EventJson>(stack.baseUrl, 'GET', `/v1/events/${rows[0]!.id}`, { key: tenant.apiKey });
    expect(names(one.body.data)).toEqual(expected[0]);

    const sse = await SseReader.open(`${stack.baseUrl}/v1/events/stream?includeTest=true`, {
      authorization: `Bearer ${tenant.apiKey}`,
      'last-event-id': 'start',
    });
    try {
      const streamed: EventJson[] = [];
      while (streamed.length < former.length) streamed.push(JSON.parse((await sse.nextEvent()).data!) as EventJson);
      expect(streamed.map(names)).toEqual(expected);
    } finally {
      await sse.cancel();
    }
    // Subscription filters name types, which did not change: the old rows still match them.
    expect((await pull(tenant, '?types=vplat.message.sent')).items.map((e) => e.id)).toEqual([rows[0]!.id]);
  });

  it('sends the stream exactly as the served OpenAPI document shows it, frame by frame', async () => {
    const tenant = await createTenant(stack);
    const operation = doc.paths['/v1/events/stream']!.get!;
    const ok = operation.responses['200']!;
    const example = ok.content!['text/event-stream']!.example!;
    const documented = parseSse(example);

    const sse = await SseReader.open(`${stack.baseUrl}/v1/events/stream`, { authorization: `Bearer ${tenant.apiKey}` });
    const real: SseBlock[] = [];
    try {
      expect(sse.res.status).toBe(200);
      real.push((await sse.next())!, (await sse.next())!);
      const stored = await record(tenant, { platform: 'vplat', type: 'vplat.comment.created', event: 'comment.update' }, { comment_id: 1 });
      real.push(await sse.nextEvent());
      real.push((await sse.next())!);
      expect(real[2]!.id).toBe(stored.id);
    } finally {
      await sse.cancel();
    }

    // The same frames in the same order: retry, the starting id, an event, a heartbeat.
    const shape = (b: SseBlock) => Object.keys(b).sort();
    expect(real.map(shape)).toEqual(documented.map(shape));
    expect(real[0]).toEqual(documented[0]);
    expect(real[1]).toEqual({ id: 'start' });
    expect(real[3]).toEqual(documented[3]);
    // An unnamed event (the parser's "message"), as documented and as EventSource onmessage needs.
    expect(example).not.toMatch(/^event:/m);
    expect(real[2]!.event).toBe('message');
    expect(documented[2]!.event).toBe('message');
    expect(ok.description).toMatch(/no `event:` field/);
    // Its data is the Event object in both, field for field.
    const eventFields = Object.keys(doc.components.schemas.Event.properties);
    expect(Object.keys(JSON.parse(documented[2]!.data!) as object)).toEqual(eventFields);
    expect(Object.keys(JSON.parse(real[2]!.data!) as object)).toEqual(eventFields);
    expect(documented[2]!.id).toBe((JSON.parse(documented[2]!.data!) as EventJson).id);
  });

  it('closes an EventSource for good with the documented 404 when its saved id is gone; a new one and GET /v1/events reconcile', async () => {
    const { EventSource } = await import('eventsource');
    const tenant = await createTenant(stack);
    const documented = doc.paths['/v1/events/stream']!.get!;
    expect(documented.description).toMatch(/saved id is gone \(404, code 1005\)/);
    expect(documented.description).toMatch(/closes it for good/);
    expect(documented.responses['404']!.description).toMatch(/^1005: /);

    const seen = await record(tenant, { platform: 'vplat', type: 'vplat.message.received', event: 'im_receive_msg' }, { n: 1 });
    const { nextCursor } = await pull(tenant);
    const missed = await record(tenant, { platform: 'vplat', type: 'vplat.message.received', event: 'im_receive_msg' }, { n: 2 });
    // The log no longer holds the id the client saved (restored from a backup taken before it).
    await stack.database.db.delete(eventsTable).where(eq(eventsTable.id, seen.id));

    const agent = new Agent();
    let requests = 0;
    const authorized = (input: string | URL, init?: RequestInit) => {
      requests++;
      return fetch(input, {
        ...init,
        headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${tenant.apiKey}` },
        dispatcher: agent,
      } as RequestInit);
    };
    const stale = new EventSource(`${stack.baseUrl}/v1/events/stream?lastEventId=${seen.id}`, { fetch: authorized });
    const fresh: Array<{ close(): void }> = [];
    try {
      const failure = await new Promise<{ code?: number; message?: string }>((resolve) => {
        stale.onerror = (e) => resolve(e);
        stale.onopen = () => resolve({ message: 'opened' });
      });
      expect(failure.code).toBe(404);
      expect(stale.readyState).toBe(EventSource.CLOSED);
      expect(requests).toBe(1);

      // Reconcile as documented: a new EventSource without a resume id, then the pull from the cursor kept.
      const received: string[] = [];
      const again = new EventSource(`${stack.baseUrl}/v1/events/stream`, { fetch: authorized });
      fresh.push(again);
      again.onmessage = (m) => received.push((JSON.parse(m.data as string) as EventJson).id);
      await new Promise<void>((resolve, reject) => {
        again.onopen = () => resolve();
        again.onerror = (e) => reject(new Error(`EventSource failed: ${String(e.message)}`));
      });
      const page = await pull(tenant, `?cursor=${encodeURIComponent(nextCursor)}`);
      expect(page.items.map((e) => e.id)).toEqual([missed.id]);
      expect(page.hasMore).toBe(false);
      const live = await record(tenant, { platform: 'vplat', type: 'vplat.message.received', event: 'im_receive_msg' }, { n: 3 });
      const deadline = Date.now() + 5_000;
      while (received.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(received).toEqual([live.id]);
      // The stale source never tried again.
      expect(stale.readyState).toBe(EventSource.CLOSED);
    } finally {
      stale.close();
      for (const s of fresh) s.close();
      await agent.destroy();
    }
  });
});
