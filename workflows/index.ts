import type { WorkflowSignatures } from './shared';
import { endpointDeliveriesWorkflow } from './endpoint-deliveries.workflow';
import { healthCheckWorkflow } from './health-check.workflow';
import { precheckWorkflow } from './precheck.workflow';
import { publishWorkflow } from './publish.workflow';
import { tokenRefreshWorkflow } from './token-refresh.workflow';
import { videoExpiryRepairWorkflow } from './video-expiry-repair.workflow';
import { videoLifetimeWorkflow } from './video-lifetime.workflow';
import { videoUploadWorkflow } from './video-upload.workflow';
import { webhookDeliveryWorkflow } from './webhook-delivery.workflow';

// Every workflow the worker registers, exported by name. `satisfies` keeps each one's signature
// equal to what core/temporal/client.ts starts it with (WorkflowSignatures in shared.ts).
const registered = {
  healthCheckWorkflow,
  tokenRefreshWorkflow,
  endpointDeliveriesWorkflow,
  // The per-delivery workflows of the previous release: kept registered so those still open can end.
  webhookDeliveryWorkflow,
  videoUploadWorkflow,
  videoLifetimeWorkflow,
  videoExpiryRepairWorkflow,
  publishWorkflow,
  precheckWorkflow,
} satisfies WorkflowSignatures;
void registered;

export {
  healthCheckWorkflow,
  tokenRefreshWorkflow,
  endpointDeliveriesWorkflow,
  webhookDeliveryWorkflow,
  videoUploadWorkflow,
  videoLifetimeWorkflow,
  videoExpiryRepairWorkflow,
  publishWorkflow,
  precheckWorkflow,
};
