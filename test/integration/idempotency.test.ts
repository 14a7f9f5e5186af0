/**
 * Idempotency-Key on write routes: a repeated request returns the first response and does the
 * work once; the same key with another request, or a malformed key, is refused.
 */
import { createHash } from 'node:crypto';
import { create as create$, toBinary } from '@bufbuild/protobuf';
import { sql } from 'drizzle-orm';
import { CreateEndpointRequestSchema, WebhookEndpointService } from '../../gen/vps/webhook/v1/webhook_pb';
import { queryRows } from '../../core/db/client';
import { call } from '../helpers/http';
import { createTenant, startStack, type Stack, type Tenant } from '../helpers/stack';

// Over HTTP the replay must keep the protocol's own headers (a lost Content-Type made it a 5000).
describe.each(['in-memory', 'http'] as const)('Idempotency-Key on write routes, core reached %s', (transport) => {
  let stack: Stack;
  let tenant: Tenant;
  beforeAll(async () => {
    stack = await startStack({ allowInsecureWebhookUrls: true, transport });
    tenant = await createTenant(stack);
  });
  afterAll(() => stack?.close());

  const create = (key: string | undefined, url = 'https://hooks.example.com/a') =>
    call<{ id: string; secret: string }>(stack.baseUrl, 'POST', '/v1/webhook-endpoints', {
      key: tenant.apiKey,
      json: { url, eventTypes: ['*'] },
      ...(key === undefined ? {} : { headers: { 'idempotency-key': key } }),
    });
  const endpointCount = async () =>
    (await call<{ items: unknown[] }>(stack.baseUrl, 'GET', '/v1/webhook-endpoints', { key: tenant.apiKey })).body.data.items.length;

  it('returns the first response to a repeat, secret included, and creates one endpoint', async () => {
    const before = await endpointCount();
    const first = await create('create-endpoint-1');
    const again = await create('create-endpoint-1');
    expect(first.body.code).toBe(0);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(await endpointCount()).toBe(before + 1);
    // The kept response carries the secret, so it is kept sealed: the plaintext is nowhere at rest.
    const stored = await queryRows<{ response: string }>(
      stack.database.db,
      sql`select response from idempotency_keys where key = 'create-endpoint-1' and customer_id = ${tenant.customerId}`,
    );
    expect(stored).toHaveLength(1);
    expect(stored[0]!.response).not.toContain(first.body.data.secret);
    expect(Buffer.from(stored[0]!.response.split('.').pop() ?? '', 'base64url').toString('latin1')).not.toContain(first.body.data.secret);
  });

  it('refuses the same key with a different request', async () => {
    await create('create-endpoint-2', 'https://hooks.example.com/b');
    const other = await create('create-endpoint-2', 'https://hooks.example.com/c');
    expect(other.status).toBe(422);
    expect(other.body).toMatchObject({ code: 2001, message: expect.stringContaining('Idempotency-Key') });
  });

  it('leaves the key free when the request failed, for the corrected request', async () => {
    const failed = await create('create-endpoint-3', 'ftp://hooks.example.com/x');
    expect(failed.body.code).toBe(2001);
    const fixed = await create('create-endpoint-3', 'https://hooks.example.com/d');
    expect(fixed.body.code).toBe(0);
  });

  it('refuses a malformed key, and works as before without one', async () => {
    const bad = await create('has space');
    expect(bad.body).toMatchObject({ code: 2001, message: expect.stringContaining('Idempotency-Key') });
    const before = await endpointCount();
    await create(undefined, 'https://hooks.example.com/e');
    await create(undefined, 'https://hooks.example.com/e');
    expect(await endpointCount()).toBe(before + 2);
  });

  it('keeps keys per customer', async () => {
    const other = await createTenant(stack);
    const mine = await create('shared-key-1', 'https://hooks.example.com/f');
    const theirs = await call<{ id: string }>(stack.baseUrl, 'POST', '/v1/webhook-endpoints', {
      key: other.apiKey,
      json: { url: 'https://hooks.example.com/f', eventTypes: ['*'] },
      headers: { 'idempotency-key': 'shared-key-1' },
    });
    expect(theirs.body.code).toBe(0);
    expect(theirs.body.data.id).not.toBe(mine.body.data.id);
  });

  it('answers 2002 while the first request with a key runs, and lets a later one take over a key its process abandoned', async () => {
    // The claim a first request leaves while it runs: its fingerprint, no response yet.
    const claim = (key: string, ageMinutes: number, url: string) => {
      const request = toBinary(CreateEndpointRequestSchema, create$(CreateEndpointRequestSchema, { url, eventTypes: ['*'] }));
      const fingerprint = `${WebhookEndpointService.typeName}/CreateEndpoint:${createHash('sha256').update(request).digest('hex')}`;
      return queryRows(
        stack.database.db,
        sql`insert into idempotency_keys (customer_id, key, fingerprint, created_at) values (${tenant.customerId}, ${key}, ${fingerprint}, now() - ${ageMinutes} * interval '1 minute')`,
      );
    };
    await claim('running-1', 0, 'https://hooks.example.com/g');
    const busy = await create('running-1', 'https://hooks.example.com/g');
    expect(busy.status).toBe(429);
    expect(busy.body.code).toBe(2002);
    expect(busy.headers.get('retry-after')).toBe('1');
    await claim('abandoned-1', 11, 'https://hooks.example.com/h');
    expect((await create('abandoned-1', 'https://hooks.example.com/h')).body.code).toBe(0);
  });
});
