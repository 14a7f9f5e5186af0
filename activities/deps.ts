/**
 * What every activity factory receives: the worker's composition root builds it once. In a file of
 * its own so that the factories and their index do not import each other.
 */
import type { SealedBox } from '../core/crypto/sealed-box';
import type { Db } from '../core/db/client';
import type { EventRecorder } from '../core/events/recorder';
import type { Logger } from '../core/logger';
import type { Upstream } from '../core/upstream';
import type { MediaStore } from '../core/media/storage';
import type { Metrics } from '../core/observability/metrics';
import type { DeliveryDispatcher } from '../core/temporal/delivery-dispatcher';

export interface DeliveryQueueSettings {
  /** An idle drain waits this long for new rows before it ends (so a steady trickle needs no wake-ups). */
  lingerMs: number;
  /** A drain ends after this long, so its workflow's figures stay fresh and its history moves on. */
  maxDrainMs: number;
}

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
  /** Pause before a token refresh the platform refused, for a reason other than the token, is tried again. */
  tokenRefreshRetryMs: number;
}
