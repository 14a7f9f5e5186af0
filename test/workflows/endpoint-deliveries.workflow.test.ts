/**
 * The endpoint queue workflow's own decisions, with a stub drain: it sleeps until the next row is
 * due, drains again at once when woken during a drain (however many wake-ups came), ends when its
 * endpoint is gone or its queue stays quiet, and continues as new with its figures before its
 * history grows large. Real Temporal dev server, a worker per test; each history is replayed.
 */
import { randomUUID } from 'node:crypto';
import { checkHistory, createTestWorker, useWorkflowTestEnv } from '../helpers/workflow-env';
import {
  ENDPOINT_DELIVERIES_QUERY,
  ENDPOINT_DELIVERIES_WAKE_SIGNAL,
  type DrainResult,
  type EndpointDeliveriesInput,
  type QueueFigures,
  type WorkflowSignatures,
} from '../../workflows/shared';

const figures = (over: Partial<QueueFigures> = {}): QueueFigures => ({
  backlog: 0,
  due: 0,
  inFlight: 0,
  oldestDueAt: null,
  nextDueAt: null,
  measuredAt: new Date().toISOString(),
  ...over,
});

describe('endpointDeliveriesWorkflow', () => {
  const env = useWorkflowTestEnv();

  /**
   * Runs the workflow with `drain` as its activity until `during` and the workflow end, and replays
   * its history (saved as `saveAs` when recording); returns its result, the drains' times and its
   * id.
   */
  async function run(
    drain: (n: number) => Promise<DrainResult>,
    input: Partial<EndpointDeliveriesInput> = {},
    during?: (workflowId: string) => Promise<void>,
    saveAs?: string,
  ) {
    const workflowId = `endpoint-deliveries-test-${randomUUID()}`;
    const drains: number[] = [];
    const { worker, taskQueue } = await createTestWorker(env, 'queue-wf', {
      drainEndpointQueue: async () => (drains.push(Date.now()), drain(drains.length)),
    });
    const result = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start<WorkflowSignatures['endpointDeliveriesWorkflow']>('endpointDeliveriesWorkflow', {
        taskQueue,
        workflowId,
        args: [{ endpointId: 'we_test', customerId: 'cus_test', ...input }],
      });
      await during?.(workflowId);
      return handle.result();
    });
    await checkHistory(env, workflowId, { saveAs });
    return { result, drains, workflowId };
  }

  it('sleeps until its next row is due, drains then, and ends when its endpoint is gone', async () => {
    const { result, drains } = await run(
      async (n) =>
        n === 1
          ? { attempted: 1, closed: false, figures: figures({ backlog: 1, nextDueAt: new Date(Date.now() + 1_500).toISOString() }) }
          : { attempted: 1, closed: true, figures: figures() },
      {},
      undefined,
      'endpoint-deliveries-closed',
    );
    expect(result).toBe('closed');
    expect(drains).toHaveLength(2);
    expect(drains[1]! - drains[0]!).toBeGreaterThanOrEqual(1_000);
  });

  it('drains once more after wake-ups that came during a drain, then reports its figures and ends when quiet', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const { result, drains } = await run(
      async (n) => {
        if (n === 1) await held;
        return { attempted: n, closed: false, figures: figures({ backlog: 7 }) };
      },
      { limits: { idleEndMs: 500 } },
      async (workflowId) => {
        const handle = env.client.workflow.getHandle(workflowId);
        for (let i = 0; i < 5; i++) await handle.signal(ENDPOINT_DELIVERIES_WAKE_SIGNAL);
        release();
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(await handle.query(ENDPOINT_DELIVERIES_QUERY)).toMatchObject({ backlog: 7 });
      },
      'endpoint-deliveries-woken-then-idle',
    );
    expect(result).toBe('idle');
    expect(drains).toHaveLength(2);
  });

  it('continues as new before its history grows large, and keeps draining in the new run', async () => {
    const { result, drains, workflowId } = await run(
      async (n) => ({
        attempted: 1,
        closed: n >= 12,
        figures: figures({ backlog: 100 - n, due: 1, nextDueAt: new Date(0).toISOString() }),
      }),
      { limits: { maxHistoryEvents: 20 } },
    );
    expect(result).toBe('closed');
    expect(drains).toHaveLength(12);
    // Visibility catches up with the runs shortly after they close.
    let runs = 0;
    for (
      const deadline = Date.now() + 10_000;
      runs < 2 && Date.now() < deadline;
      await new Promise((resolve) => setTimeout(resolve, 200))
    ) {
      runs = 0;
      for await (const execution of env.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) if (execution.runId) runs++;
    }
    expect(runs).toBeGreaterThan(1);
  });
});
