import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import { timestampDate } from '@bufbuild/protobuf/wkt';
import type {
  CreateEndpointRequest,
  DeleteEndpointRequest,
  EnableEndpointRequest,
  GetEndpointRequest,
  RecoverEndpointRequest,
  RotateSecretRequest,
  TestEndpointRequest,
  UpdateEndpointRequest,
  WebhookEndpointService,
} from '../../gen/vps/webhook/v1/webhook_pb';
import { customerOf } from '../context';
import type { Db } from '../db/client';
import { lockCustomer } from '../db/repositories/tenancy';
import { listUndeliveredEvents } from '../db/repositories/events';
import { cancelQueue, queueFigures } from '../db/repositories/delivery-queue';
import {
  countLiveEndpoints,
  deleteEndpoint,
  enableEndpoint,
  findLiveEndpoint,
  insertEndpoint,
  listLiveEndpoints,
  rotateSigningKey,
  updateEndpoint,
  type EndpointChanges,
} from '../db/repositories/webhook-endpoints';
import type { SealedBox } from '../crypto/sealed-box';
import type { EventRecorder } from '../events/recorder';
import { checkedDescription } from '../events/endpoint-description';
import { newEndpointSecret, sealSigningKey, storedKeysOf } from '../events/signing-keys';
import { newId } from '../ids';
import { ApiError, invalidField } from '../errors';
import { isSubscriptionPattern, patternMatches, catalogued, TEST_EVENT_TYPE } from '../events/event-types';
import { toEventMessage } from '../events/present';
import { toWebhookEndpoint } from '../mappers/accounts';
import { MAX_URL_LENGTH, refuseUnsafeUrl, type Resolver } from '../net/address-policy';
import { toDelivery } from './event.service';

export const MAX_ENDPOINTS_PER_CUSTOMER = 20;
/** Events one recover call redelivers; a caller continues from the last one's time. */
export const MAX_RECOVER_EVENTS = 1000;

/** The patterns as stored, duplicates dropped; the same rules at creation and on update. */
function checkedEventTypes(eventTypes: readonly string[]): string[] {
  if (eventTypes.length === 0) throw invalidField('eventTypes', 'must list at least one event type or pattern');
  const bad = eventTypes.find((p) => !isSubscriptionPattern(p));
  if (bad !== undefined)
    throw invalidField('eventTypes', `unknown event type or pattern ${JSON.stringify(bad)}; use "*", "vplat.*" or an exact type`);
  return [...new Set(eventTypes)];
}

export class WebhookEndpointHandlers implements ServiceImpl<typeof WebhookEndpointService> {
  constructor(
    private readonly deps: {
      db: Db;
      allowInsecureUrls: boolean;
      resolve?: Resolver;
      /** How long the previous secret keeps signing after a rotation. */
      secretGraceMs: number;
      /** Seals the signing keys: they sign pushes, so they are as secret as the secrets. */
      sealedBox: SealedBox;
      events: EventRecorder;
    },
  ) {}

  /** The URL as stored, parsed (the form deliveries will request, without stray whitespace); refused as creation refuses it. */
  private async checkedUrl(url: string): Promise<string> {
    if (!url) throw invalidField('url', 'is required');
    if (url.length > MAX_URL_LENGTH) throw invalidField('url', `must be at most ${MAX_URL_LENGTH} characters`);
    const refusal = await refuseUnsafeUrl(url, { allowInsecure: this.deps.allowInsecureUrls, resolve: this.deps.resolve });
    if (refusal) throw invalidField('url', refusal);
    return new URL(url).href;
  }

