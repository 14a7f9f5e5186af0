import type { ConnectRouter, Interceptor } from '@connectrpc/connect';
import type { Client } from '@temporalio/client';
import { AdminService as AdminServiceDesc } from '../gen/vps/admin/v1/admin_pb';
import { AuthService as AuthServiceDesc } from '../gen/vps/auth/v1/auth_pb';
import { HealthService as HealthServiceDesc } from '../gen/vps/health/v1/health_pb';
import { ConsoleService as ConsoleServiceDesc } from '../gen/vps/console/v1/console_pb';
import { ConsoleSeatService as ConsoleSeatServiceDesc } from '../gen/vps/console/v1/console_seats_pb';
import { SeatService as SeatServiceDesc } from '../gen/vps/seat/v1/seat_pb';
import { EventService as EventServiceDesc, IngestService as IngestServiceDesc } from '../gen/vps/event/v1/event_pb';
import { WebhookEndpointService as WebhookEndpointServiceDesc } from '../gen/vps/webhook/v1/webhook_pb';
import { VideoService as VideoServiceDesc } from '../gen/vps/video/v1/video_pb';
import { PublishService as PublishServiceDesc } from '../gen/vps/publish/v1/publish_pb';
import { PrecheckService as PrecheckServiceDesc, ShopCatalogService as ShopCatalogServiceDesc } from '../gen/vps/shop/v1/shop_pb';
import { ShopCatalogService } from './services/shop-catalog.service';
import { CommentService as CommentServiceDesc } from '../gen/vps/engagement/v1/comment_pb';
import { MessageService as MessageServiceDesc } from '../gen/vps/engagement/v1/message_pb';
import { InsightService as InsightServiceDesc } from '../gen/vps/engagement/v1/insight_pb';
import { CommentService } from './services/comment.service';
import { MessageService } from './services/message.service';
import { InsightService } from './services/insight.service';
import { PrecheckService, type PrecheckSettings } from './services/precheck.service';
import type { MediaStore } from './media/storage';
import type { TokenSigner } from './media/signed-tokens';
import type { Upstream } from './upstream';
import { VideoService, type VideoSettings } from './services/video.service';
import { PublishService, type PublishSettings } from './services/publish.service';
import type { Db } from './db/client';
import type { SealedBox } from './crypto/sealed-box';
import { accessInterceptor } from './interceptors/access.interceptor';
import { errorsInterceptor } from './interceptors/errors.interceptor';
import { observeInterceptor } from './interceptors/observe.interceptor';
import { createMetrics, type Metrics } from './observability/metrics';
import { postgresProbe, runProbes, temporalProbe, type ReadinessReport } from './observability/readiness';
import { HealthService } from './services/health.service';
import { idempotencyInterceptor, replayable } from './interceptors/idempotency.interceptor';

/** How long an Idempotency-Key and its response are kept. */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 3_600_000;
import type { Logger } from './logger';
import type { Resolver } from './net/address-policy';
import { AdminService } from './services/admin.service';
import { AuthService } from './services/auth.service';
import { ConsoleService } from './services/console.service';
import { ConsoleSeatService } from './services/console-seat.service';
import { DEFAULT_CONNECT_STATE_TTL_MS } from './seats/connect-state';
import { DEFAULT_SESSION_LIFETIME, type SessionLifetime } from './db/repositories/console-sessions';
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
  /** The official APIs, for reads made while a caller waits (status refresh, pass-through lookups). */
  upstream: Upstream;
  /** Stored media, shared with gateways and workers. */
  media: MediaStore;
  /** Signs media URLs and upload tickets. */
  signer: TokenSigner;
  /** Public origin of the gateway, for media URLs. */
  publicUrl: string;
  videos: VideoSettings;
  publishing: PublishSettings;
  /** Accept http and private sourceUrl addresses (local development only). */
  allowInsecureSourceUrls: boolean;
  /** The shop track: how long product answers are reused, and the pre-checks' quota and pacing. */
  shop: { productCacheTtlMs: number; precheck: PrecheckSettings };
  /** Lifetime of console sessions (idle and absolute); DEFAULT_SESSION_LIFETIME when not given. */
  consoleSessions?: SessionLifetime;
  /** How long a seat connect's OAuth state is accepted; DEFAULT_CONNECT_STATE_TTL_MS when not given. */
  seatConnectTtlMs?: number;
  /** The process's metrics; a private set when not given (nothing scrapes it then). */
  metrics?: Metrics;
}

export interface CoreHandlers {
  routes: (router: ConnectRouter) => void;
  /** Outermost first: errors wrap access, so every refusal is rendered with its code. */
  interceptors: Interceptor[];
}

export interface Core extends CoreHandlers {
  /** Whether core can serve requests: Postgres gates it; Temporal is reported, since reads work without it. */
  readiness(): Promise<ReadinessReport>;
}

