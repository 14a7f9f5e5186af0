import { Type, type Static } from '@sinclair/typebox';
import { MAX_DESCRIPTION_LENGTH } from '../../core/events/endpoint-description';
import { MAX_URL_LENGTH } from '../../core/net/address-policy';
import { NullableTimestamp, Timestamp } from './common';
import { DeliveryJson, EventJson } from './events';

export const WebhookEndpointJson = Type.Object({
  id: Type.String(),
  url: Type.String(),
  eventTypes: Type.Array(Type.String()),
  description: Type.Union([Type.String(), Type.Null()], { description: 'Your note on the endpoint; null when none' }),
  createdAt: Timestamp,
  disabledAt: NullableTimestamp,
  disabledReason: Type.Union([Type.String(), Type.Null()]),
  previousSecretExpiresAt: Type.Union([Timestamp, Type.Null()], {
    description: "Until then, pushes also carry the previous secret's signature",
  }),
});
export type WebhookEndpointJson = Static<typeof WebhookEndpointJson>;

/** An endpoint's pending deliveries when the list was read: the figures its queue workflow reports. */
export const DeliveryQueueJson = Type.Object(
  {
    backlog: Type.Integer({ minimum: 0, description: 'Pending deliveries: due now, waiting for a retry, or being sent' }),
    due: Type.Integer({ minimum: 0, description: 'Pending deliveries due now or earlier and not being sent' }),
    inFlight: Type.Integer({ minimum: 0, description: 'Deliveries being sent right now' }),
    oldestDueAt: Type.Unsafe<string | null>({
      ...NullableTimestamp,
      description: 'When the oldest due delivery became due; null when none is due',
    }),
    nextDueAt: Type.Unsafe<string | null>({
      ...NullableTimestamp,
      description: 'When the next delivery not being sent is or becomes due; null when none is waiting',
    }),
  },
  { description: "The endpoint's delivery queue, measured when the list was read" },
);
export type DeliveryQueueJson = Static<typeof DeliveryQueueJson>;

/** An endpoint as listed: with its delivery queue's figures, which the single-endpoint answers leave out. */
export const ListedWebhookEndpointJson = Type.Composite([WebhookEndpointJson, Type.Object({ queue: DeliveryQueueJson })]);
export type ListedWebhookEndpointJson = Static<typeof ListedWebhookEndpointJson>;

const EndpointUrl = Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH, description: 'Public https URL that receives the pushes' });
const EventTypePatterns = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  minItems: 1,
  maxItems: 20,
  description: 'Patterns: "*", "vplat.*", or exact event types',
});
const EndpointDescription = Type.String({
  maxLength: MAX_DESCRIPTION_LENGTH,
  description: `A note on the endpoint: one line, at most ${MAX_DESCRIPTION_LENGTH} characters; "" clears it`,
});

export const CreateWebhookEndpointBody = Type.Object(
  { url: EndpointUrl, eventTypes: EventTypePatterns, description: Type.Optional(EndpointDescription) },
  { additionalProperties: false },
);
export type CreateWebhookEndpointBody = Static<typeof CreateWebhookEndpointBody>;

/** PATCH: the fields given change, the others (and the secret) stay; `{}` changes nothing. */
export const UpdateWebhookEndpointBody = Type.Object(
  {
    url: Type.Optional(EndpointUrl),
    eventTypes: Type.Optional(EventTypePatterns),
    description: Type.Optional(Type.Union([EndpointDescription, Type.Null()], { description: EndpointDescription.description })),
    enabled: Type.Optional(
      Type.Boolean({
        description:
          'true lets a disabled endpoint (by request or automatically) receive pushes again, as POST …/enable does; false disables it and cancels its pending deliveries',
      }),
    ),
  },
  { additionalProperties: false },
);
export type UpdateWebhookEndpointBody = Static<typeof UpdateWebhookEndpointBody>;

export const CreatedWebhookEndpointJson = Type.Composite([
  WebhookEndpointJson,
  Type.Object({ secret: Type.String({ description: 'Signing secret, returned only here, once' }) }),
]);

export const EndpointIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });

export const RecoverEndpointBody = Type.Object(
  {
    since: Type.String({
      format: 'date-time',
      description: 'Redeliver events that occurred at or after this time and never reached the endpoint',
    }),
  },
  { additionalProperties: false },
);
export type RecoverEndpointBody = Static<typeof RecoverEndpointBody>;

/**
 * The old secret's time left after a rotation. The bound here is the field's type (uint32); core
 * holds the real one, the configured grace period, and names it when it refuses.
 */
export const RotateSecretBody = Type.Object(
  {
    oldSecretExpiresInSeconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 4_294_967_295,
        description:
          "Seconds the old secret keeps signing beside the new one, at most the grace period (86400, 24 hours, unless the service is configured otherwise), which also applies when this is absent. 0 expires it at once, for a secret that leaked: pushes sent after the rotation carry the new secret's signature only",
      }),
    ),
  },
  { additionalProperties: false },
);
export type RotateSecretBody = Static<typeof RotateSecretBody>;

/** Actions that take no parameters (enable, test) accept no body fields. */
export const EmptyActionBody = Type.Object({}, { additionalProperties: false });

export const RecoveredJson = Type.Object({ redelivered: Type.Integer(), truncated: Type.Boolean() });

export const DeletedEndpointJson = Type.Object({ id: Type.String(), deleted: Type.Literal(true) });

/** A test event and its delivery as started: follow GET /v1/events/{eventId}/deliveries for the outcome. */
export const TestEventJson = Type.Object({ event: EventJson, delivery: DeliveryJson });
