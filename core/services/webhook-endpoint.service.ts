import { createHash, randomBytes } from 'node:crypto';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type {
  CreateEndpointRequest,
  DeleteEndpointRequest,
  WebhookEndpointService as WebhookEndpointServiceDesc,
} from '../../gen/vps/webhook/v1/webhook_pb';
import { customerOf } from '../context';
import type { Db } from '../db/client';
import { lockCustomer } from '../db/repositories/tenancy';
import { countLiveEndpoints, deleteEndpoint, insertEndpoint, listLiveEndpoints } from '../db/repositories/webhook-endpoints';
import { ApiError, invalidField } from '../errors';
import { isSubscriptionPattern } from '../events/event-types';
import { toWebhookEndpoint } from '../mappers/messages';
import { MAX_URL_LENGTH, refuseUnsafeUrl, type Resolver } from '../net/address-policy';

export const MAX_ENDPOINTS_PER_CUSTOMER = 20;

export class WebhookEndpointService implements ServiceImpl<typeof WebhookEndpointServiceDesc> {
  constructor(private readonly deps: { db: Db; allowInsecureUrls: boolean; resolve?: Resolver }) {}

  async createEndpoint(req: CreateEndpointRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    if (!req.url) throw invalidField('url', 'is required');
    if (req.url.length > MAX_URL_LENGTH) throw invalidField('url', `must be at most ${MAX_URL_LENGTH} characters`);
    const refusal = await refuseUnsafeUrl(req.url, { allowInsecure: this.deps.allowInsecureUrls, resolve: this.deps.resolve });
    if (refusal) throw invalidField('url', refusal);
    if (req.eventTypes.length === 0) throw invalidField('eventTypes', 'must list at least one event type or pattern');
    const bad = req.eventTypes.find((p) => !isSubscriptionPattern(p));
    if (bad !== undefined) throw invalidField('eventTypes', `unknown event type or pattern ${JSON.stringify(bad)}; use "*", "vplat.*" or an exact type`);
    const secret = `whsec_${randomBytes(32).toString('base64url')}`;
    // The customer row lock makes count-then-insert exact under concurrent creations.
    const row = await this.deps.db.transaction(async (tx) => {
      await lockCustomer(tx, customerId);
      if ((await countLiveEndpoints(tx, customerId)) >= MAX_ENDPOINTS_PER_CUSTOMER) {
        throw invalidField('url', `at most ${MAX_ENDPOINTS_PER_CUSTOMER} webhook endpoints per customer; delete one first`);
      }
      return insertEndpoint(tx, {
        customerId,
        // Stored as parsed: the form deliveries will request, without stray whitespace.
        url: new URL(req.url).href,
        eventTypes: [...new Set(req.eventTypes)],
        signingKey: createHash('sha256').update(secret).digest('hex'),
      });
    });
    return { endpoint: toWebhookEndpoint(row), secret };
  }

  async listEndpoints(_req: unknown, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    return { endpoints: (await listLiveEndpoints(this.deps.db, customerId)).map(toWebhookEndpoint) };
  }

  async deleteEndpoint(req: DeleteEndpointRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    const row = await deleteEndpoint(this.deps.db, customerId, req.id);
    if (!row) throw new ApiError(1005, `webhook endpoint ${req.id} does not exist`);
    return { id: row.id };
  }
}
