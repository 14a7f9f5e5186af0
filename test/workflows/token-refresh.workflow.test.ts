/**
 * A seat's token refresh schedule, with a stub refresh in place of the platform: the workflow
 * refreshes again when the last step says the next refresh is due, never sooner than its minimum
 * interval, ends when the seat is unbound, needs re-authorization or needs no more refreshing,
 * keeps trying through a platform outage instead of ending, and fails on a refusal the activity
 * marks final. Started as startTokenRefresh starts it.
 * Not covered: the continue-as-new after 100 rounds, which no input shortens (each round's timer
 * costs the dev server about a second). Real Temporal dev server, a worker per test; each history
 * is replayed.
 */
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { WorkflowFailedError } from '@temporalio/client';
import { startTokenRefresh } from '../../core/temporal/client';
import { workflowIds } from '../../workflows/workflow-ids';
import { checkHistory, createTestWorker, useWorkflowTestEnv } from '../helpers/workflow-env';
import type { TokenRefreshInput, TokenRefreshStep } from '../../workflows/shared';

interface RefreshCall {
  seatId: string;
  marginSeconds: number;
  at: number;
}

/** How a run ended: its last step, or the error its result() threw. */
interface Outcome {
  result?: TokenRefreshStep;
  error?: unknown;
}

describe('tokenRefreshWorkflow', () => {
  const env = useWorkflowTestEnv();

  /**
   * Runs one seat's refresh workflow with `refresh` as the activity (n counts its calls) until it
   * ends; returns its last step (or failure), the calls and its id.
   */
  async function run(refresh: (n: number) => Promise<TokenRefreshStep>, input: Partial<TokenRefreshInput> = {}) {
    const calls: RefreshCall[] = [];
    const { worker, taskQueue } = await createTestWorker(env, 'token-refresh-wf', {
      refreshSeatToken: async ({ seatId, marginSeconds }: { seatId: string; marginSeconds: number }) => {
        calls.push({ seatId, marginSeconds, at: Date.now() });
        return refresh(calls.length);
      },
    });
    const seatId = `seat_test_${randomUUID()}`;
    const workflowId = workflowIds.tokenRefresh(seatId);
    const outcome = await worker.runUntil(async () => {
      await startTokenRefresh(env.client, taskQueue, { seatId, marginSeconds: 300, minIntervalMs: 10, ...input });
      return (env.client.workflow.getHandle(workflowId).result() as Promise<TokenRefreshStep>).then(
        (result): Outcome => ({ result }),
        (error: unknown): Outcome => ({ error }),
      );
    });
    return { ...outcome, calls, seatId, workflowId };
  }

  it('refreshes again when the last refresh says the next is due, and ends when the seat is unbound', async () => {
    let refreshAt = 0;
    const { result, calls, seatId, workflowId } = await run(async (n) =>
      n === 1 ? { outcome: 'refreshed', refreshAt: (refreshAt = Date.now() + 1_200) } : { outcome: 'unbound' },
    );
    expect(result).toEqual({ outcome: 'unbound' });
    expect(calls.map(({ seatId: id, marginSeconds }) => ({ seatId: id, marginSeconds }))).toEqual([
      { seatId, marginSeconds: 300 },
      { seatId, marginSeconds: 300 },
    ]);
    // Not before the moment the refresh named (timers fire at or after it; clocks are one machine's).
    expect(calls[1]!.at).toBeGreaterThanOrEqual(refreshAt - 50);
    await checkHistory(env, workflowId, { saveAs: 'token-refresh-unbound' });
  });

  it('waits its minimum interval even when the token is already due, and ends when the seat needs re-authorization', async () => {
    const { result, calls, workflowId } = await run(
      async (n) => (n === 1 ? { outcome: 'not_due', refreshAt: Date.now() - 60_000 } : { outcome: 'reauthorization_required' }),
      { minIntervalMs: 800 },
    );
    expect(result).toEqual({ outcome: 'reauthorization_required' });
    expect(calls).toHaveLength(2);
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(800);
    await checkHistory(env, workflowId);
  });

  it('ends with the step when no further refresh is due', async () => {
    const { result, calls, workflowId } = await run(async () => ({ outcome: 'refreshed' }));
    expect(result).toEqual({ outcome: 'refreshed' });
    expect(calls).toHaveLength(1);
    await checkHistory(env, workflowId);
  });

  it('keeps trying through a platform outage rather than ending, and goes on with the schedule once the refresh succeeds', async () => {
    const { result, calls, workflowId } = await run(async (n) => {
      // The platform's Retry-After, as asActivityFailure passes it on, paces the retries here.
      if (n <= 4) throw ApplicationFailure.create({ message: 'Service unavailable.', type: 'upstream.transient', nextRetryDelay: 50 });
      return n === 5 ? { outcome: 'refreshed', refreshAt: Date.now() } : { outcome: 'unbound' };
    });
    expect(result).toEqual({ outcome: 'unbound' });
    expect(calls).toHaveLength(6);
    await checkHistory(env, workflowId);
  });

  it("fails, refreshing no more, when the refresh fails in a way the activity marks final (a refusal other than the token's)", async () => {
    // The activity turns every refusal of the platform into a step (reauthorization_required, or
    // retry_later with a time): what still fails it for good is an error of our own, which ends
    // the run failed for an operator to see.
    const { result, error, calls, workflowId } = await run(async () => {
      throw ApplicationFailure.create({ message: 'Insufficient permissions.', type: 'upstream.permission', nonRetryable: true });
    });
    expect(result).toBeUndefined();
    expect(error).toBeInstanceOf(WorkflowFailedError);
    expect(((error as WorkflowFailedError).cause?.cause as Error | undefined)?.message).toBe('Insufficient permissions.');
    expect(calls).toHaveLength(1);
    await checkHistory(env, workflowId);
  });
});
