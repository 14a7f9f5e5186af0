/**
 * A publish's path from its one submit to its end, with stub activities that record their calls in
 * place of the platform and the record: the status is followed until it is final and a video
 * post's late post id is waited for, a bounded while; a submit the platform keeps refusing ends
 * service_error, tried five times only when the refusals were transient; a submit whose outcome is
 * unknown is never sent again but reconciled against the account's posts (video) or ends
 * unconfirmed at once (shop); and a publish with no final status in time is reconciled once (video)
 * before it ends unconfirmed. A failed refresh or reconcile never ends a publish by itself. Short
 * timings passed in the input (one pause, or two). Started as startPublish starts it. Real Temporal
 * dev server, a worker per test; each history is replayed.
 */
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { startPublish } from '../../core/temporal/client';
import { workflowIds } from '../../workflows/workflow-ids';
import { checkHistory, createTestWorker, useWorkflowTestEnv } from '../helpers/workflow-env';
import type { PublishEnd, PublishInput, PublishStatusValue, PublishStep, PublishTimings, SubmitResult } from '../../workflows/shared';

interface Stubs {
  submitPublish(input: { recordId: string }): Promise<SubmitResult>;
  refreshPublish(input: { recordId: string }): Promise<PublishStep>;
  reconcilePublish(input: { recordId: string }): Promise<PublishStep>;
  endPublish(input: { recordId: string; status: PublishEnd; reason: string }): Promise<PublishStep>;
}

const step = (status: PublishStatusValue, hasPostId = false): PublishStep => ({ status, hasPostId });
const submitted: SubmitResult = { step: step('submitted'), outcomeUnknown: false };
const unknown: SubmitResult = { step: step('submitted'), outcomeUnknown: true };
/** A step that fails as the activities fail a call the platform refused outright (asActivityFailure). */
const refused = (message: string) => ApplicationFailure.create({ message, type: 'upstream.bad_request', nonRetryable: true });

/** One poll at the spec's pace and no slower ones (a test adds one where it needs two pauses); one post-id poll. */
const timings: PublishTimings = {
  pollIntervalMs: 10,
  pollAttempts: 1,
  slowPollScheduleMs: [],
  postIdWaitMs: 10,
  submitTimeoutMs: 5_000,
  submitRetryInitialMs: 10,
};
/** A second pause, at the slower pace. */
const twoPauses: Partial<PublishTimings> = { slowPollScheduleMs: [10] };

