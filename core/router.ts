import type { ConnectRouter, Interceptor } from '@connectrpc/connect';
import type { Client } from '@temporalio/client';
import { AdminService } from '../gen/vps/admin/v1/admin_pb';
import { AuthService } from '../gen/vps/auth/v1/auth_pb';
import { HealthService } from '../gen/vps/health/v1/health_pb';
import { ConsoleService } from '../gen/vps/console/v1/console_pb';
import { ConsoleSeatService } from '../gen/vps/console/v1/console_seats_pb';
import { SeatService } from '../gen/vps/seat/v1/seat_pb';
import { EventService, IngestService } from '../gen/vps/event/v1/event_pb';
import { WebhookEndpointService } from '../gen/vps/webhook/v1/webhook_pb';
import { VideoService } from '../gen/vps/video/v1/video_pb';
import { PublishService } from '../gen/vps/publish/v1/publish_pb';
import { PrecheckService, ShopCatalogService } from '../gen/vps/shop/v1/shop_pb';
import { ShopCatalogHandlers } from './services/shop-catalog.service';
import { CommentService } from '../gen/vps/engagement/v1/comment_pb';
import { MessageService } from '../gen/vps/engagement/v1/message_pb';
import { InsightService } from '../gen/vps/engagement/v1/insight_pb';
import { CommentHandlers } from './services/comment.service';
import { MessageHandlers } from './services/message.service';
import { InsightHandlers } from './services/insight.service';
import { PrecheckHandlers, type PrecheckSettings } from './services/precheck.service';
import type { MediaStore } from './media/storage';
import type { TokenSigner } from './media/signed-tokens';
import type { Upstream } from './upstream';
import { VideoHandlers, type VideoSettings } from './services/video.service';
import { PublishHandlers, type PublishSettings } from './services/publish.service';
import type { Db } from './db/client';
import type { SealedBox } from './crypto/sealed-box';
import { accessInterceptor } from './interceptors/access.interceptor';
import { errorsInterceptor } from './interceptors/errors.interceptor';
import { observeInterceptor } from './interceptors/observe.interceptor';
import { createMetrics, type Metrics } from './observability/metrics';
import { postgresProbe, runProbes, temporalProbe, type ReadinessReport } from './observability/readiness';
import { HealthHandlers } from './services/health.service';
import { idempotencyInterceptor, replayable } from './interceptors/idempotency.interceptor';