  async createEndpoint(req: CreateEndpointRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    const url = await this.checkedUrl(req.url);
    const eventTypes = checkedEventTypes(req.eventTypes);
    const description = checkedDescription(req.description);
    const secret = newEndpointSecret();
    // Known before the insert: the sealed key is bound to it.
    const id = newId('we');
    // The customer row lock makes count-then-insert exact under concurrent creations.
    const row = await this.deps.db.transaction(async (tx) => {
      await lockCustomer(tx, customerId);
      if ((await countLiveEndpoints(tx, customerId)) >= MAX_ENDPOINTS_PER_CUSTOMER) {
        throw invalidField('url', `at most ${MAX_ENDPOINTS_PER_CUSTOMER} webhook endpoints per customer; delete one first`);
      }
      return insertEndpoint(tx, {
        id,
        customerId,
        url,
        eventTypes,
        description,
        ...this.sealedKeys(id, secret),
      });
    });
    return { endpoint: toWebhookEndpoint(row), secret };
  }

  async rotateSecret(req: RotateSecretRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    const graceMs = this.oldSecretGraceMs(req.oldSecretExpiresInSeconds);
    const secret = newEndpointSecret();
    const row = await rotateSigningKey(
      this.deps.db,
      customerId,
      req.id,
      this.sealedKeys(req.id, secret),
      graceMs > 0 ? new Date(Date.now() + graceMs) : null,
    );
    if (!row) throw new ApiError(1005, `webhook endpoint ${req.id} does not exist`);
    return { endpoint: toWebhookEndpoint(row), secret };
  }

  /** What is stored for a secret: both keys, each sealed to the endpoint. */
  private sealedKeys(endpointId: string, secret: string): { signingKey: string; standardKey: string | null } {
    const { signingKey, standardKey } = storedKeysOf(secret);
    const seal = (value: string) => sealSigningKey(this.deps.sealedBox, endpointId, value);
    return { signingKey: seal(signingKey), standardKey: standardKey === null ? null : seal(standardKey) };
  }

  /**
   * How long the old secret keeps signing: the grace period unless the caller asks for less. Never
   * more: a receiver still trusting an old secret longer is what the grace period bounds.
   */
  private oldSecretGraceMs(requestedSeconds: number | undefined): number {
    if (requestedSeconds === undefined) return this.deps.secretGraceMs;
    const maxSeconds = Math.floor(this.deps.secretGraceMs / 1000);
    if (requestedSeconds > maxSeconds) {
      throw invalidField('oldSecretExpiresInSeconds', `must be at most ${maxSeconds} (the grace period); 0 expires the old secret at once`);
    }
    return requestedSeconds * 1000;
  }

  async getEndpoint(req: GetEndpointRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    const row = await findLiveEndpoint(this.deps.db, customerId, req.id);
    if (!row) throw new ApiError(1005, `webhook endpoint ${req.id} does not exist`);
    const figures = await queueFigures(this.deps.db, [row.id]);
    return { endpoint: toWebhookEndpoint(row, figures.get(row.id)) };
  }

  /**
   * Changes what the request sets and keeps the rest, the secret always. Disabling here is the
   * automatic disable's effect without its event: pending deliveries are cancelled in the same
   * transaction and the queue ends; enabling clears either kind, as `…/enable` does.
   */
  async updateEndpoint(req: UpdateEndpointRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    const changes: EndpointChanges = {};
    // Checked in field order, so the first bad field is the one named.
    if (req.url !== undefined) changes.url = await this.checkedUrl(req.url);
    if (req.eventTypes) changes.eventTypes = checkedEventTypes(req.eventTypes.patterns);
    if (req.description !== undefined) changes.description = checkedDescription(req.description);
    if (req.enabled !== undefined) changes.enabled = req.enabled;
    const row = await this.deps.db.transaction(async (tx) => {
      const updated = await updateEndpoint(tx, customerId, req.id, changes);
      if (updated && changes.enabled === false) await cancelQueue(tx, updated, this.deps.events.delivery.taskQueue);
      return updated;
    });
    if (!row) throw new ApiError(1005, `webhook endpoint ${req.id} does not exist`);
    const figures = await queueFigures(this.deps.db, [row.id]);
    return { endpoint: toWebhookEndpoint(row, figures.get(row.id)) };
  }

