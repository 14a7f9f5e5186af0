/**
 * Workflow ids are built only here. They are meaningful (an operator can find the work in the
 * Temporal UI from the business id) and deterministic where the work must happen once.
 */
export const workflowIds = {
  /** Each health check is its own run: the id carries a fresh nonce. */
  healthCheck: (nonce: string) => `health-check-${nonce}`,
  /** One per seat: starting it again while it runs is a no-op. */
  tokenRefresh: (seatId: string) => `token-refresh-${seatId}`,
  /** One per webhook endpoint: the long-running workflow that drains its delivery queue. */
  endpointDeliveries: (endpointId: string) => `endpoint-deliveries-${endpointId}`,
  /** The fetch or shop hand-off of one library record. */
  videoUpload: (videoId: string) => `upload-${videoId}`,
  /** The 7-day lifetime of one video track record. */
  videoLifetime: (videoId: string) => `video-expiry-${videoId}`,
  /** One per task queue: the long-running repair that starts the lifetimes whose start was missed. */
  videoExpiryRepair: (taskQueue: string) => `video-expiry-repair-${taskQueue}`,
  /** One per publish record: the record id is the idempotency key of the submit. */
  publish: (recordId: string) => `publish-${recordId}`,
  /** One per pre-check record. */
  precheck: (precheckId: string) => `precheck-${precheckId}`,
};
