/**
 * Starting the token refresh workflow of a seat. Idempotent by workflow id: a running refresh is
 * kept, a finished one (the seat was unbound or needed re-authorization) is started afresh.
 */
import type { Client } from '@temporalio/client';
import type { TokenRefreshInput } from '../../workflows/shared';
import { startTokenRefresh } from './client';

export interface TokenRefreshSettings {
  taskQueue: string;
  marginSeconds: number;
  minIntervalMs: number;
}

export type TokenRefreshStarter = (seatId: string) => Promise<void>;

export function tokenRefreshStarter(client: () => Promise<Client>, settings: TokenRefreshSettings): TokenRefreshStarter {
  return async (seatId) => {
    const input: TokenRefreshInput = { seatId, marginSeconds: settings.marginSeconds, minIntervalMs: settings.minIntervalMs };
    await startTokenRefresh(await client(), settings.taskQueue, input);
  };
}
