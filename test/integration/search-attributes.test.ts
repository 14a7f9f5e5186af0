/**
 * Operators find work in the Temporal UI by business ids: every workflow a customer's request
 * starts carries CustomerId, SeatId and RecordId, and a cluster that lacks them gets them at start.
 */
import { connectTemporalClient } from '../../core/temporal/connection';
import { CUSTOMER_ID, ensureSearchAttributes, RECORD_ID, SEAT_ID, SEARCH_ATTRIBUTE_KEYS } from '../../core/temporal/search-attributes';
import { call } from '../helpers/http';
import { eventually, startMediaServer, type MediaServer } from '../helpers/receivers';
import { createTenant, requiredEnv } from '../helpers/stack';
import { bindSandboxSeat, startWorkingStack, type WorkingStack } from '../helpers/working-stack';

describe('search attributes of the workflows', () => {
  let env: WorkingStack;
  let media: MediaServer;
  let temporal: Awaited<ReturnType<typeof connectTemporalClient>>;

  beforeAll(async () => {
    env = await startWorkingStack('search-attributes');
    media = await startMediaServer();
    temporal = await connectTemporalClient({
      address: requiredEnv('TEMPORAL_ADDRESS'),
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TLS: false,
    });
  }, 120_000);
  afterAll(async () => {
    await temporal?.close();
    await media?.close();
    await env?.close();
  });

  it('tags a publish workflow with the customer, the seat and the record, and finds it by them', async () => {
    const tenant = await createTenant(env.stack);
    const { account } = await bindSandboxSeat(env, tenant, 'business');
    const res = await call<{ id: string; seatId: string; workflowId: string }>(
      env.stack.baseUrl,
      'POST',
      '/v1/vplat/v1.3/business/video/publish',
      {
        key: tenant.apiKey,
        json: { account: account.openId, videoUrl: `${media.url}/video.mp4`, caption: 'tagged' },
      },
    );
    expect(res.body.code).toBe(0);
    const record = res.body.data;
    const described = await temporal.client.workflow.getHandle(record.workflowId).describe();
    expect(described.typedSearchAttributes.get(CUSTOMER_ID)).toBe(tenant.customerId);
    expect(described.typedSearchAttributes.get(SEAT_ID)).toBe(record.seatId);
    expect(described.typedSearchAttributes.get(RECORD_ID)).toBe(record.id);
    // Visibility is updated after the start: the query finds it once the index has caught up.
    const found = await eventually(
      async () => {
        const ids: string[] = [];
        for await (const w of temporal.client.workflow.list({ query: `CustomerId="${tenant.customerId}" AND RecordId="${record.id}"` }))
          ids.push(w.workflowId);
        return ids;
      },
      (ids) => ids.length > 0,
    );
    expect(found).toEqual([record.workflowId]);
  });

  it('leaves a namespace that already has the attributes as it is', async () => {
    await ensureSearchAttributes(temporal.client.connection, 'default');
    const listed = await temporal.client.connection.operatorService.listSearchAttributes({ namespace: 'default' });
    for (const key of SEARCH_ATTRIBUTE_KEYS) expect(Object.keys(listed.customAttributes ?? {})).toContain(key.name);
  });
});
