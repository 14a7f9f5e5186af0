import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { Client } from '@temporalio/client';
import { newId } from '../ids';
import { startHealthCheck } from './client';
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
      const started = Date.now();
      const nonce = newId('hc');
      const handle = await startHealthCheck(client, deps.taskQueue, {
        nonce,
        timeoutMs: deps.timeoutMs,
        input: { requestedBy: 'AdminService.PingWorker' },
      });
      const workflowId = handle.workflowId;
      let result: HealthCheckResult;
      try {
        result = await handle.result();
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