describe('publishWorkflow', () => {
  const env = useWorkflowTestEnv();

  /**
   * Runs one publish against the stubs: n counts each stub's calls. endPublish answers as the
   * activity does, service_error or the last known status (submitted here). Returns the result,
   * the calls in order, the reasons it ended with and its id.
   */
  async function run(
    track: 'video' | 'shop',
    stubs: { [K in keyof Stubs]?: (n: number) => ReturnType<Stubs[K]> },
    over: Partial<PublishTimings> = {},
  ) {
    const calls: (keyof Stubs)[] = [];
    const ends: { status: PublishEnd; reason: string }[] = [];
    const recordId = `pub_test_${randomUUID()}`;
    const counted =
      <K extends keyof Stubs>(name: K, fallback: (n: number) => ReturnType<Stubs[K]>) =>
      async (input: { recordId: string }) => {
        expect(input.recordId).toBe(recordId);
        calls.push(name);
        return (stubs[name] ?? fallback)(calls.filter((c) => c === name).length);
      };
    const { worker, taskQueue } = await createTestWorker(env, 'publish-wf', {
      submitPublish: counted('submitPublish', async () => submitted),
      refreshPublish: counted('refreshPublish', async () => step('publish_processing')),
      reconcilePublish: counted('reconcilePublish', async () => step('submitted')),
      endPublish: async ({ status, reason }: { recordId: string; status: PublishEnd; reason: string }) => {
        calls.push('endPublish');
        ends.push({ status, reason });
        return step(status === 'service_error' ? 'service_error' : 'submitted');
      },
    });
    const workflowId = workflowIds.publish(recordId);
    const input: PublishInput = { recordId, track, ...timings, ...over };
    const result = await worker.runUntil(async () => {
      await startPublish(env.client, taskQueue, { id: recordId, customerId: 'cus_test', seatId: 'seat_test', workflowId }, input);
      return env.client.workflow.getHandle(workflowId).result() as Promise<PublishStep>;
    });
    return { result, calls, ends, workflowId };
  }

  describe('a submit the platform accepted', () => {
    it('follows the status until it is final, then waits for the post id of a video post', async () => {
      const { result, calls, ends, workflowId } = await run('video', {
        refreshPublish: async (n) => (n === 1 ? step('publish_complete') : step('publish_complete', true)),
      });
      expect(result).toEqual(step('publish_complete', true));
      expect(calls).toEqual(['submitPublish', 'refreshPublish', 'refreshPublish']);
      expect(ends).toEqual([]);
      await checkHistory(env, workflowId, { saveAs: 'publish-video-complete' });
    });

    it('ends complete without a post id once the post-id wait is over, without ending the record', async () => {
      const { result, calls, ends, workflowId } = await run('video', { refreshPublish: async () => step('publish_complete') });
      expect(result).toEqual(step('publish_complete'));
      // One status poll, then postIdWaitMs / pollIntervalMs post-id polls (one).
      expect(calls).toEqual(['submitPublish', 'refreshPublish', 'refreshPublish']);
      expect(ends).toEqual([]);
      await checkHistory(env, workflowId);
    });

    it('ends a shop post at its final status: there is no post id to wait for', async () => {
      const { result, calls, workflowId } = await run('shop', { refreshPublish: async () => step('publish_complete') });
      expect(result).toEqual(step('publish_complete'));
      expect(calls).toEqual(['submitPublish', 'refreshPublish']);
      await checkHistory(env, workflowId);
    });

    it('ends at once when the submit already ended the publish (the platform refused the post)', async () => {
      const { result, calls, workflowId } = await run('video', {
        submitPublish: async () => ({ step: step('publish_failed'), outcomeUnknown: false }),
      });
      expect(result).toEqual(step('publish_failed'));
      expect(calls).toEqual(['submitPublish']);
      await checkHistory(env, workflowId);
    });
  });

  describe('a submit that failed', () => {
    it('tries a transiently refused submit five times, then ends service_error with its reason', async () => {
      const { result, calls, ends, workflowId } = await run('video', {
        submitPublish: async () => {
          throw ApplicationFailure.create({ message: 'Rate limit exceeded.', type: 'upstream.rate_limited' });
        },
      });
      expect(result).toEqual(step('service_error'));
      expect(calls).toEqual([...Array<string>(5).fill('submitPublish'), 'endPublish']);
      expect(ends).toEqual([{ status: 'service_error', reason: 'the publish could not be submitted: Rate limit exceeded.' }]);
      await checkHistory(env, workflowId, { saveAs: 'publish-submit-refused' });
    });

    it('tries a submit whose failure is final once, then ends service_error', async () => {
      const { result, calls, ends, workflowId } = await run('shop', {
        submitPublish: async () => {
          throw ApplicationFailure.nonRetryable('publish record pub_x does not exist', 'publish.record_missing');
        },
      });
      expect(result).toEqual(step('service_error'));
      expect(calls).toEqual(['submitPublish', 'endPublish']);
      expect(ends).toEqual([
        { status: 'service_error', reason: 'the publish could not be submitted: publish record pub_x does not exist' },
      ]);
      await checkHistory(env, workflowId);
    });
  });

  describe('a submit whose outcome is unknown', () => {
    it('is never sent again: the video post is looked for at the poll cadence, and found complete', async () => {
      const { result, calls, ends, workflowId } = await run(
        'video',
        {
          submitPublish: async () => unknown,
          reconcilePublish: async (n) => (n === 1 ? step('submitted') : step('publish_complete', true)),
        },
        twoPauses,
      );
      expect(result).toEqual(step('publish_complete', true));
      expect(calls).toEqual(['submitPublish', 'reconcilePublish', 'reconcilePublish']);
      expect(ends).toEqual([]);
      await checkHistory(env, workflowId, { saveAs: 'publish-unknown-reconciled' });
    });

    it('ends unconfirmed when no matching post turns up (a failed look counting as none)', async () => {
      const { result, calls, ends, workflowId } = await run(
        'video',
        {
          submitPublish: async () => unknown,
          reconcilePublish: async (n) => {
            if (n === 1) throw refused('Invalid access token.');
            return step('submitted');
          },
        },
        twoPauses,
      );
      expect(result).toEqual(step('submitted'));
      expect(calls).toEqual(['submitPublish', 'reconcilePublish', 'reconcilePublish', 'endPublish']);
      expect(ends).toEqual([
        {
          status: 'publish_unconfirmed',
          reason: expect.stringMatching(/^the platform did not confirm the publish and no matching post was found/),
        },
      ]);
      await checkHistory(env, workflowId);
    });

    it('ends a shop post unconfirmed at once: the shop lists no posts to look in', async () => {
      const { result, calls, ends, workflowId } = await run('shop', { submitPublish: async () => unknown });
      expect(result).toEqual(step('submitted'));
      expect(calls).toEqual(['submitPublish', 'endPublish']);
      expect(ends).toEqual([{ status: 'publish_unconfirmed', reason: expect.stringMatching(/^the shop did not answer the post/) }]);
      await checkHistory(env, workflowId, { saveAs: 'publish-shop-unknown-unconfirmed' });
    });
  });

  describe('no final status within the polls', () => {
    it('looks for the video post once, and ends complete when it is found', async () => {
      const { result, calls, ends, workflowId } = await run('video', { reconcilePublish: async () => step('publish_complete', true) });
      expect(result).toEqual(step('publish_complete', true));
      expect(calls).toEqual(['submitPublish', 'refreshPublish', 'reconcilePublish']);
      expect(ends).toEqual([]);
      await checkHistory(env, workflowId, { saveAs: 'publish-video-reconciled-after-polls' });
    });

    it('ends unconfirmed when the post is not found either, a failed poll not ending it sooner', async () => {
      const { result, calls, ends, workflowId } = await run(
        'video',
        {
          refreshPublish: async (n) => {
            if (n === 1) throw refused('Internal error.');
            return step('publish_processing');
          },
        },
        twoPauses,
      );
      expect(result).toEqual(step('submitted'));
      expect(calls).toEqual(['submitPublish', 'refreshPublish', 'refreshPublish', 'reconcilePublish', 'endPublish']);
      expect(ends).toEqual([
        {
          status: 'publish_unconfirmed',
          reason: expect.stringMatching(/^the platform reported no final status in time and no matching post was found/),
        },
      ]);
      await checkHistory(env, workflowId);
    });

    it('ends a shop post unconfirmed without looking for it', async () => {
      const { calls, ends, workflowId } = await run('shop', {});
      expect(calls).toEqual(['submitPublish', 'refreshPublish', 'endPublish']);
      expect(ends).toEqual([
        { status: 'publish_unconfirmed', reason: expect.stringMatching(/^the platform reported no final status in time/) },
      ]);
      await checkHistory(env, workflowId);
    });
  });
});
