import os from 'node:os';
import { DefaultLogger, NativeConnection, Runtime, Worker, type InjectedSinks, type LogLevel } from '@temporalio/worker';
import { createActivities } from '../activities';
import { classifyActivityFailures } from '../activities/failure-interceptor';
import type { SealedBox } from '../core/crypto/sealed-box';
import type { Database, Db } from '../core/db/client';
import type { EventRecorder } from '../core/events/recorder';
import type { Upstream } from '../core/upstream';
import type { Logger } from '../core/logger';
import type { MediaStore } from '../core/media/storage';
import { temporalTls, type TemporalSettings } from '../core/temporal/connection';
import { createMetrics, type Metrics } from '../core/observability/metrics';
import type { OutcomeSinks } from '../workflows/interceptors';
import { DeliveryDispatcher } from '../core/temporal/delivery-dispatcher';
import { WORKER_WORKFLOWS, workflowBundle } from './workflow-bundle';
import { startVideoExpiryRepair } from '../core/temporal/client';
import type { VideoExpiryRepairInput } from '../workflows/shared';

/** How endpoint delivery queues are drained and woken (docs/decisions/webhook-delivery.md). */
export interface DeliveryQueueOptions {
  /** An idle drain waits this long for new rows before it ends. */
  lingerMs: number;
  /** A drain ends after this long and its workflow starts the next. */
  maxDrainMs: number;
  /** A queue's workflow is signalled at most once in this window by one worker. */
  wakeCoalesceMs: number;
  /** How often overdue, unclaimed rows are looked for. */
  sweepIntervalMs: number;
  /** Due this long and unclaimed, a row counts as overdue. */
  sweepGraceMs: number;
}

export interface RunningWorker {
  identity: string;
  /** Resolves when the worker has stopped; rejects when it died. */
  done: Promise<void>;
  /** RUNNING while it polls; DRAINING and after once it stops. */
  state(): string;
  /** Stops polling, lets in-flight activities finish within the grace time, then resolves. */
  stop(): Promise<void>;
}

const PINO_LEVELS: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};
let runtimeInstalled = false;

/** The SDK's runtime is process-wide and can be installed once: its logs then join ours as JSON. */
function installRuntimeLogger(logger: Logger): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  Runtime.install({
    logger: new DefaultLogger('INFO', (entry) => {
      logger[PINO_LEVELS[entry.level]]({ sdk: entry.meta }, entry.message);
    }),
  });
}

export async function startWorker(opts: {
  settings: TemporalSettings;
  taskQueue: string;
  db: Db;
  /** Notifications of the database, on which queued deliveries wake their endpoint's drain. */
  listen: Database['listen'];
  deliveryQueue: DeliveryQueueOptions;
  sealedBox: SealedBox;
  upstream: Upstream;
  events: EventRecorder;
  allowInsecureWebhookUrls: boolean;
  disableEndpointAfterMs: number;
  maxInFlightPerEndpoint: number;
  media: MediaStore;
  allowInsecureSourceUrls: boolean;
  /** Pause before a token refresh the platform refused, for a reason other than the token, is tried again. */
  tokenRefreshRetryMs: number;
  logger: Logger;
  shutdownGraceMs: number;
  /** How long a workflow waits for the worker that ran it last before any worker may take it. */
  stickyQueueTimeoutMs?: number;
  /** The process's metrics; a private set when not given (nothing scrapes it then). */
  metrics?: Metrics;
  /**
   * The pace of the task queue's video expiry repair, which this worker starts (or updates). The
   * processes `vps serve` runs always give it; tests leave it out where the repair would act on
   * rows of other suites sharing their database.
   */
  videoExpiryRepair?: VideoExpiryRepairInput;
}): Promise<RunningWorker> {
  const metrics = opts.metrics ?? createMetrics({ role: 'worker', processMetrics: false });
  installRuntimeLogger(opts.logger);
  const identity = `vps-worker-${process.pid}@${os.hostname()}`;
  const connection = await NativeConnection.connect({
    address: opts.settings.address,
    tls: temporalTls(opts.settings),
    ...(opts.settings.TEMPORAL_API_KEY ? { apiKey: opts.settings.TEMPORAL_API_KEY } : {}),
  });
  const dispatcher = new DeliveryDispatcher({
    db: opts.db,
    listen: opts.listen,
    temporalClient: () => opts.events.temporalClient(),
    logger: opts.logger,
    settings: { taskQueue: opts.taskQueue, ...opts.deliveryQueue },
  });
  await dispatcher.start();
  let worker: Worker;
  try {
    // Before polling, so that no worker of this queue runs without its repair: a worker that
    // cannot start it does not start at all.
    if (opts.videoExpiryRepair) await startVideoExpiryRepair(await opts.events.temporalClient(), opts.taskQueue, opts.videoExpiryRepair);
    worker = await Worker.create({
      connection,
      namespace: opts.settings.TEMPORAL_NAMESPACE,
      taskQueue: opts.taskQueue,
      identity,
      workflowBundle: { code: (await workflowBundle(WORKER_WORKFLOWS, { logger: opts.logger })).code },
      activities: createActivities({
        db: opts.db,
        workerIdentity: identity,
        sealedBox: opts.sealedBox,
        upstream: opts.upstream,
        events: opts.events,
        allowInsecureWebhookUrls: opts.allowInsecureWebhookUrls,
        disableEndpointAfterMs: opts.disableEndpointAfterMs,
        maxInFlightPerEndpoint: opts.maxInFlightPerEndpoint,
        dispatcher,
        deliveryQueue: opts.deliveryQueue,
        media: opts.media,
        allowInsecureSourceUrls: opts.allowInsecureSourceUrls,
        tokenRefreshRetryMs: opts.tokenRefreshRetryMs,
        logger: opts.logger,
        metrics,
      }),
      sinks: outcomeSinks(metrics),
      interceptors: { activity: [classifyActivityFailures] },
      // The default of 0 would cancel in-flight activities on every deploy.
      shutdownGraceTime: opts.shutdownGraceMs,
      ...(opts.stickyQueueTimeoutMs ? { stickyQueueScheduleToStartTimeout: opts.stickyQueueTimeoutMs } : {}),
    });
  } catch (err) {
    await dispatcher.close();
    throw err;
  }
  const done = worker.run().finally(async () => {
    await dispatcher.close();
    await connection.close();
  });
  done.catch((err: unknown) => opts.logger.fatal({ err }, 'worker stopped with an error'));
  opts.logger.info({ taskQueue: opts.taskQueue, identity }, 'worker polling');
  return {
    identity,
    done,
    state: () => worker.getState(),
    async stop() {
      // Drains hand their queues back at once instead of lingering into the grace time.
      dispatcher.beginShutdown();
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done.catch(() => undefined);
    },
  };
}

function outcomeSinks(metrics: Metrics): InjectedSinks<OutcomeSinks> {
  return {
    outcomes: {
      ended: {
        fn(info, outcome) {
          metrics.workflowOutcomes.inc({ workflow: info.workflowType, outcome });
          metrics.workflowDuration.observe({ workflow: info.workflowType, outcome }, (Date.now() - info.runStartTime.getTime()) / 1000);
        },
        callDuringReplay: false,
      },
    },
  };
}
