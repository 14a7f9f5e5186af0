import type { SealedBox } from '../core/crypto/sealed-box';
import type { Db } from '../core/db/client';
import type { EventRecorder } from '../core/events/recorder';
import type { Logger } from '../core/logger';
import type { Upstream } from '../core/upstream';
import type { MediaStore } from '../core/media/storage';
import type { Metrics } from '../core/observability/metrics';
import { createPublishActivities } from './publish.activities';
import { createVideoActivities } from './videos.activities';
import { createPrecheckActivities } from './precheck.activities';
import { createDeliveryActivities, type DeliveryQueueSettings } from './delivery.activities';
import type { DeliveryDispatcher } from '../core/temporal/delivery-dispatcher';
import { createHealthActivities } from './health.activities';
import { createTokenActivities } from './tokens.activities';

export interface ActivityDeps {
  db: Db;
  workerIdentity: string;
  sealedBox: SealedBox;
  upstream: Upstream;
  logger: Logger;
  allowInsecureWebhookUrls: boolean;
  disableEndpointAfterMs: number;
  maxInFlightPerEndpoint: number;
  events: EventRecorder;
  dispatcher: DeliveryDispatcher;
  deliveryQueue: DeliveryQueueSettings;
  media: MediaStore;
  allowInsecureSourceUrls: boolean;
  metrics: Metrics;
}

/** The one factory that wires every activity to its dependencies. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createHealthActivities(deps),
    ...createTokenActivities(deps),
    ...createDeliveryActivities(deps),
    ...createVideoActivities(deps),
    ...createPublishActivities(deps),
    ...createPrecheckActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
