/**
 * A video track record's lifetime, with a stub expiry in place of the record's update and file
 * removal: the record is expired when its URL expires and not before; a soft delete's signal ends
 * the lifetime at once; a record already past its expiry is expired at once; and an expiry that
 * fails (the database away) is tried again until it goes through. Started and signalled as
 * startVideoLifetime and endVideoLifetime do. Real Temporal dev server, a worker per test; each
 * history is replayed.
 */
import { randomUUID } from 'node:crypto';
import { endVideoLifetime, startVideoLifetime } from '../../core/temporal/client';
import { workflowIds } from '../../workflows/workflow-ids';
import { checkHistory, createTestWorker, useWorkflowTestEnv } from '../helpers/workflow-env';

describe('videoLifetimeWorkflow', () => {
  const env = useWorkflowTestEnv();

  /**
   * Runs one record's lifetime to `expiresAtMs` with `expire` as the activity (n counts its calls),
   * doing `during` once it started; returns the expiries' times and videos, and the workflow's id.
   */
  async function run(
    expiresAtMs: number,
    opts: { expire?: (n: number) => Promise<void>; during?: (videoId: string) => Promise<void> } = {},
  ) {
    const expiries: { videoId: string; at: number }[] = [];
    const { worker, taskQueue } = await createTestWorker(env, 'lifetime-wf', {
      expireVideoFile: async ({ videoId }: { videoId: string }) => {
        expiries.push({ videoId, at: Date.now() });
        await opts.expire?.(expiries.length);
      },
    });
    const videoId = `vid_test_${randomUUID()}`;
    const workflowId = workflowIds.videoLifetime(videoId);
    const started = Date.now();
    await worker.runUntil(async () => {
      await startVideoLifetime(env.client, taskQueue, {
        id: videoId,
        customerId: 'cus_test',
        seatId: null,
        expiresAt: new Date(expiresAtMs),
      });
      await opts.during?.(videoId);
      await env.client.workflow.getHandle(workflowId).result();
    });
    return { expiries, videoId, workflowId, started };
  }

  it('expires the record when its URL expires, not before', async () => {
    const expiresAtMs = Date.now() + 1_500;
    const { expiries, videoId, workflowId } = await run(expiresAtMs);
    expect(expiries.map((e) => e.videoId)).toEqual([videoId]);
    // The timer runs from the workflow's own clock, read after the start: it cannot fire early.
    expect(expiries[0]!.at).toBeGreaterThanOrEqual(expiresAtMs - 50);
    await checkHistory(env, workflowId, { saveAs: 'video-lifetime-expired' });
  });

  it('ends at once when a soft delete signals its end, expiring the record then', async () => {
    const { expiries, videoId, workflowId, started } = await run(Date.now() + 10 * 60_000, {
      // However soon after the start: a signal that comes before the handler is set waits for it.
      during: (id) => endVideoLifetime(env.client, id),
    });
    expect(expiries.map((e) => e.videoId)).toEqual([videoId]);
    expect(expiries[0]!.at - started).toBeLessThan(10_000);
    await checkHistory(env, workflowId, { saveAs: 'video-lifetime-ended-early' });
  });

  it('expires at once a record already past its expiry (the repair starting a missed lifetime)', async () => {
    const { expiries, videoId, workflowId, started } = await run(Date.now() - 60_000);
    expect(expiries.map((e) => e.videoId)).toEqual([videoId]);
    expect(expiries[0]!.at - started).toBeLessThan(5_000);
    await checkHistory(env, workflowId);
  });

  it('tries an expiry that failed again until it goes through', async () => {
    const { expiries, videoId, workflowId } = await run(Date.now(), {
      expire: async (n) => {
        if (n === 1) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      },
    });
    expect(expiries.map((e) => e.videoId)).toEqual([videoId, videoId]);
    await checkHistory(env, workflowId);
  });
});
