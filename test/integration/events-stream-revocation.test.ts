/**
 * An open event stream outlives the request that authenticated it: revoking its key or disabling
 * its user must cut it off within seconds on every gateway, not leave it streaming until it
 * reconnects. The heartbeat here is far longer than the waits, so only the withdrawal's notice can
 * end the streams in time.
 */
import os from 'node:os';
import { createConnectTransport } from '@connectrpc/connect-node';
import type { FastifyInstance } from 'fastify';
import { createLogger } from '../../core/logger';
import { FolderMediaStore } from '../../core/media/folder-store';
import { buildApp } from '../../gateway/app';
import { call } from '../helpers/http';
import { SseReader, type SseBlock } from '../helpers/sse';
import { createTenant, recordServiceEvent, startStack, type Stack, type Tenant } from '../helpers/stack';

describe('GET /v1/events/stream after its credential is withdrawn', () => {
  let stack: Stack;
  /** A second gateway, another process's in production: it reaches the same core over Connect HTTP. */
  let second: FastifyInstance;
  let secondUrl: string;
  beforeAll(async () => {
    stack = await startStack({ sseHeartbeatMs: 60_000 });
    second = await buildApp({
      transport: createConnectTransport({ baseUrl: stack.coreUrl, httpVersion: '1.1', useBinaryFormat: true }),
      logger: createLogger('silent', 'test'),
      media: new FolderMediaStore(os.tmpdir()),
      maxUploadBytes: 1024,
    });
    secondUrl = await second.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await second?.close();
    await stack?.close();
  });

  const open = (tenant: Tenant) =>
    SseReader.open(`${stack.baseUrl}/v1/events/stream?includeTest=true`, { authorization: `Bearer ${tenant.apiKey}` });
  const record = (tenant: Tenant, n: number) => recordServiceEvent(stack, tenant, n);

  /** Every block until the server ends the stream; fails if it is still open after `ms`. */
  async function untilEnded(reader: SseReader, ms: number): Promise<SseBlock[]> {
    const blocks: SseBlock[] = [];
    const deadline = Date.now() + ms;
    for (let block = await reader.next(ms); block; block = await reader.next(Math.max(1, deadline - Date.now()))) blocks.push(block);
    return blocks;
  }

  it('ends the stream of a revoked key within seconds, long before its next heartbeat, and refuses its reconnect with 1001', async () => {
    const tenant = await createTenant(stack);
    const reader = await open(tenant);
    await record(tenant, 1);
    expect(JSON.parse((await reader.nextEvent()).data!)).toMatchObject({ type: 'service.endpoint.test' });

    await stack.admin.revokeApiKey({ id: tenant.apiKeyId });
    const rest = await untilEnded(reader, 3_000);
    // Nothing but heartbeats after the revocation: the stream ended instead of going on.
    expect(rest.every((b) => b.comment === 'heartbeat' || b.retry !== undefined)).toBe(true);
    await reader.cancel();
    const again = await call(stack.baseUrl, 'GET', '/v1/events/stream', { key: tenant.apiKey });
    expect([again.status, again.body.code]).toEqual([401, 1001]);
  });

  it("ends the key's streams on every gateway within seconds of the revocation", async () => {
    const tenant = await createTenant(stack);
    const onFirst = await open(tenant);
    const onSecond = await SseReader.open(`${secondUrl}/v1/events/stream?includeTest=true`, { authorization: `Bearer ${tenant.apiKey}` });
    await record(tenant, 1);
    for (const reader of [onFirst, onSecond])
      expect(JSON.parse((await reader.nextEvent()).data!)).toMatchObject({ type: 'service.endpoint.test' });

    await stack.admin.revokeApiKey({ id: tenant.apiKeyId });
    const [restFirst, restSecond] = await Promise.all([untilEnded(onFirst, 3_000), untilEnded(onSecond, 3_000)]);
    for (const rest of [restFirst, restSecond]) expect(rest.every((b) => b.comment === 'heartbeat' || b.retry !== undefined)).toBe(true);
    await Promise.all([onFirst.cancel(), onSecond.cancel()]);
    for (const base of [stack.baseUrl, secondUrl]) {
      const again = await call(base, 'GET', '/v1/events/stream', { key: tenant.apiKey });
      expect([again.status, again.body.code]).toEqual([401, 1001]);
    }
  });

  it("ends the streams of a disabled user, and keeps other customers' streams open", async () => {
    const [tenant, other] = [await createTenant(stack), await createTenant(stack)];
    const [reader, bystander] = [await open(tenant), await open(other)];
    await stack.admin.setUserDisabled({ userId: tenant.userId, disabled: true });
    await untilEnded(reader, 3_000);
    await reader.cancel();
    // Several heartbeats later the other stream still delivers.
    await record(other, 1);
    expect(JSON.parse((await bystander.nextEvent(3_000)).data!)).toMatchObject({ type: 'service.endpoint.test' });
    await bystander.cancel();
  });
});
