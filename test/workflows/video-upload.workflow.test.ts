/**
 * An upload's durable part, with stub activities that record their calls: a remote source is
 * fetched, the record becomes available and its lifetime starts as a child that outlives the
 * upload (found under the same search attributes) and expires the record on time; a shop track
 * file is handed to the shop instead, with no lifetime; a record that went away on the way ends
 * expired; and an activity that fails puts the failure on the record (failVideoUpload) with its
 * reason, the upload's result carrying the spec code the activity gave, or none for a timeout of
 * our own. Started as startVideoUpload starts it. Real Temporal dev server, a worker per test;
 * each history is replayed.
 */
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';
import { startVideoUpload } from '../../core/temporal/client';
import { CUSTOMER_ID, RECORD_ID, SEAT_ID } from '../../core/temporal/search-attributes';
import { workflowIds } from '../../workflows/workflow-ids';
import { checkHistory, createTestWorker, useWorkflowTestEnv } from '../helpers/workflow-env';
import type { VideoUploadInput, VideoUploadResult } from '../../workflows/shared';

interface Plan {
  track: 'video' | 'shop';
  needsFetch: boolean;
  active: boolean;
}

interface Stubs {
  prepareVideoUpload(input: { videoId: string }): Promise<Plan>;
  fetchVideoSource(input: { videoId: string; maxBytes: number; timeoutMs: number }): Promise<{ stored: boolean }>;
  handOffToShop(input: { videoId: string }): Promise<{ fileId?: string }>;
  makeVideoAvailable(input: { videoId: string; urlTtlMs: number }): Promise<{ expiresAtMs?: number }>;
  failVideoUpload(input: { videoId: string; reason: string }): Promise<void>;
  expireVideoFile(input: { videoId: string }): Promise<void>;
}

const remoteVideo: Plan = { track: 'video', needsFetch: true, active: true };

