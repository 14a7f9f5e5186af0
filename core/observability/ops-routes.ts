/**
 * The operational endpoints every role's HTTP server carries: /healthz (alive: answers while the
 * event loop runs), /readyz (ready for traffic: 503 while a dependency that gates it is down or the
 * process is draining) and, on the ops server only, /metrics in Prometheus' text format.
 */
import type { FastifyInstance } from 'fastify';
import type { Metrics } from './metrics';
import type { ReadinessReport } from './readiness';

export interface OpsRouteOptions {
  readiness: () => Promise<ReadinessReport>;
  /** True once the process has begun to stop: readiness fails first, so traffic moves elsewhere. */
  draining?: () => boolean;
  /** Given only where scrapes are meant to reach: the ops server, never the public port. */
  metrics?: Metrics;
  /**
   * Whether /readyz lists its checks. Not on the public port: a failing check's message can name
   * internal addresses. The ops server and core's internal port list them.
   */
  detailed?: boolean;
}

export function registerOpsRoutes(app: FastifyInstance, opts: OpsRouteOptions): void {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (_req, reply) => {
    if (opts.draining?.()) return reply.code(503).send({ status: 'draining' });
    const report = await opts.readiness();
    const status = report.ready ? 'ready' : 'not_ready';
    return reply.code(report.ready ? 200 : 503).send(opts.detailed ? { status, checks: report.checks } : { status });
  });
  const metrics = opts.metrics;
  if (metrics) {
    app.get('/metrics', { schema: { hide: true } }, async (_req, reply) =>
      reply.header('content-type', metrics.registry.contentType).send(await metrics.registry.metrics()),
    );
  }
}
