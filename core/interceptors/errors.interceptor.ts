import { ConnectError, type Interceptor } from '@connectrpc/connect';
import { CHARACTER_NOT_IN_REPERTOIRE, sqlState } from '../db/errors';
import { ApiError, CODE_HEADER } from '../errors';
import type { Logger } from '../logger';

/**
 * Outermost interceptor: ApiErrors become ConnectErrors carrying our code; anything else is a bug or
 * an outage, logged with its stack and reported as 5000 without leaking internals to the caller.
 */
export function errorsInterceptor(logger: Logger): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (err) {
      if (err instanceof ApiError) throw err.toConnectError();
      if (err instanceof ConnectError && err.metadata.has(CODE_HEADER)) throw err;
      // A direct Connect caller can send text Postgres cannot store; that is their input, not our fault.
      if (sqlState(err) === CHARACTER_NOT_IN_REPERTOIRE) {
        throw new ApiError(2001, 'a text field contains a character that cannot be stored (NUL)').toConnectError();
      }
      logger.error({ err, rpc: `${req.method.parent.typeName}/${req.method.name}` }, 'unhandled error in RPC');
      throw new ApiError(5000).toConnectError();
    }
  };
}
