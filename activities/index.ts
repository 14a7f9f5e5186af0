import type { SealedBox } from '../core/crypto/sealed-box';
import type { Db } from '../core/db/client';
import type { Logger } from '../core/logger';
import type { Upstream } from '../core/upstream';
import { createHealthActivities } from './health.activities';
import { createTokenActivities } from './tokens.activities';

export interface ActivityDeps {
  db: Db;
  workerIdentity: string;
  sealedBox: SealedBox;
  upstream: Upstream;
  logger: Logger;
}

/** The one factory that wires every activity to its dependencies. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createHealthActivities(deps),
    ...createTokenActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
