import { Type, type Static } from '@sinclair/typebox';
import { MAX_URL_LENGTH } from '../../core/net/address-policy';
import { Timestamp } from './common';

export const WebhookEndpointJson = Type.Object({
  id: Type.String(),
  url: Type.String(),
  eventTypes: Type.Array(Type.String()),
  createdAt: Timestamp,
});
export type WebhookEndpointJson = Static<typeof WebhookEndpointJson>;

export const CreateWebhookEndpointBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH, description: 'Public https URL that receives the pushes' }),
    eventTypes: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
      minItems: 1,
      maxItems: 20,
      description: 'Patterns: "*", "vplat.*", or exact event types',
    }),
  },
  { additionalProperties: false },
);
export type CreateWebhookEndpointBody = Static<typeof CreateWebhookEndpointBody>;

export const CreatedWebhookEndpointJson = Type.Composite([
  WebhookEndpointJson,
  Type.Object({ secret: Type.String({ description: 'Signing secret, returned only here, once' }) }),
]);

export const EndpointIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });
