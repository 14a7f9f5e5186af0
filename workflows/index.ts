// Every workflow the worker registers, exported by name.
export { healthCheckWorkflow } from './health-check.workflow';
export { tokenRefreshWorkflow } from './token-refresh.workflow';
export { webhookDeliveryWorkflow } from './webhook-delivery.workflow';
