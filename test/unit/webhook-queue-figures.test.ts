/**
 * An endpoint's delivery queue figures on their way out: the database row and the measured figures
 * to the protobuf message (core), and that message to the JSON of GET /v1/webhook-endpoints
 * (gateway), which the console and `vps webhooks list` read.
 */
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { toWebhookEndpoint } from '../../core/mappers/accounts';
import type { QueueFiguresRow } from '../../core/db/repositories/delivery-queue';
import type { WebhookEndpointRow } from '../../core/db/repositories/webhook-endpoints';
import { listedWebhookEndpointJson, webhookEndpointJson } from '../../gateway/presenters/accounts';
import { ListedWebhookEndpointJson } from '../../gateway/schemas/webhook-endpoints';

const row: WebhookEndpointRow = {
  id: 'wh_1',
  customerId: 'cus_1',
  url: 'https://example.com/hooks',
  eventTypes: ['*'],
  description: null,
  signingKey: 'k',
  standardKey: null,
  createdAt: new Date('2026-11-20T08:00:00.000Z'),
  deletedAt: null,
  disabledAt: null,
  disabledReason: null,
  previousSigningKey: null,
  previousStandardKey: null,
  previousKeyExpiresAt: null,
  failingSince: null,
};

/** The response schema as a validator, as strict about formats as the OpenAPI document reads. */
const ajv = new Ajv();
addFormats(ajv);
const matchesSchema = ajv.compile(ListedWebhookEndpointJson);

const figures = (f: Partial<QueueFiguresRow>): QueueFiguresRow => ({
  endpointId: row.id,
  backlog: 0,
  due: 0,
  inFlight: 0,
  oldestDueAt: null,
  nextDueAt: null,
  ...f,
});

describe('webhook endpoint queue figures', () => {
  it('lists an endpoint with its backlog, what is due and in flight, and the oldest and next due times', () => {
    const json = listedWebhookEndpointJson(
      toWebhookEndpoint(
        row,
        figures({
          backlog: 5,
          due: 2,
          inFlight: 3,
          oldestDueAt: new Date('2026-11-22T08:00:00.000Z'),
          nextDueAt: new Date('2026-11-22T08:00:00.000Z'),
        }),
      ),
    );
    expect(json.queue).toEqual({
      backlog: 5,
      due: 2,
      inFlight: 3,
      oldestDueAt: '2026-11-22T08:00:00.000Z',
      nextDueAt: '2026-11-22T08:00:00.000Z',
    });
    expect(matchesSchema(json)).toBe(true);
  });

  it('shows absent times as null: retries waiting on their schedule have a next due time and no oldest due one', () => {
    const waiting = listedWebhookEndpointJson(
      toWebhookEndpoint(row, figures({ backlog: 1, nextDueAt: new Date('2026-11-22T08:01:00.000Z') })),
    );
    expect(waiting.queue).toEqual({ backlog: 1, due: 0, inFlight: 0, oldestDueAt: null, nextDueAt: '2026-11-22T08:01:00.000Z' });
    const empty = listedWebhookEndpointJson(toWebhookEndpoint(row, figures({})));
    expect(empty.queue).toEqual({ backlog: 0, due: 0, inFlight: 0, oldestDueAt: null, nextDueAt: null });
    expect(matchesSchema(empty)).toBe(true);
  });

  it('leaves the queue out of an endpoint returned without figures (create, rotate, enable)', () => {
    const message = toWebhookEndpoint(row);
    expect(message.queue).toBeUndefined();
    expect(webhookEndpointJson(message)).not.toHaveProperty('queue');
  });
});