/** The core's Connect services and interceptors, ready for an HTTP server or an in-memory transport. */
export function createCore(deps: CoreDeps): Core {
  const health = temporalHealthProbe({ client: deps.temporalClient, taskQueue: deps.taskQueue, timeoutMs: 30_000 });
  const sessionLifetime = deps.consoleSessions ?? DEFAULT_SESSION_LIFETIME;
  const metrics = deps.metrics ?? createMetrics({ role: 'core', processMetrics: false });
  const probes = [postgresProbe(deps.db, true), temporalProbe(deps.temporalClient, false)];
  const binding = {
    db: deps.db,
    sealedBox: deps.sealedBox,
    startTokenRefresh: tokenRefreshStarter(deps.temporalClient, { taskQueue: deps.taskQueue, ...deps.tokenRefresh }),
    logger: deps.logger,
  };
  const services = {
    admin: new AdminService({ ...binding, health }),
    auth: new AuthService(),
    health: new HealthService(probes),
    console: new ConsoleService({ db: deps.db, lifetime: sessionLifetime }),
    seats: new SeatService({ db: deps.db }),
    consoleSeats: new ConsoleSeatService({
      ...binding,
      upstream: deps.upstream,
      signer: deps.signer,
      publicUrl: deps.publicUrl,
      stateTtlMs: deps.seatConnectTtlMs ?? DEFAULT_CONNECT_STATE_TTL_MS,
    }),
    webhooks: new WebhookEndpointService({
      db: deps.db,
      allowInsecureUrls: deps.allowInsecureWebhookUrls,
      resolve: deps.resolve,
      secretGraceMs: deps.secretGraceMs,
      events: deps.events,
    }),
    events: new EventService({ db: deps.db, events: deps.events, watch: deps.watchEvents }),
    ingest: new IngestService({ db: deps.db, events: deps.events, app: deps.vplatApp, logger: deps.logger }),
    videos: new VideoService({
      db: deps.db,
      media: deps.media,
      signer: deps.signer,
      publicUrl: deps.publicUrl,
      temporalClient: deps.temporalClient,
      taskQueue: deps.taskQueue,
      settings: deps.videos,
      allowInsecureSourceUrls: deps.allowInsecureSourceUrls,
      logger: deps.logger,
      resolve: deps.resolve,
    }),
    publishing: new PublishService({
      db: deps.db,
      sealedBox: deps.sealedBox,
      upstream: deps.upstream,
      events: deps.events,
      signer: deps.signer,
      publicUrl: deps.publicUrl,
      temporalClient: deps.temporalClient,
      taskQueue: deps.taskQueue,
      settings: deps.publishing,
      logger: deps.logger,
    }),
    shopCatalog: new ShopCatalogService({ db: deps.db, sealedBox: deps.sealedBox, upstream: deps.upstream, productCacheTtlMs: deps.shop.productCacheTtlMs }),
    prechecks: new PrecheckService({ db: deps.db, temporalClient: deps.temporalClient, taskQueue: deps.taskQueue, settings: deps.shop.precheck }),
    comments: new CommentService({ db: deps.db, sealedBox: deps.sealedBox, upstream: deps.upstream }),
    messages: new MessageService({ db: deps.db, sealedBox: deps.sealedBox, upstream: deps.upstream, events: deps.events }),
    insights: new InsightService({ db: deps.db, sealedBox: deps.sealedBox, upstream: deps.upstream, events: deps.events, logger: deps.logger }),
  };
  return {
    routes: (router) => {
      router.service(AdminServiceDesc, replayable(services.admin));
      router.service(AuthServiceDesc, replayable(services.auth));
      router.service(HealthServiceDesc, replayable(services.health));
      router.service(ConsoleServiceDesc, replayable(services.console));
      router.service(SeatServiceDesc, replayable(services.seats));
      router.service(ConsoleSeatServiceDesc, replayable(services.consoleSeats));
      router.service(WebhookEndpointServiceDesc, replayable(services.webhooks));
      router.service(EventServiceDesc, replayable(services.events));
      router.service(IngestServiceDesc, replayable(services.ingest));
      router.service(VideoServiceDesc, replayable(services.videos));
      router.service(PublishServiceDesc, replayable(services.publishing));
      router.service(ShopCatalogServiceDesc, replayable(services.shopCatalog));
      router.service(PrecheckServiceDesc, replayable(services.prechecks));
      router.service(CommentServiceDesc, replayable(services.comments));
      router.service(MessageServiceDesc, replayable(services.messages));
      router.service(InsightServiceDesc, replayable(services.insights));
    },
    interceptors: [
      observeInterceptor({ logger: deps.logger, metrics }),
      errorsInterceptor(deps.logger),
      accessInterceptor({ db: deps.db, adminToken: deps.adminToken, ratePerMinute: deps.ratePerMinute, sessionTtlMs: sessionLifetime.ttlMs, metrics }),
      idempotencyInterceptor({ db: deps.db, ttlMs: IDEMPOTENCY_KEY_TTL_MS, sealedBox: deps.sealedBox, logger: deps.logger }),
    ],
    readiness: () => runProbes(probes),
  };
}