  async enableEndpoint(req: EnableEndpointRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    const row = await enableEndpoint(this.deps.db, customerId, req.id);
    if (!row) throw new ApiError(1005, `webhook endpoint ${req.id} does not exist`);
    return { endpoint: toWebhookEndpoint(row) };
  }

  async recoverEndpoint(req: RecoverEndpointRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    if (!req.since) throw invalidField('since', 'is required');
    const endpoint = await findLiveEndpoint(this.deps.db, customerId, req.id);
    if (!endpoint) throw new ApiError(1005, `webhook endpoint ${req.id} does not exist`);
    if (endpoint.disabledAt) throw invalidField('id', 'the endpoint is disabled; enable it first');
    const missed = await listUndeliveredEvents(this.deps.db, {
      customerId,
      endpointId: endpoint.id,
      types: endpoint.eventTypes,
      since: timestampDate(req.since),
      limit: MAX_RECOVER_EVENTS + 1,
    });
    // The SQL filter reads "*" as "every type"; the test events sent to other endpoints (or to this
    // one, once) are not this endpoint's to recover.
    const batch = missed.slice(0, MAX_RECOVER_EVENTS).filter((e) => endpoint.eventTypes.some((p) => patternMatches(p, e.type)));
    for (const event of batch) await this.deps.events.redeliver(event, { endpointId: endpoint.id });
    return { redelivered: batch.length, truncated: missed.length > MAX_RECOVER_EVENTS };
  }

  /**
   * Logs a test event and delivers it to this endpoint only. A disabled endpoint is refused, as for
   * redelivery and recovery: its deliveries are cancelled before any attempt, so a test could never
   * reach it; enabling it first is the one way back, and the test then checks the fixed receiver.
   */
  async testEndpoint(req: TestEndpointRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    const endpoint = await findLiveEndpoint(this.deps.db, customerId, req.id);
    if (!endpoint) throw new ApiError(1005, `webhook endpoint ${req.id} does not exist`);
    if (endpoint.disabledAt)
      throw invalidField('id', `the endpoint is disabled (${endpoint.disabledReason ?? 'no reason recorded'}); enable it first`);
    const { event, delivery } = await this.deps.events.recordFor(endpoint.id, {
      customerId,
      seatId: null,
      ...catalogued(TEST_EVENT_TYPE),
      occurredAt: new Date(),
      data: { endpoint_id: endpoint.id, url: endpoint.url, message: 'A test event, sent on request to this endpoint only' },
      // Every test is an event of its own.
      sourceKey: null,
    });
    // Deleted between the lookup and the delivery: the event stays in the log, undelivered.
    if (!delivery) throw new ApiError(1005, `webhook endpoint ${req.id} does not exist`);
    return { event: toEventMessage(event), delivery: toDelivery({ ...delivery, eventType: event.type }) };
  }

  async listEndpoints(_req: unknown, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    const rows = await listLiveEndpoints(this.deps.db, customerId);
    // One statement for every endpoint's figures, however many the customer has.
    const figures = await queueFigures(
      this.deps.db,
      rows.map((r) => r.id),
    );
    return { endpoints: rows.map((r) => toWebhookEndpoint(r, figures.get(r.id))) };
  }

  async deleteEndpoint(req: DeleteEndpointRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    // Its queue ends with it: pending deliveries are cancelled in the same transaction, and the
    // notice wakes the queue's workflow, which finds the endpoint gone and ends.
    const row = await this.deps.db.transaction(async (tx) => {
      const deleted = await deleteEndpoint(tx, customerId, req.id);
      if (deleted) await cancelQueue(tx, deleted, this.deps.events.delivery.taskQueue);
      return deleted;
    });
    if (!row) throw new ApiError(1005, `webhook endpoint ${req.id} does not exist`);
    return { id: row.id };
  }
}
