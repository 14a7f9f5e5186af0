/**
 * The pre-check workflow's paths that the emulator does not readily produce: a result that never
 * comes within the poll budget, a dimension that failed before the budget ran out, polls that
 * fail, and a submit that keeps failing. Real Temporal dev server, a worker per test, stub
 * activities that record their calls; each history is replayed.
 */
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { checkHistory, createTestWorker, useWorkflowTestEnv } from '../helpers/workflow-env';
import type { PrecheckProgress } from '../../activities/precheck.activities';
import type { PrecheckInput, WorkflowSignatures } from '../../workflows/shared';

interface Stubs {
  submitPrecheckTask(input: { precheckId: string }): Promise<PrecheckProgress>;
  pollPrecheckResult(input: { precheckId: string }): Promise<PrecheckProgress>;
  endPrecheck(input: { precheckId: string; reason: string }): Promise<PrecheckProgress>;
}

describe('precheckWorkflow', () => {
  const env = useWorkflowTestEnv();

  /**
   * Runs one pre-check workflow against the stubs and replays its history (saved as `saveAs` when
   * recording); returns its outcome and the reasons it ended with.
   */
  async function run(stubs: Partial<Stubs>, input: Partial<PrecheckInput> = {}, saveAs?: string) {
    const ends: string[] = [];
    const activities: Stubs = {
      submitPrecheckTask: async () => 'processing',
      pollPrecheckResult: async () => 'processing',
      endPrecheck: async ({ reason }) => {
        ends.push(reason);
        return 'service_error';
      },
      ...stubs,
    };
    const { worker, taskQueue } = await createTestWorker(env, 'precheck-wf', activities);
    const workflowId = `precheck-test-${randomUUID()}`;
    const outcome = await worker.runUntil(
      env.client.workflow.execute<WorkflowSignatures['precheckWorkflow']>('precheckWorkflow', {
        taskQueue,
        workflowId,
        args: [{ precheckId: 'pre_test', pollIntervalMs: 10, pollAttempts: 3, ...input }],
      }),
    );
    await checkHistory(env, workflowId, { saveAs });
    return { outcome, ends };
  }

  it('ends service_error after the poll budget, naming it', async () => {
    let polls = 0;
    const { outcome, ends } = await run({ pollPrecheckResult: async () => (polls++, 'processing') });
    expect(outcome).toBe('service_error');
    expect(polls).toBe(3);
    expect(ends).toEqual([expect.stringMatching(/^the shop gave no result after 3 polls/)]);
  });

  it('stops polling at the first verdict', async () => {
    let polls = 0;
    const { outcome, ends } = await run(
      { pollPrecheckResult: async () => (++polls === 2 ? 'failed' : 'processing') },
      {},
      'precheck-first-verdict',
    );
    expect(outcome).toBe('failed');
    expect(polls).toBe(2);
    expect(ends).toEqual([]);
  });

  it('takes the outcome endPrecheck decides (a dimension already failed)', async () => {
    const { outcome } = await run({ endPrecheck: async () => 'failed' });
    expect(outcome).toBe('failed');
  });

  it('counts a failing poll as one of the budget and reports the last failure', async () => {
    let polls = 0;
    const { outcome, ends } = await run({
      pollPrecheckResult: async () => {
        polls++;
        throw ApplicationFailure.nonRetryable('task_id does not exist', 'upstream.not_found');
      },
    });
    expect(outcome).toBe('service_error');
    expect(polls).toBe(3);
    expect(ends).toEqual([expect.stringMatching(/\(last poll: task_id does not exist\)/)]);
  });

  it('tries a failing submit three times, then ends service_error without polling', async () => {
    let submits = 0;
    let polls = 0;
    const { outcome, ends } = await run(
      {
        submitPrecheckTask: async () => {
          submits++;
          throw ApplicationFailure.retryable('System error.', 'upstream.transient');
        },
        pollPrecheckResult: async () => (polls++, 'processing'),
      },
      {},
      'precheck-submit-failed',
    );
    expect(outcome).toBe('service_error');
    expect([submits, polls]).toEqual([3, 0]);
    expect(ends).toEqual([expect.stringMatching(/^the shop kept failing the submit: System error\./)]);
  }, 30_000);
});
