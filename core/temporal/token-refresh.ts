/**
 * Starting the token refresh workflow of a seat. Idempotent by workflow id: a running refresh is
 * kept, a finished one (the seat was unbound or needed re-authorization) is started afresh.
 */
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import type { TokenRefreshInput } from '../../workflows/shared';
import { workflowIds } from './workflow-ids';
import { workSearchAttributes } from './search-attributes';

export interface TokenRefreshSettings {
  taskQueue: string;
  marginSeconds: number;
  minIntervalMs: number;
}

export type TokenRefreshStarter = (seatId: string) => Promise<void>;

export function tokenRefreshStarter(client: () => Promise<Client>, settings: TokenRefreshSettings): TokenRefreshStarter {
  return async (seatId) => {
    const input: TokenRefreshInput = { seatId, marginSeconds: settings.marginSeconds, minIntervalMs: settings.minIntervalMs };
    await (await client()).workflow.start('tokenRefreshWorkflow', {
      taskQueue: settings.taskQueue,
      workflowId: workflowIds.tokenRefresh(seatId),
      args: [input],
      typedSearchAttributes: workSearchAttributes({ seatId, recordId: seatId }),
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    });
  };
}