/** How long an Idempotency-Key and its response are kept. */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 3_600_000;
import type { Logger } from './logger';
import type { Resolver } from './net/address-policy';
import { AdminHandlers } from './services/admin.service';
import { AuthHandlers } from './services/auth.service';
import { ConsoleHandlers, DEFAULT_SIGN_IN, type SignInSettings } from './services/console.service';
import { ConsoleSeatHandlers } from './services/console-seat.service';
import { DEFAULT_CONNECT_STATE_TTL_MS } from './seats/connect-state';
import { DEFAULT_SESSION_LIFETIME, type SessionLifetime } from './db/repositories/console-sessions';
import { notificationQueueUsage } from './db/repositories/events';
import { SeatHandlers } from './services/seat.service';
import { EventHandlers, type WatchEvents } from './services/event.service';
import { IngestHandlers } from './services/ingest.service';
import { WebhookEndpointHandlers } from './services/webhook-endpoint.service';
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
  /** The platform's message media hosts (VPLAT_MEDIA_HOSTS); its API origin is allowed besides. */
  vplatMediaHosts: readonly string[];
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
  /** The console sign-in throttle and the bound on password checks; DEFAULT_SIGN_IN when not given. */
  signIn?: SignInSettings;
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
  metrics.readNotificationQueueFrom(() => notificationQueueUsage(deps.db));
  const probes = [postgresProbe(deps.db, true), temporalProbe(deps.temporalClient, false)];
  const binding = {
    db: deps.db,
    sealedBox: deps.sealedBox,
    startTokenRefresh: tokenRefreshStarter(deps.temporalClient, { taskQueue: deps.taskQueue, ...deps.tokenRefresh }),
    logger: deps.logger,
  };
  const services = {
    admin: new AdminHandlers({ ...binding, health }),
    auth: new AuthHandlers(),
    health: new HealthHandlers(probes),
    console: new ConsoleHandlers({ db: deps.db, lifetime: sessionLifetime, signIn: deps.signIn ?? DEFAULT_SIGN_IN, logger: deps.logger }),
    seats: new SeatHandlers({ db: deps.db }),
    consoleSeats: new ConsoleSeatHandlers({
      ...binding,
      upstream: deps.upstream,
      signer: deps.signer,
      publicUrl: deps.publicUrl,
      stateTtlMs: deps.seatConnectTtlMs ?? DEFAULT_CONNECT_STATE_TTL_MS,
    }),
    webhooks: new WebhookEndpointHandlers({
      db: deps.db,
      allowInsecureUrls: deps.allowInsecureWebhookUrls,
      resolve: deps.resolve,
      secretGraceMs: deps.secretGraceMs,
      sealedBox: deps.sealedBox,
      events: deps.events,
    }),
    events: new EventHandlers({ db: deps.db, events: deps.events, watch: deps.watchEvents }),
    ingest: new IngestHandlers({ db: deps.db, events: deps.events, app: deps.vplatApp, logger: deps.logger }),
    videos: new VideoHandlers({
      db: deps.db,
      media: deps.media,
      signer: deps.signer,
      publicUrl: deps.publicUrl,
      temporalClient: deps.temporalClient,
      taskQueue: deps.taskQueue,
      settings: deps.videos,
      allowInsecureSourceUrls: deps.allowInsecureSourceUrls,
      logger: deps.logger,
      events: deps.events,
      resolve: deps.resolve,
    }),
    publishing: new PublishHandlers({
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
    shopCatalog: new ShopCatalogHandlers({
      db: deps.db,
      sealedBox: deps.sealedBox,
      upstream: deps.upstream,
      productCacheTtlMs: deps.shop.productCacheTtlMs,
    }),
    prechecks: new PrecheckHandlers({
      db: deps.db,
      temporalClient: deps.temporalClient,
      taskQueue: deps.taskQueue,
      settings: deps.shop.precheck,
    }),
    comments: new CommentHandlers({ db: deps.db, sealedBox: deps.sealedBox, upstream: deps.upstream }),
    messages: new MessageHandlers({
      db: deps.db,
      sealedBox: deps.sealedBox,
      upstream: deps.upstream,
      events: deps.events,
      logger: deps.logger,
      mediaHosts: deps.vplatMediaHosts,
    }),
    insights: new InsightHandlers({
      db: deps.db,
      sealedBox: deps.sealedBox,
      upstream: deps.upstream,
      events: deps.events,
      logger: deps.logger,
    }),
  };
  return {
    routes: (router) => {
      router.service(AdminService, replayable(services.admin));
      router.service(AuthService, replayable(services.auth));
      router.service(HealthService, replayable(services.health));
      router.service(ConsoleService, replayable(services.console));
      router.service(SeatService, replayable(services.seats));
      router.service(ConsoleSeatService, replayable(services.consoleSeats));
      router.service(WebhookEndpointService, replayable(services.webhooks));
      router.service(EventService, replayable(services.events));
      router.service(IngestService, replayable(services.ingest));
      router.service(VideoService, replayable(services.videos));
      router.service(PublishService, replayable(services.publishing));
      router.service(ShopCatalogService, replayable(services.shopCatalog));
      router.service(PrecheckService, replayable(services.prechecks));
      router.service(CommentService, replayable(services.comments));
      router.service(MessageService, replayable(services.messages));
      router.service(InsightService, replayable(services.insights));
    },
    interceptors: [
      observeInterceptor({ logger: deps.logger, metrics }),
      errorsInterceptor(deps.logger),
      accessInterceptor({
        db: deps.db,
        adminToken: deps.adminToken,
        ratePerMinute: deps.ratePerMinute,
        sessionTtlMs: sessionLifetime.ttlMs,
        metrics,
      }),
      idempotencyInterceptor({ db: deps.db, ttlMs: IDEMPOTENCY_KEY_TTL_MS, sealedBox: deps.sealedBox, logger: deps.logger }),
    ],
    readiness: () => runProbes(probes),
  };
}
