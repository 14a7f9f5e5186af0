/**
 * Temporal's cost of the deliveries: the events in the server's histories of an endpoint's queue
 * workflow, over all its runs (continued-as-new and restarted runs included), as the server stores
 * them. Histories, not actions: what the server writes and replays grows with events.
 */
import type { Client } from '@temporalio/client';
import { workflowIds } from '../../workflows/workflow-ids';

export interface HistoryCount {
  runs: number;
  events: number;
}

/** Lists every run of `endpoint-deliveries-<endpointId>` (visibility API) and counts its history events. */
export async function countQueueHistory(client: Client, endpointId: string): Promise<HistoryCount> {
  const workflowId = workflowIds.endpointDeliveries(endpointId);
  const runIds = new Set<string>();
  for await (const execution of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runIds.add(execution.runId);
  // Visibility is written after the history: the newest run may not be listed yet.
  const latest = await client.workflow
    .getHandle(workflowId)
    .describe()
    .catch(() => undefined);
  if (latest) runIds.add(latest.runId);
  let events = 0;
  for (const runId of runIds) events += (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events?.length ?? 0;
  return { runs: runIds.size, events };
}
