/**
 * How a publish ends when its workflow gives up on the submit: endPublish as the worker runs it,
 * against the real database. Refused with an answer on every try, it is a service error, which
 * tells the client to publish again; with a try whose outcome was never written (its submit claim
 * still standing), the post may exist, so it ends unconfirmed instead.
 */
import { Track } from '../../gen/vps/seat/v1/seat_pb';
import { createPublishActivities } from '../../activities/publish.activities';
import { claimSubmit, findPublishRecord, insertPublishRecord } from '../../core/db/repositories/publish-records';
import { newId } from '../../core/ids';
import { createLogger } from '../../core/logger';
import { workflowIds } from '../../workflows/workflow-ids';
import { createBoundSeat, createTenant, startStack, uniqueAccount, unreachableUpstream, type Stack } from '../helpers/stack';

describe('endPublish after the submit was given up', () => {
  let stack: Stack;
  let activities: ReturnType<typeof createPublishActivities>;
  let newRecord: () => Promise<string>;

  beforeAll(async () => {
    stack = await startStack();
    const tenant = await createTenant(stack);
    const accountId = uniqueAccount('biz');
    const seat = await createBoundSeat(stack, tenant, Track.VIDEO, accountId);
    activities = createPublishActivities({
      db: stack.database.db,
      sealedBox: stack.sealedBox,
      upstream: unreachableUpstream(),
      events: stack.events,
      logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent', 'test'),
    });
    newRecord = async () => {
      const id = newId('pub');
      await insertPublishRecord(stack.database.db, {
        id,
        customerId: tenant.customerId,
        seatId: seat.id,
        track: 'video',
        kind: 'video',
        channel: 'v1.3',
        accountId,
        request: {},
        status: 'submitted',
        workflowId: workflowIds.publish(id),
      });
      return id;
    };
  }, 120_000);
  afterAll(() => stack?.close());

  it('is a service error when every try was refused with an answer', async () => {
    const recordId = await newRecord();
    const step = await activities.endPublish({ recordId, status: 'service_error', reason: 'the publish could not be submitted: refused' });
    expect(step.status).toBe('service_error');
    const row = await findPublishRecord(stack.database.db, recordId);
    expect(row).toMatchObject({ status: 'service_error', reasonCategory: 'retryable', unconfirmedAt: null });
  });

  it('ends unconfirmed, keeping its last status, when a try may have reached the platform', async () => {
    const recordId = await newRecord();
    expect(await claimSubmit(stack.database.db, recordId)).toBe(true);
    const step = await activities.endPublish({
      recordId,
      status: 'service_error',
      reason: 'the publish could not be submitted: database gone',
    });
    expect(step.status).toBe('submitted');
    const row = await findPublishRecord(stack.database.db, recordId);
    expect(row).toMatchObject({ status: 'submitted', reasonCategory: 'unconfirmed' });
    expect(row!.unconfirmedAt).toBeInstanceOf(Date);
    expect(row!.reason).toBe(
      'the publish could not be submitted: database gone; an earlier try may have reached the platform: check the account before publishing again',
    );
    // Ended once: a second end changes nothing.
    await activities.endPublish({ recordId, status: 'service_error', reason: 'again' });
    expect((await findPublishRecord(stack.database.db, recordId))!.reason).toBe(row!.reason);
  });
});
