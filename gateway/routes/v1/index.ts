import type { RpcRoute } from '../../rpc-route';
import { eventRoutes } from './events';
import { publishingRoutes } from './publishing';
import { precheckRoutes } from './prechecks';
import { shopCatalogRoutes } from './shop-catalog';
import { commentRoutes } from './comments';
import { messageRoutes } from './messages';
import { insightRoutes } from './insights';
import { seatRoutes } from './seats';
import { webhookEndpointRoutes } from './webhook-endpoints';

/** Every /v1 route, in the order the spec lists them. */
export const v1Routes: RpcRoute[] = [
  ...seatRoutes,
  ...publishingRoutes,
  ...shopCatalogRoutes,
  ...precheckRoutes,
  ...commentRoutes,
  ...messageRoutes,
  ...insightRoutes,
  ...webhookEndpointRoutes,
  ...eventRoutes,
];
