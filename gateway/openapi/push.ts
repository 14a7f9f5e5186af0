/**
 * The push (spec, Events: Push request) as the document's OpenAPI 3.1 `webhooks` entry: the POST
 * the service sends to each matching webhook endpoint, which customers implement rather than call.
 * Header names come from the signer (core/events/push-signature.ts), the body is the shared Event
 * component, and the answers are what the delivery activity counts (activities/endpoint-drain.ts).
 */
import type { OpenAPIV3_1 } from 'openapi-types';
import {
  DELIVERY_ID_HEADER,
  EVENT_ID_HEADER,
  SIGNATURE_HEADER,
  STANDARD_ID_HEADER,
  STANDARD_SIGNATURE_HEADER,
  STANDARD_TIMESTAMP_HEADER,
} from '../../core/events/push-signature';
import { componentRef } from './components';

/** The spec's replay window (Limits: "Signature replay window, 300 seconds"). */
const REPLAY_WINDOW_SECONDS = 300;

/** `x-service-signature` as the spec writes it: X-Service-Signature (HTTP header names ignore case). */
const spelled = (header: string) => header.replace(/(^|-)([a-z])/g, (_, dash: string, letter: string) => dash + letter.toUpperCase());

const DESCRIPTION = `The service POSTs each event, as JSON, to the url of every webhook endpoint whose eventTypes match it.
The body is the event object, the same shape as GET /v1/events items.

**Verify before processing** (the TypeScript SDK's \`verifyWebhookSignature\` does all of this):
1. Parse \`${spelled(SIGNATURE_HEADER)}\` into \`t\` and every \`v1\`.
2. Reject when |now − t| is above ${REPLAY_WINDOW_SECONDS} seconds (the replay window).
3. key = lower-case hex of SHA-256 of the endpoint secret (as text).
4. expected = lower-case hex of HMAC-SHA256 with that key over \`<t>.<raw body>\`, the body exactly as received.
5. Accept when any \`v1\` equals expected, compared in constant time.

A push can be repeated (retries, redelivery): deduplicate by the event's \`id\`. Answer any 2xx to count it delivered.`;

export const PUSH_WEBHOOKS: Record<string, OpenAPIV3_1.PathItemObject> = {
  event: {
    post: {
      operationId: 'receiveEvent',
      summary: 'An event pushed to your webhook endpoint',
      description: DESCRIPTION,
      tags: ['Webhook endpoints'],
      // Authenticated by its signature, not by an API key.
      security: [],
      parameters: [
        {
          name: spelled(SIGNATURE_HEADER),
          in: 'header',
          required: true,
          description:
            '`t=<unix seconds>,v1=<hex HMAC-SHA256>`. During a secret rotation one `v1` per live secret, newest first: accept the push when any of them verifies',
          schema: { type: 'string', pattern: '^t=\\d+(,v1=[0-9a-f]{64})+$' },
          example: 't=1795334400,v1=3f9c2a0d5b8e4f7a1c6d9e2b5a8f1c4d7e0a3b6c9f2e5d8a1b4c7f0e3d6a9b2c',
        },
        {
          name: spelled(EVENT_ID_HEADER),
          in: 'header',
          required: true,
          description: "The event's id, as in the body",
          schema: { type: 'string' },
        },
        {
          name: spelled(DELIVERY_ID_HEADER),
          in: 'header',
          required: true,
          description: "This delivery's id, as in the delivery log (GET /v1/events/{id}/deliveries)",
          schema: { type: 'string' },
        },
        {
          name: STANDARD_ID_HEADER,
          in: 'header',
          required: true,
          description: "Standard Webhooks: the event's id, the same on every retry and redelivery",
          schema: { type: 'string' },
        },
        {
          name: STANDARD_TIMESTAMP_HEADER,
          in: 'header',
          required: true,
          description: 'Standard Webhooks: unix seconds, the same as the t of X-Service-Signature',
          schema: { type: 'string', pattern: '^\\d+$' },
        },
        {
          name: STANDARD_SIGNATURE_HEADER,
          in: 'header',
          required: true,
          description:
            'Standard Webhooks: `v1,<base64 HMAC-SHA256>` over `<webhook-id>.<webhook-timestamp>.<raw body>`, keyed with the base64-decoded part of the secret after `whsec_` (for a secret issued as `whsec_` + base64url: its SHA-256), one per live secret separated by spaces. The `standardwebhooks` and `svix` packages verify it with the secret',
          schema: { type: 'string' },
        },
      ],
      requestBody: { required: true, content: { 'application/json': { schema: componentRef('Event') } } },
      responses: {
        '2XX': { description: 'Delivered; the body of the answer is ignored' },
        '410': {
          description: 'Gone: the service disables the endpoint and pushes nothing more to it until POST /v1/webhook-endpoints/{id}/enable',
        },
        default: { description: 'Any other answer, or none within the attempt timeout: the delivery is retried on the retry schedule' },
      },
    },
  },
};
