// Every workflow the worker registers, exported by name.
export { healthCheckWorkflow } from './health-check.workflow';
export { tokenRefreshWorkflow } from './token-refresh.workflow';
export { endpointDeliveriesWorkflow } from './endpoint-deliveries.workflow';
// The per-delivery workflows of the previous release: kept registered so those still open can end.
export { webhookDeliveryWorkflow } from './webhook-delivery.workflow';
export { videoUploadWorkflow } from './video-upload.workflow';
export { videoLifetimeWorkflow } from './video-lifetime.workflow';
export { videoExpiryRepairWorkflow } from './video-expiry-repair.workflow';
export { publishWorkflow } from './publish.workflow';
export { precheckWorkflow } from './precheck.workflow';