describe('videoUploadWorkflow', () => {
  const env = useWorkflowTestEnv();

  /**
   * Runs one upload against the stubs (a remote video track record that becomes available for a
   * minute, unless overridden); `after` runs before the worker stops. Returns the upload's result,
   * the stubs' calls in order (name and input), and the ids.
   */
  async function run(stubs: Partial<Stubs>, input: Partial<VideoUploadInput> = {}, after?: (videoId: string) => Promise<void>) {
    const calls: [keyof Stubs, object][] = [];
    const defaults: Stubs = {
      prepareVideoUpload: async () => remoteVideo,
      fetchVideoSource: async () => ({ stored: true }),
      handOffToShop: async () => ({ fileId: 'file_test' }),
      makeVideoAvailable: async () => ({ expiresAtMs: Date.now() + 60_000 }),
      failVideoUpload: async () => undefined,
      expireVideoFile: async () => undefined,
    };
    const activities = Object.fromEntries(
      (Object.keys(defaults) as (keyof Stubs)[]).map((name) => [
        name,
        async (arg: never) => {
          calls.push([name, arg]);
          return ((stubs[name] ?? defaults[name]) as (arg: never) => Promise<unknown>)(arg);
        },
      ]),
    );
    const { worker, taskQueue } = await createTestWorker(env, 'upload-wf', activities);
    const videoId = `vid_test_${randomUUID()}`;
    const upload: VideoUploadInput = { videoId, maxBytes: 1_000_000, fetchTimeoutMs: 30_000, urlTtlMs: 60_000, ...input };
    const result = await worker.runUntil(async () => {
      const handle = await startVideoUpload(env.client, taskQueue, { id: videoId, customerId: 'cus_test', seatId: 'seat_test' }, upload);
      const outcome = await handle.result();
      await after?.(videoId);
      return outcome as VideoUploadResult;
    });
    return { result, calls, videoId, workflowId: workflowIds.videoUpload(videoId) };
  }

  const lifetimeOf = (videoId: string) => env.client.workflow.getHandle(workflowIds.videoLifetime(videoId));
  const names = (calls: [keyof Stubs, object][]) => calls.map(([name]) => name);

  it('fetches a remote source, makes the record available, and starts its lifetime, which outlives the upload and expires the record on time', async () => {
    let expiresAtMs = 0;
    let lifetime: { status: string; attributes: unknown[]; parent: string | undefined } | undefined;
    const { result, calls, videoId, workflowId } = await run(
      { makeVideoAvailable: async () => ({ expiresAtMs: (expiresAtMs = Date.now() + 2_000) }) },
      { maxBytes: 5_000, fetchTimeoutMs: 20_000, urlTtlMs: 2_000 },
      async (id) => {
        const described = await lifetimeOf(id).describe();
        lifetime = {
          status: described.status.name,
          attributes: [
            described.typedSearchAttributes.get(CUSTOMER_ID),
            described.typedSearchAttributes.get(SEAT_ID),
            described.typedSearchAttributes.get(RECORD_ID),
          ],
          parent: described.parentExecution?.workflowId ?? undefined,
        };
        await lifetimeOf(id).result();
      },
    );
    expect(result).toEqual({ status: 'available' });
    expect(calls).toEqual([
      ['prepareVideoUpload', { videoId }],
      ['fetchVideoSource', { videoId, maxBytes: 5_000, timeoutMs: 20_000 }],
      ['makeVideoAvailable', { videoId, urlTtlMs: 2_000 }],
      ['expireVideoFile', { videoId }],
    ]);
    // Still running once the upload ended, under the upload's customer, seat and record.
    expect(lifetime).toEqual({ status: 'RUNNING', attributes: ['cus_test', 'seat_test', videoId], parent: workflowId });
    expect((await lifetimeOf(videoId).describe()).closeTime!.getTime()).toBeGreaterThanOrEqual(expiresAtMs - 50);
    // The database steps ran within workflow tasks, as local activities: only the fetch went through the task queue.
    const events = (await env.client.workflow.getHandle(workflowId).fetchHistory()).events!;
    expect(events.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? [])).toEqual(['fetchVideoSource']);
    expect(events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity')).toHaveLength(2);
    await checkHistory(env, workflowId, { saveAs: 'video-upload-local-steps-fetched-available' });
    await checkHistory(env, workflowIds.videoLifetime(videoId));
  });

  it('hands a shop track file to the shop for a file id, and starts no lifetime', async () => {
    const { result, calls, videoId, workflowId } = await run({
      prepareVideoUpload: async () => ({ track: 'shop', needsFetch: true, active: true }),
    });
    expect(result).toEqual({ status: 'available' });
    expect(names(calls)).toEqual(['prepareVideoUpload', 'fetchVideoSource', 'handOffToShop']);
    expect(calls[2]).toEqual(['handOffToShop', { videoId }]);
    await expect(lifetimeOf(videoId).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    await checkHistory(env, workflowId, { saveAs: 'video-upload-local-steps-shop-handoff' });
  });

  it('ends expired when the shop hand-off finds the record gone (no file id)', async () => {
    const { result, calls, workflowId } = await run({
      prepareVideoUpload: async () => ({ track: 'shop', needsFetch: false, active: true }),
      handOffToShop: async () => ({}),
    });
    expect(result).toEqual({ status: 'expired' });
    expect(names(calls)).toEqual(['prepareVideoUpload', 'handOffToShop']);
    await checkHistory(env, workflowId);
  });

  it('ends expired, touching nothing, when the record is no longer processing', async () => {
    const { result, calls, workflowId } = await run({ prepareVideoUpload: async () => ({ ...remoteVideo, active: false }) });
    expect(result).toEqual({ status: 'expired' });
    expect(names(calls)).toEqual(['prepareVideoUpload']);
    await checkHistory(env, workflowId);
  });

  it('ends expired, with no lifetime, when the record went away during the fetch or before it became available', async () => {
    const fetched = await run({ fetchVideoSource: async () => ({ stored: false }) });
    expect(fetched.result).toEqual({ status: 'expired' });
    expect(names(fetched.calls)).toEqual(['prepareVideoUpload', 'fetchVideoSource']);
    const made = await run({ makeVideoAvailable: async () => ({}) });
    expect(made.result).toEqual({ status: 'expired' });
    expect(names(made.calls)).toEqual(['prepareVideoUpload', 'fetchVideoSource', 'makeVideoAvailable']);
    await expect(lifetimeOf(made.videoId).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
  });

  it('fails the record at once with the reason and code of a source the activity rejects', async () => {
    // Not marked non-retryable by itself: the workflow's policy must know the type.
    const { result, calls, videoId, workflowId } = await run({
      fetchVideoSource: async () => {
        throw ApplicationFailure.create({ message: 'sourceUrl answered 404', type: 'video.rejected', details: [{ code: 2001 }] });
      },
    });
    expect(result).toEqual({ status: 'failed', failureReason: 'sourceUrl answered 404', failureCode: 2001 });
    expect(calls).toEqual([
      ['prepareVideoUpload', { videoId }],
      ['fetchVideoSource', { videoId, maxBytes: 1_000_000, timeoutMs: 30_000 }],
      ['failVideoUpload', { videoId, reason: 'sourceUrl answered 404' }],
    ]);
    await checkHistory(env, workflowId, { saveAs: 'video-upload-local-steps-source-rejected' });
  });

  it('tries a source in trouble three times, then fails the record with the last reason and its code', async () => {
    let tries = 0;
    const { result, calls, videoId, workflowId } = await run({
      fetchVideoSource: async () => {
        tries++;
        throw ApplicationFailure.create({
          message: `sourceUrl answered 503 (try ${tries})`,
          type: 'video.source_unavailable',
          details: [{ code: 3001 }],
        });
      },
    });
    expect(result).toEqual({ status: 'failed', failureReason: 'sourceUrl answered 503 (try 3)', failureCode: 3001 });
    expect(tries).toBe(3);
    expect(calls.at(-1)).toEqual(['failVideoUpload', { videoId, reason: 'sourceUrl answered 503 (try 3)' }]);
    await checkHistory(env, workflowId);
  });

  it('gives up a fetch whose heartbeats stop after three tries, and fails the record with the timeout and no code', async () => {
    let tries = 0;
    const { result, calls, videoId, workflowId } = await run(
      {
        fetchVideoSource: async () => {
          tries++;
          // A stuck transfer: no heartbeat, and no answer until well after the attempt timed out.
          await new Promise((resolve) => setTimeout(resolve, 1_500));
          return { stored: true };
        },
      },
      { fetchHeartbeatTimeoutMs: 200 },
    );
    expect(result.status).toBe('failed');
    expect(result.failureReason).toMatch(/heartbeat/i);
    expect(result).not.toHaveProperty('failureCode');
    expect(tries).toBe(3);
    expect(calls.at(-1)).toEqual(['failVideoUpload', { videoId, reason: result.failureReason }]);
    expect(names(calls)).not.toContain('makeVideoAvailable');
    await checkHistory(env, workflowId);
  });

  it("fails a shop hand-off the shop refuses, with the upstream failure's reason and code", async () => {
    const { result, calls, videoId, workflowId } = await run({
      prepareVideoUpload: async () => ({ track: 'shop', needsFetch: false, active: true }),
      handOffToShop: async () => {
        throw ApplicationFailure.create({
          message: 'The file is not a supported video.',
          type: 'upstream.bad_request',
          nonRetryable: true,
          details: [{ code: 3001, officialCode: 40006 }],
        });
      },
    });
    expect(result).toEqual({ status: 'failed', failureReason: 'The file is not a supported video.', failureCode: 3001 });
    expect(calls).toEqual([
      ['prepareVideoUpload', { videoId }],
      ['handOffToShop', { videoId }],
      ['failVideoUpload', { videoId, reason: 'The file is not a supported video.' }],
    ]);
    await checkHistory(env, workflowId);
  });
});
