import type { RpcRoute } from '../../rpc-route';
import { eventRoutes } from './events';
import { seatRoutes } from './seats';
import { webhookEndpointRoutes } from './webhook-endpoints';

/** Every /v1 route, in the order the spec lists them. */
export const v1Routes: RpcRoute[] = [...seatRoutes, ...webhookEndpointRoutes, ...eventRoutes];
