/**
 * Every Prometheus metric the service exports, defined once. A process has one registry, shared by
 * the roles it runs; each role's HTTP server serves it at /metrics. Label values are bounded: routes
 * are Fastify's route patterns (never raw URLs), RPCs their method names, codes the envelope's.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Latency buckets in seconds, from a cached read to an upload of a large video. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Workflow run times in seconds: a health ping to a publish that waits minutes for its post id. */
const WORKFLOW_BUCKETS = [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3_600, 86_400];

export type WorkflowOutcome = 'completed' | 'failed' | 'cancelled' | 'continued_as_new';
export type DeliveryAttemptOutcome = 'delivered' | 'failed' | 'gone';

export function createMetrics(opts: { role: string; processMetrics?: boolean }) {
  const registry = new Registry();
  registry.setDefaultLabels({ role: opts.role });
  // Memory, CPU, event-loop delay and handles: what tells a leak or a stall apart from load.
  if (opts.processMetrics ?? true) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  let readNotificationQueue: (() => Promise<number>) | undefined;
  return {
    registry,
    /**
     * Exports the share of Postgres's notification queue in use, read from `read` at each scrape;
     * only the role that holds the database (core) calls it, so no other role reports a 0 it did not
     * measure. Event notices carry rows (core/events/stream-channel.ts): a listening process that
     * stops reading fills the queue, and at 1 every insert of an event fails.
     */
    readNotificationQueueFrom(read: () => Promise<number>): void {
      if (!readNotificationQueue)
        new Gauge({
          name: 'vps_postgres_notification_queue_usage_ratio',
          help: "Share of Postgres's notification queue in use (pg_notification_queue_usage); at 1 every event insert fails",
          registers,
          async collect() {
            try {
              this.set(await readNotificationQueue!());
            } catch {
              // Left at its last value: a scrape must not fail because the database is away.
            }
          },
        });
      readNotificationQueue = read;
    },
    httpRequests: new Counter({
      name: 'vps_http_requests_total',
      help: 'HTTP requests answered by the gateway, by route pattern, HTTP status and envelope code (empty for non-envelope answers such as streams)',
      labelNames: ['method', 'route', 'status', 'code'] as const,
      registers,
    }),
    httpDuration: new Histogram({
      name: 'vps_http_request_duration_seconds',
      help: 'Time from a request arriving at the gateway to its answer being sent, by route pattern and envelope code',
      labelNames: ['method', 'route', 'code'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    rpcRequests: new Counter({
      name: 'vps_rpc_requests_total',
      help: "Core's Connect calls, by RPC and envelope code (0 for success)",
      labelNames: ['rpc', 'code'] as const,
      registers,
    }),
    rpcDuration: new Histogram({
      name: 'vps_rpc_duration_seconds',
      help: "Core's time per Connect call (for streams: until the response began)",
      labelNames: ['rpc'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    rateLimitRejections: new Counter({
      name: 'vps_rate_limit_rejections_total',
      help: "Requests refused with 2002 because the caller's bucket was empty, by credential kind",
      labelNames: ['credential'] as const,
      registers,
    }),
    eventStreams: new Gauge({
      name: 'vps_event_streams_open',
      help: 'Server-Sent Event streams this gateway holds open',
      registers,
    }),
    workflowOutcomes: new Counter({
      name: 'vps_workflow_outcomes_total',
      help: 'Workflow runs that ended on this worker, by workflow type and outcome',
      labelNames: ['workflow', 'outcome'] as const,
      registers,
    }),
    workflowDuration: new Histogram({
      name: 'vps_workflow_run_duration_seconds',
      help: 'Time from a workflow run starting to its ending on this worker',
      labelNames: ['workflow', 'outcome'] as const,
      buckets: WORKFLOW_BUCKETS,
      registers,
    }),
    deliveryAttempts: new Counter({
      name: 'vps_webhook_delivery_attempts_total',
      help: 'Webhook delivery attempts, by outcome: delivered (2xx), failed (retried later) or gone (410, or the endpoint disabled)',
      labelNames: ['outcome'] as const,
      registers,
    }),
    deliveryDuration: new Histogram({
      name: 'vps_webhook_delivery_attempt_duration_seconds',
      help: 'Time a receiver took to answer a delivery attempt (or to fail it)',
      labelNames: ['outcome'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
