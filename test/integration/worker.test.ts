import { timestampDate } from '@bufbuild/protobuf/wkt';
import type { RunningWorker } from '../../worker/worker';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox';
import { startStack, startStackWorker, type Stack } from '../helpers/stack';

describe('worker round trip through the Temporal dev server', () => {
  const taskQueue = `vps-worker-test-${process.pid}-${Date.now()}`;
  let stack: Stack;
  let worker: RunningWorker;
  let sandbox: TestSandbox;
  beforeAll(async () => {
    stack = await startStack({ taskQueue });
    sandbox = await startTestSandbox();
    worker = await startStackWorker(stack, taskQueue, sandbox.upstream);
  }, 120_000);
  afterAll(async () => {
    await worker?.stop();
    await sandbox?.close();
    await stack?.close();
  });

  it('runs the health workflow on the worker, which reads its own Postgres, and returns to the caller', async () => {
    const before = Date.now();
    const res = await stack.admin.pingWorker({});
    expect(res.workflowId).toMatch(/^health-check-hc_/);
    expect(res.workerIdentity).toBe(worker.identity);
    const dbTime = timestampDate(res.databaseTime!).getTime();
    expect(dbTime).toBeGreaterThanOrEqual(before - 5_000);
    expect(dbTime).toBeLessThanOrEqual(Date.now() + 5_000);
    expect(res.roundTripMs).toBeGreaterThan(0);
  });

  it('gives each health check its own workflow id, so checks never collide', async () => {
    const [a, b] = await Promise.all([stack.admin.pingWorker({}), stack.admin.pingWorker({})]);
    expect(a.workflowId).not.toBe(b.workflowId);
  });
});
