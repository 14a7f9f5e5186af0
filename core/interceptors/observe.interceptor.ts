import { ConnectError, type Interceptor } from '@connectrpc/connect';
import { principalKey } from '../context';
import { CODE_HEADER } from '../errors';
import type { Logger } from '../logger';
import type { Metrics } from '../observability/metrics';

/**
 * Outermost of all: one log line and one count per call, with the code the caller finally gets.
 * The line carries the gateway's request id and, once the access interceptor has set it, the
 * customer, so an operator can follow one request across processes and find a customer's calls.
 */
export function observeInterceptor(deps: { logger: Logger; metrics: Metrics }): Interceptor {
  return (next) => async (req) => {
    const started = performance.now();
    const rpc = `${req.method.parent.name}/${req.method.name}`;
    const finish = (code: number) => {
      const seconds = (performance.now() - started) / 1000;
      deps.metrics.rpcRequests.inc({ rpc, code: String(code) });
      deps.metrics.rpcDuration.observe({ rpc }, seconds);
      const principal = req.contextValues.get(principalKey);
      deps.logger.info(
        {
          reqId: req.header.get('x-request-id') ?? undefined,
          rpc,
          customerId: principal?.kind === 'customer' ? principal.customerId : undefined,
          code,
          ms: Math.round(seconds * 1000),
        },
        'rpc',
      );
    };
    try {
      const res = await next(req);
      finish(0);
      return res;
    } catch (err) {
      // The errors interceptor inside this one has turned every failure into a coded ConnectError.
      finish(err instanceof ConnectError ? Number(err.metadata.get(CODE_HEADER) ?? 5000) : 5000);
      throw err;
    }
  };
}
