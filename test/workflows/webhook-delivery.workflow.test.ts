/**
 * The previous release's per-delivery workflow, kept so runs still open can finish, with stub
 * activities that record their calls: its next attempt hands the delivery to its endpoint's queue
 * and the run ends queued; an attempt the receiver asked to retry is made again after the pause
 * its schedule names, with the next attempt number; after the last pause's attempt the delivery
 * ends failed and the queue is told; a busy endpoint's attempt does not count and goes again after
 * a short pause; and the other answers end the run as they are. Real Temporal dev server, a worker
 * per test; each history is replayed.
 */
import { randomUUID } from 'node:crypto';
import { checkHistory, createTestWorker, useWorkflowTestEnv } from '../helpers/workflow-env';
import type { DeliveryOutcome, WebhookDeliveryInput, WorkflowSignatures } from '../../workflows/shared';

interface Attempt {
  deliveryId: string;
  attempt: number;
  timeoutMs: number;
  at: number;
}

describe('webhookDeliveryWorkflow', () => {
  const env = useWorkflowTestEnv();

  /**
   * Runs one delivery with `answer` as each attempt's outcome (n counts the attempts made); returns
   * its outcome, the attempts, the finishes and its id.
   */
  async function run(answer: (n: number) => DeliveryOutcome, retryScheduleMs: number[] = [200, 200]) {
    const attempts: Attempt[] = [];
    const finishes: { deliveryId: string; status?: string }[] = [];
    const { worker, taskQueue } = await createTestWorker(env, 'delivery-wf', {
      attemptDelivery: async (input: Omit<Attempt, 'at'>) => (attempts.push({ ...input, at: Date.now() }), answer(attempts.length)),
      finishDelivery: async (input: { deliveryId: string; status?: string }) => void finishes.push(input),
    });
    const deliveryId = `dlv_test_${randomUUID()}`;
    // The id the previous release gave these runs.
    const workflowId = `deliver-evt_test-${deliveryId}`;
    const input: WebhookDeliveryInput = { deliveryId, retryScheduleMs, attemptTimeoutMs: 5_000 };
    const outcome = await worker.runUntil(
      env.client.workflow.execute<WorkflowSignatures['webhookDeliveryWorkflow']>('webhookDeliveryWorkflow', {
        taskQueue,
        workflowId,
        args: [input],
      }),
    );
    return { outcome, attempts, finishes, deliveryId, workflowId };
  }

  it("hands the delivery to its endpoint's queue at its next attempt, and ends queued", async () => {
    const { outcome, attempts, finishes, deliveryId, workflowId } = await run(() => 'queued');
    expect(outcome).toBe('queued');
    expect(attempts.map(({ at: _, ...a }) => a)).toEqual([{ deliveryId, attempt: 1, timeoutMs: 5_000 }]);
    expect(finishes).toEqual([]);
    await checkHistory(env, workflowId, { saveAs: 'webhook-delivery-queued' });
  });

  it('makes an attempt the receiver asked to retry again after its pause, with the next attempt number', async () => {
    const { outcome, attempts, workflowId } = await run((n) => (n === 1 ? 'retry' : 'delivered'), [600]);
    expect(outcome).toBe('delivered');
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2]);
    expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(600);
    await checkHistory(env, workflowId, { saveAs: 'webhook-delivery-retried' });
  });

  it("ends failed after the last pause's attempt, and tells the queue", async () => {
    const { outcome, attempts, finishes, deliveryId, workflowId } = await run(() => 'retry', [10]);
    expect(outcome).toBe('failed');
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2]);
    expect(finishes).toEqual([{ deliveryId, status: 'failed' }]);
    await checkHistory(env, workflowId, { saveAs: 'webhook-delivery-failed' });
  });

  it('does not count an attempt a busy endpoint turned away: the same attempt goes again after a short pause', async () => {
    const { outcome, attempts, finishes, workflowId } = await run((n) => (n <= 2 ? 'busy' : 'delivered'), []);
    // With no retry pauses left, a counted attempt 1 that came back busy would have ended failed.
    expect(outcome).toBe('delivered');
    expect(attempts.map((a) => a.attempt)).toEqual([1, 1, 1]);
    expect(finishes).toEqual([]);
    // The first busy pause is 125–375 ms (jittered around 250 ms).
    expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(100);
    await checkHistory(env, workflowId, { saveAs: 'webhook-delivery-busy' });
  });

  it.each<DeliveryOutcome>(['delivered', 'gone', 'cancelled', 'failed'])(
    'ends %s when the attempt says so, telling the queue nothing',
    async (answer) => {
      const { outcome, attempts, finishes, workflowId } = await run(() => answer);
      expect(outcome).toBe(answer);
      expect(attempts).toHaveLength(1);
      expect(finishes).toEqual([]);
      await checkHistory(env, workflowId);
    },
  );
});
