/**
 * The health check's round trip, with a stub read in place of the worker's database: the workflow
 * answers what the worker read, for whoever asked; a read that fails briefly is tried again; one
 * that keeps failing fails the check with its reason instead of answering healthy; and a check no
 * worker picks up ends at the timeout it was started with (as startHealthCheck starts it). Real
 * Temporal dev server, a worker per test; each history is replayed.
 */
import { randomUUID } from 'node:crypto';
import { ActivityFailure, WorkflowFailedError } from '@temporalio/client';
import { startHealthCheck } from '../../core/temporal/client';
import { checkHistory, createTestWorker, useWorkflowTestEnv } from '../helpers/workflow-env';
import type { HealthCheckInput, HealthCheckResult } from '../../workflows/shared';

/** How a run ended: its result, or the error its result() threw. */
interface Outcome {
  result?: HealthCheckResult;
  error?: unknown;
}

describe('healthCheckWorkflow', () => {
  const env = useWorkflowTestEnv();

  const healthy: HealthCheckResult = { workerIdentity: 'worker-1@test', databaseTime: '2030-01-02T03:04:05.000Z' };

  /**
   * Runs one health check as the admin API starts it, with `read` as the worker's read; returns its
   * outcome (or failure), the reads and its id.
   */
  async function run(read: (n: number) => Promise<HealthCheckResult>) {
    const reads: HealthCheckInput[] = [];
    const { worker, taskQueue } = await createTestWorker(env, 'health-wf', {
      readWorkerHealth: async (input: HealthCheckInput) => (reads.push(input), read(reads.length)),
    });
    const input: HealthCheckInput = { requestedBy: 'AdminService.PingWorker' };
    const { handle, outcome } = await worker.runUntil(async () => {
      const started = await startHealthCheck(env.client, taskQueue, { nonce: randomUUID(), timeoutMs: 30_000, input });
      return {
        handle: started,
        outcome: await started.result().then(
          (result): Outcome => ({ result }),
          (error: unknown): Outcome => ({ error }),
        ),
      };
    });
    return { ...outcome, reads, workflowId: handle.workflowId };
  }

  it('answers the identity and database time the worker read, for the one who asked', async () => {
    const { result, reads, workflowId } = await run(async () => healthy);
    expect(result).toEqual(healthy);
    expect(reads).toEqual([{ requestedBy: 'AdminService.PingWorker' }]);
    expect(workflowId).toMatch(/^health-check-/);
    await checkHistory(env, workflowId, { saveAs: 'health-check-healthy' });
  });

  it('tries a read that fails briefly again, and answers once it succeeds', async () => {
    const { result, reads, workflowId } = await run(async (n) => {
      if (n < 3) throw new Error('connection terminated unexpectedly');
      return healthy;
    });
    expect(result).toEqual(healthy);
    expect(reads).toHaveLength(3);
    await checkHistory(env, workflowId);
  });

  it("fails the check with the read's reason after three failed reads, rather than answering", async () => {
    const { result, error, reads, workflowId } = await run(async () => {
      throw new Error('the database is not accepting connections');
    });
    expect(result).toBeUndefined();
    expect(error).toBeInstanceOf(WorkflowFailedError);
    const cause = (error as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ActivityFailure);
    expect((cause?.cause as Error | undefined)?.message).toBe('the database is not accepting connections');
    expect(reads).toHaveLength(3);
    await checkHistory(env, workflowId);
  });

  it('ends at its timeout when no worker picks it up', async () => {
    const started = Date.now();
    const handle = await startHealthCheck(env.client, `health-wf-nobody-${randomUUID()}`, {
      nonce: randomUUID(),
      timeoutMs: 1_000,
      input: { requestedBy: 'test' },
    });
    await expect(handle.result()).rejects.toBeInstanceOf(WorkflowFailedError);
    expect((await handle.describe()).status.name).toBe('TIMED_OUT');
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
