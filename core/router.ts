import type { ConnectRouter, Interceptor } from '@connectrpc/connect';
import type { Client } from '@temporalio/client';
import { AdminService as AdminServiceDesc } from '../gen/vps/admin/v1/admin_pb';
import { AuthService as AuthServiceDesc } from '../gen/vps/auth/v1/auth_pb';
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
import { idempotencyInterceptor } from './interceptors/idempotency.interceptor';

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
}

export interface CoreHandlers {
  routes: (router: ConnectRouter) => void;
  /** Outermost first: errors wrap access, so every refusal is rendered with its code. */
  interceptors: Interceptor[];
}

/** The core's Connect services and interceptors, ready for an HTTP server or an in-memory transport. */
export function createCore(deps: CoreDeps): CoreHandlers {
  const health = temporalHealthProbe({ client: deps.temporalClient, taskQueue: deps.taskQueue, timeoutMs: 30_000 });
  const sessionLifetime = deps.consoleSessions ?? DEFAULT_SESSION_LIFETIME;
  const binding = {
    db: deps.db,
    sealedBox: deps.sealedBox,
    startTokenRefresh: tokenRefreshStarter(deps.temporalClient, { taskQueue: deps.taskQueue, ...deps.tokenRefresh }),
    logger: deps.logger,
  };
  const services = {
    admin: new AdminService({ ...binding, health }),
    auth: new AuthService(),
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
    }),
    shopCatalog: new ShopCatalogService({ db: deps.db, sealedBox: deps.sealedBox, upstream: deps.upstream, productCacheTtlMs: deps.shop.productCacheTtlMs }),
    prechecks: new PrecheckService({ db: deps.db, temporalClient: deps.temporalClient, taskQueue: deps.taskQueue, settings: deps.shop.precheck }),
    comments: new CommentService({ db: deps.db, sealedBox: deps.sealedBox, upstream: deps.upstream }),
    messages: new MessageService({ db: deps.db, sealedBox: deps.sealedBox, upstream: deps.upstream, events: deps.events }),
    insights: new InsightService({ db: deps.db, sealedBox: deps.sealedBox, upstream: deps.upstream }),
  };
  return {
    routes: (router) => {
      router.service(AdminServiceDesc, services.admin);
      router.service(AuthServiceDesc, services.auth);
      router.service(ConsoleServiceDesc, services.console);
      router.service(SeatServiceDesc, services.seats);
      router.service(ConsoleSeatServiceDesc, services.consoleSeats);
      router.service(WebhookEndpointServiceDesc, services.webhooks);
      router.service(EventServiceDesc, services.events);
      router.service(IngestServiceDesc, services.ingest);
      router.service(VideoServiceDesc, services.videos);
      router.service(PublishServiceDesc, services.publishing);
      router.service(ShopCatalogServiceDesc, services.shopCatalog);
      router.service(PrecheckServiceDesc, services.prechecks);
      router.service(CommentServiceDesc, services.comments);
      router.service(MessageServiceDesc, services.messages);
      router.service(InsightServiceDesc, services.insights);
    },
    interceptors: [
      errorsInterceptor(deps.logger),
      accessInterceptor({ db: deps.db, adminToken: deps.adminToken, ratePerMinute: deps.ratePerMinute, sessionTtlMs: sessionLifetime.ttlMs }),
      idempotencyInterceptor({ db: deps.db, ttlMs: IDEMPOTENCY_KEY_TTL_MS, sealedBox: deps.sealedBox }),
    ],
  };
}
