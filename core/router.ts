import type { ConnectRouter, Interceptor } from '@connectrpc/connect';
import type { Client } from '@temporalio/client';
import { AdminService as AdminServiceDesc } from '../gen/vps/admin/v1/admin_pb';
import { AuthService as AuthServiceDesc } from '../gen/vps/auth/v1/auth_pb';
import { SeatService as SeatServiceDesc } from '../gen/vps/seat/v1/seat_pb';
import { EventService as EventServiceDesc, IngestService as IngestServiceDesc } from '../gen/vps/event/v1/event_pb';
import { WebhookEndpointService as WebhookEndpointServiceDesc } from '../gen/vps/webhook/v1/webhook_pb';
import type { Db } from './db/client';
import type { SealedBox } from './crypto/sealed-box';
import { accessInterceptor } from './interceptors/access.interceptor';
import { errorsInterceptor } from './interceptors/errors.interceptor';
import { idempotencyInterceptor } from './interceptors/idempotency.interceptor';

/** How long an Idempotency-Key and its response are kept. */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 3_600_000;
import type { Logger } from './logger';
import type { Resolver } from './net/address-policy';
import { AdminService } from './services/admin.service';
import { AuthService } from './services/auth.service';
import { SeatService } from './services/seat.service';
import { EventService, type WatchEvents } from './services/event.service';
import { IngestService } from './services/ingest.service';
import { WebhookEndpointService } from './services/webhook-endpoint.service';
import type { EventRecorder } from './events/recorder';
import { temporalHealthProbe } from './temporal/health';
import { tokenRefreshStarter } from './temporal/token-refresh';

export interface CoreDeps {
  db: Db;
  logger: Logger;
  sealedBox: SealedBox;
  adminToken: string | undefined;
  ratePerMinute: number;
  allowInsecureWebhookUrls: boolean;
  temporalClient: () => Promise<Client>;
  taskQueue: string;
  /** When to refresh upstream tokens: this long before expiry, never more often than the interval. */
  tokenRefresh: { marginSeconds: number; minIntervalMs: number };
  /** Stores events and starts their deliveries. */
  events: EventRecorder;
  /** The short-video platform app, whose secret signs its webhooks. */
  vplatApp: { appId: string; appSecret: string };
  /** After a secret rotation, how long the old secret keeps signing. */
  secretGraceMs: number;
  /** Streams a caller's events (the SSE stream behind the gateway). */
  watchEvents: WatchEvents;
  resolve?: Resolver;
}

export interface CoreHandlers {
  routes: (router: ConnectRouter) => void;
  /** Outermost first: errors wrap access, so every refusal is rendered with its code. */
  interceptors: Interceptor[];
}

/** The core's Connect services and interceptors, ready for an HTTP server or an in-memory transport. */
export function createCore(deps: CoreDeps): CoreHandlers {
  const health = temporalHealthProbe({ client: deps.temporalClient, taskQueue: deps.taskQueue, timeoutMs: 30_000 });
  const services = {
    admin: new AdminService({
      db: deps.db,
      sealedBox: deps.sealedBox,
      health,
      startTokenRefresh: tokenRefreshStarter(deps.temporalClient, { taskQueue: deps.taskQueue, ...deps.tokenRefresh }),
      logger: deps.logger,
    }),
    auth: new AuthService(),
    seats: new SeatService({ db: deps.db }),
    webhooks: new WebhookEndpointService({
      db: deps.db,
      allowInsecureUrls: deps.allowInsecureWebhookUrls,
      resolve: deps.resolve,
      secretGraceMs: deps.secretGraceMs,
      events: deps.events,
    }),
    events: new EventService({ db: deps.db, events: deps.events, watch: deps.watchEvents }),
    ingest: new IngestService({ db: deps.db, events: deps.events, app: deps.vplatApp, logger: deps.logger }),
  };
  return {
    routes: (router) => {
      router.service(AdminServiceDesc, services.admin);
      router.service(AuthServiceDesc, services.auth);
      router.service(SeatServiceDesc, services.seats);
      router.service(WebhookEndpointServiceDesc, services.webhooks);
      router.service(EventServiceDesc, services.events);
      router.service(IngestServiceDesc, services.ingest);
    },
    interceptors: [
      errorsInterceptor(deps.logger),
      accessInterceptor({ db: deps.db, adminToken: deps.adminToken, ratePerMinute: deps.ratePerMinute }),
      idempotencyInterceptor({ db: deps.db, ttlMs: IDEMPOTENCY_KEY_TTL_MS, sealedBox: deps.sealedBox }),
    ],
  };
}
