/**
 * The expiry repair's pacing, and an upload that meets the repair: the repair runs a round every
 * interval, follows at once while rounds find more, and takes new settings from a signal; an
 * upload whose lifetime the repair already started ends available rather than failed. Real
 * Temporal dev server, a worker per test, stub activities; each history is replayed.
 */
import { randomUUID } from 'node:crypto';
import { checkHistory, createTestWorker, useWorkflowTestEnv } from '../helpers/workflow-env';
import {
  VIDEO_EXPIRY_REPAIR_SETTINGS_SIGNAL,
  type VideoExpiryRepairInput,
  type VideoExpiryRepairRound,
  type VideoLifetimeInput,
  type VideoUploadInput,
  type WorkflowSignatures,
} from '../../workflows/shared';

describe('videoExpiryRepairWorkflow', () => {
  const env = useWorkflowTestEnv();

  it('runs a round every interval, and the next one at once while a round leaves more', async () => {
    const workflowId = `video-expiry-repair-test-${randomUUID()}`;
    const rounds: number[] = [];
    const { worker, taskQueue } = await createTestWorker(env, 'repair-wf', {
      repairVideoLifetimes: async (): Promise<VideoExpiryRepairRound> => {
        rounds.push(Date.now());
        return { confirmed: 100, failed: 0, more: rounds.length < 3 };
      },
    });
    await worker.runUntil(async () => {
      const input: VideoExpiryRepairInput = { intervalMs: 1_000, graceMs: 500 };
      const handle = await env.client.workflow.start<WorkflowSignatures['videoExpiryRepairWorkflow']>('videoExpiryRepairWorkflow', {
        taskQueue,
        workflowId,
        args: [input],
      });
      while (rounds.length < 4) await new Promise((resolve) => setTimeout(resolve, 50));
      await handle.terminate('test over');
    });
    // Rounds 2 and 3 follow at once; round 4 waits the interval after the third left nothing more.
    expect(rounds[2]! - rounds[0]!).toBeLessThan(1_000);
    expect(rounds[3]! - rounds[2]!).toBeGreaterThanOrEqual(1_000);
    await checkHistory(env, workflowId);
  });

  it('takes the settings a starting worker signals from the next round on', async () => {
    const workflowId = `video-expiry-repair-test-${randomUUID()}`;
    const graces: number[] = [];
    const { worker, taskQueue } = await createTestWorker(env, 'repair-wf', {
      repairVideoLifetimes: async ({ graceMs }: { graceMs: number }): Promise<VideoExpiryRepairRound> => {
        graces.push(graceMs);
        return { confirmed: 0, failed: 0, more: false };
      },
    });
    await worker.runUntil(async () => {
      const first: VideoExpiryRepairInput = { intervalMs: 300, graceMs: 1 };
      const next: VideoExpiryRepairInput = { intervalMs: 300, graceMs: 2 };
      const start = { taskQueue, workflowId, signal: VIDEO_EXPIRY_REPAIR_SETTINGS_SIGNAL };
      await env.client.workflow.signalWithStart<WorkflowSignatures['videoExpiryRepairWorkflow'], [VideoExpiryRepairInput]>(
        'videoExpiryRepairWorkflow',
        { ...start, args: [first], signalArgs: [first] },
      );
      while (graces.length < 1) await new Promise((resolve) => setTimeout(resolve, 50));
      // A second worker's start: signalled, not started again.
      const again = await env.client.workflow.signalWithStart<WorkflowSignatures['videoExpiryRepairWorkflow'], [VideoExpiryRepairInput]>(
        'videoExpiryRepairWorkflow',
        { ...start, args: [next], signalArgs: [next] },
      );
      while (!graces.includes(2)) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(again.signaledRunId).toBe((await again.describe()).runId);
      await again.terminate('test over');
    });
    expect(graces[0]).toBe(1);
    expect(graces.at(-1)).toBe(2);
    // Terminated, as a repair only ever ends: its rounds, the settings signal and its timers.
    await checkHistory(env, workflowId, { saveAs: 'video-expiry-repair-new-settings' });
  });
});

describe('videoUploadWorkflow meeting the expiry repair', () => {
  const env = useWorkflowTestEnv();

  it('ends available when the repair started the lifetime first, and one lifetime runs', async () => {
    const videoId = `vid_test_${randomUUID()}`;
    const expiresAtMs = Date.now() + 60_000;
    const { worker, taskQueue } = await createTestWorker(env, 'upload-wf', {
      prepareVideoUpload: async () => ({ track: 'video', needsFetch: false, active: true }),
      makeVideoAvailable: async () => ({ expiresAtMs }),
      expireVideoFile: async () => undefined,
    });
    const { result, lifetimeRunId, runningRunId } = await worker.runUntil(async () => {
      // The repair's start, as core/temporal/client.ts makes it.
      const lifetime: VideoLifetimeInput = { videoId, expiresAtMs };
      const started = await env.client.workflow.start<WorkflowSignatures['videoLifetimeWorkflow']>('videoLifetimeWorkflow', {
        taskQueue,
        workflowId: `video-expiry-${videoId}`,
        args: [lifetime],
      });
      const upload: VideoUploadInput = { videoId, maxBytes: 1_000, fetchTimeoutMs: 1_000, urlTtlMs: 60_000 };
      const outcome = await env.client.workflow.execute<WorkflowSignatures['videoUploadWorkflow']>('videoUploadWorkflow', {
        taskQueue,
        workflowId: `upload-${videoId}`,
        args: [upload],
      });
      const running = await started.describe();
      await started.terminate('test over');
      return {
        result: outcome,
        lifetimeRunId: started.firstExecutionRunId,
        runningRunId: running.status.name === 'RUNNING' ? running.runId : undefined,
      };
    });
    expect(result).toEqual({ status: 'available' });
    expect(runningRunId).toBe(lifetimeRunId);
    await checkHistory(env, `upload-${videoId}`, { saveAs: 'video-upload-lifetime-already-started' });
  });
});
