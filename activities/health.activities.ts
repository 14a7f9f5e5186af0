import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../core/db/client';
import type { HealthCheckInput, HealthCheckResult } from '../workflows/shared';

export function createHealthActivities(deps: { db: Db; workerIdentity: string }) {
  return {
    async readWorkerHealth(_input: HealthCheckInput): Promise<HealthCheckResult> {
      const [row] = await queryRows<{ now: string | Date }>(deps.db, sql`select now() as now`);
      return { workerIdentity: deps.workerIdentity, databaseTime: new Date(row!.now).toISOString() };
    },
  };
}
