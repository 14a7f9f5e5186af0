/**
 * On core start-up, (re)starts the token refresh of every bound seat. Starting is idempotent, so
 * this costs one call per seat and repairs any refresh whose start was missed (Temporal was down
 * when the seat was bound) or whose run ended.
 */
import type { Db } from '../db/client';
import { listBoundSeatIds } from '../db/repositories/seats';
import type { Logger } from '../logger';
import type { TokenRefreshStarter } from './token-refresh';

export async function restartTokenRefreshes(db: Db, start: TokenRefreshStarter, logger: Logger): Promise<void> {
  let seatIds: string[];
  try {
    seatIds = await listBoundSeatIds(db);
  } catch (err) {
    logger.error({ err }, 'could not list bound seats to start their token refresh');
    return;
  }
  let failed = 0;
  for (const seatId of seatIds) {
    try {
      await start(seatId);
    } catch (err) {
      failed += 1;
      logger.error({ err, seatId }, 'could not start the token refresh workflow');
    }
  }
  logger.info({ seats: seatIds.length, failed }, 'token refresh workflows started');
}
