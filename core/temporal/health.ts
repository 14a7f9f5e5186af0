import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { Client } from '@temporalio/client';
import { newId } from '../ids';
import { workflowIds } from './workflow-ids';
import type { HealthCheckResult } from '../../workflows/shared';
import { ApiError } from '../errors';

export interface HealthProbe {
  ping(): Promise<{ workflowId: string; workerIdentity: string; databaseTime: ReturnType<typeof timestampFromDate>; roundTripMs: number }>;
}

/** Runs the health workflow and waits for it, so a missing worker shows up as a clear failure. */
export function temporalHealthProbe(deps: { client: () => Promise<Client>; taskQueue: string; timeoutMs: number }): HealthProbe {
  return {
    async ping() {
      const client = await deps.client();
      const workflowId = workflowIds.healthCheck(newId('hc'));
      const started = Date.now();
      const handle = await client.workflow.start('healthCheckWorkflow', {
        taskQueue: deps.taskQueue,
        workflowId,
        args: [{ requestedBy: 'AdminService.PingWorker' }],
        // No worker within this time means the worker role is down: the run ends instead of waiting.
        workflowExecutionTimeout: deps.timeoutMs,
      });
      let result: HealthCheckResult;
      try {
        result = (await handle.result()) as HealthCheckResult;
      } catch (err) {
        throw new ApiError(5000, `health workflow ${workflowId} did not complete: ${(err as Error).message}`);
      }
      return {
        workflowId,
        workerIdentity: result.workerIdentity,
        databaseTime: timestampFromDate(new Date(result.databaseTime)),
        roundTripMs: Date.now() - started,
      };
    },
  };
}
