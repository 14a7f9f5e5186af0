import type { Db } from '../core/db/client';
import { createHealthActivities } from './health.activities';

export interface ActivityDeps {
  db: Db;
  workerIdentity: string;
}

/** The one factory that wires every activity to its dependencies. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createHealthActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
