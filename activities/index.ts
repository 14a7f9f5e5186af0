import type { SealedBox } from '../core/crypto/sealed-box';
import type { Db } from '../core/db/client';
import type { EventRecorder } from '../core/events/recorder';
import type { Logger } from '../core/logger';
import type { Upstream } from '../core/upstream';
import { createDeliveryActivities } from './delivery.activities';
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
}

/** The one factory that wires every activity to its dependencies. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createHealthActivities(deps),
    ...createTokenActivities(deps),
    ...createDeliveryActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
