import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { HealthCheckInput, HealthCheckResult } from './shared';

// A read with no side effect: a short timeout and a few retries are safe, and a health check that
// waits longer than this is reporting the right thing by failing.
const { readWorkerHealth } = proxyActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 3, initialInterval: '200 milliseconds' },
});

/** Proves the path client → Temporal → worker → Postgres and back. */
export async function healthCheckWorkflow(input: HealthCheckInput): Promise<HealthCheckResult> {
  return readWorkerHealth(input);
}
