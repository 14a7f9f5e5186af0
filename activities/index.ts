import type { ActivityDeps } from './deps';
import { createPublishActivities } from './publish.activities';
import { createVideoActivities } from './videos.activities';
import { createPrecheckActivities } from './precheck.activities';
import { createDeliveryActivities } from './delivery.activities';
import { createHealthActivities } from './health.activities';
import { createTokenActivities } from './tokens.activities';

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
export type { ActivityDeps, DeliveryQueueSettings } from './deps';
