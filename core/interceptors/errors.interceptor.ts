import { ConnectError, type Interceptor, type StreamRequest, type UnaryRequest } from '@connectrpc/connect';
import { CHARACTER_NOT_IN_REPERTOIRE, sqlState } from '../db/errors';
import { ApiError, CODE_HEADER, DependencyUnavailableError } from '../errors';
import type { Logger } from '../logger';

/**
 * Outermost interceptor: ApiErrors become ConnectErrors carrying our code; anything else is a bug or
 * an outage, logged with its stack and reported as 5000 without leaking internals to the caller.
 * A streaming handler fails while its messages are read, after this interceptor has returned, so
 * its messages pass through the same conversion.
 */
export function errorsInterceptor(logger: Logger): Interceptor {
  const convert = (err: unknown, req: UnaryRequest | StreamRequest): ConnectError => {
    if (err instanceof ApiError) return err.toConnectError();
    if (err instanceof ConnectError && err.metadata.has(CODE_HEADER)) return err;
    if (err instanceof DependencyUnavailableError) {
      logger.warn({ err, rpc: `${req.method.parent.typeName}/${req.method.name}` }, 'a dependency is unavailable');
      return err.toConnectError();
    }
    // A direct Connect caller can send text Postgres cannot store; that is their input, not our fault.
    if (sqlState(err) === CHARACTER_NOT_IN_REPERTOIRE) {
      return new ApiError(2001, 'a text field contains a character that cannot be stored (NUL)').toConnectError();
    }
    logger.error({ err, rpc: `${req.method.parent.typeName}/${req.method.name}` }, 'unhandled error in RPC');
    return new ApiError(5000).toConnectError();
  };
  return (next) => async (req) => {
    try {
      // A streaming method reads its request inside this call: what fails there is the request's.
      const single = req.method.methodKind === 'server_streaming';
      const res = await next(req.stream ? { ...req, message: readAsInput(req.message, single) } : req);
      return res.stream ? { ...res, message: converted(res.message, (err) => convert(err, req)) } : res;
    } catch (err) {
      throw convert(err, req);
    }
  };
}

/**
 * The request's messages; one that cannot be read (it does not decode, its framing is broken) is a
 * 2001, and so is no message at all where the method takes exactly one (a server-streaming method
 * whose body was cut short), which Connect would otherwise answer as its own protocol error.
 */
async function* readAsInput<T>(messages: AsyncIterable<T>, single: boolean): AsyncGenerator<T> {
  let read = 0;
  try {
    for await (const message of messages) {
      read += 1;
      yield message;
    }
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw new ApiError(2001, `request: ${ConnectError.from(err).rawMessage}`);
  }
  if (single && read === 0) throw new ApiError(2001, 'request: the method takes one message, and the body holds none');
}

async function* converted<T>(messages: AsyncIterable<T>, convert: (err: unknown) => ConnectError): AsyncGenerator<T> {
  try {
    yield* messages;
  } catch (err) {
    throw convert(err);
  }
}
