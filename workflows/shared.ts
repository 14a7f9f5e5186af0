/**
 * Inputs, outputs and names shared by workflows, activities and the code that starts them.
 * Types and constants only: importing runtime code here would pull it into the workflow bundle.
 */

/** Default task queue; TEMPORAL_TASK_QUEUE overrides it for a deployment. */
export const DEFAULT_TASK_QUEUE = 'vps';

export interface HealthCheckInput {
  /** Who asked, for the operator reading the workflow in the UI. */
  requestedBy: string;
}

export interface HealthCheckResult {
  workerIdentity: string;
  /** ISO time read from the worker's own database connection. */
  databaseTime: string;
}
