import { WebhookEndpointService } from '../../../gen/vps/webhook/v1/webhook_pb';
import { listedWebhookEndpointJson, webhookEndpointJson } from '../../presenters/accounts';
import { listOf, okEnvelope } from '../../schemas/common';
import {
  CreatedWebhookEndpointJson,
  CreateWebhookEndpointBody,
  DeletedEndpointJson,
  EmptyActionBody,
  EndpointIdParams,
  ListedWebhookEndpointJson,
  RecoverEndpointBody,
  RecoveredJson,
  RotateSecretBody,
  TestEventJson,
  UpdateWebhookEndpointBody,
  WebhookEndpointJson,
} from '../../schemas/webhook-endpoints';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { defineRoute } from '../../rpc-route';
import { bodyFromMessage } from '../../../core/events/present';
import { deliveryJson } from './events';

export const webhookEndpointRoutes = [
  defineRoute({
    method: 'POST',
    url: '/webhook-endpoints',
    summary: 'Register a webhook endpoint; the secret is returned once',
    rpc: WebhookEndpointService.method.createEndpoint,
    carriesSecret: true,
    schema: { body: CreateWebhookEndpointBody, response: { 200: okEnvelope(CreatedWebhookEndpointJson) } },
    toRequest: (req) => {
      const body = req.body;
      return { url: body.url, eventTypes: body.eventTypes, description: body.description ?? '' };
    },
    toData: (res) => ({ ...webhookEndpointJson(res.endpoint!), secret: res.secret }),
  }),
  defineRoute({
    method: 'GET',
    url: '/webhook-endpoints',
    summary: 'List webhook endpoints, each with its delivery queue: backlog, due, in flight, oldest and next due times',
    rpc: WebhookEndpointService.method.listEndpoints,
    schema: { response: { 200: okEnvelope(listOf(ListedWebhookEndpointJson)) } },
    toRequest: () => ({}),
    toData: (res) => ({ items: res.endpoints.map(listedWebhookEndpointJson) }),
  }),
  defineRoute({
    method: 'GET',
    url: '/webhook-endpoints/:id',
    summary: 'One webhook endpoint, with its delivery queue',
    rpc: WebhookEndpointService.method.getEndpoint,
    schema: { params: EndpointIdParams, response: { 200: okEnvelope(ListedWebhookEndpointJson) } },
    toRequest: (req) => ({ id: req.params.id }),
    toData: (res) => listedWebhookEndpointJson(res.endpoint!),
  }),
  defineRoute({
    method: 'PATCH',
    url: '/webhook-endpoints/:id',
    summary:
      'Change url (checked as at creation), eventTypes, description or enabled; fields left out stay as they are, and the secret never changes',
    rpc: WebhookEndpointService.method.updateEndpoint,
    schema: { params: EndpointIdParams, body: UpdateWebhookEndpointBody, response: { 200: okEnvelope(ListedWebhookEndpointJson) } },
    toRequest: (req) => {
      const body = req.body;
      return {
        id: req.params.id,
        url: body.url,
        eventTypes: body.eventTypes ? { patterns: body.eventTypes } : undefined,
        // null and "" both clear it; core stores either as none.
        description: body.description === null ? '' : body.description,
        enabled: body.enabled,
      };
    },
    toData: (res) => listedWebhookEndpointJson(res.endpoint!),
  }),
  defineRoute({
    method: 'POST',
    url: '/webhook-endpoints/:id/rotate-secret',
    summary:
      'Issue a new secret, returned once; pushes carry both signatures during the grace period, or the new one only with oldSecretExpiresInSeconds 0',
    rpc: WebhookEndpointService.method.rotateSecret,
    carriesSecret: true,
    optionalBody: true,
    schema: { params: EndpointIdParams, body: RotateSecretBody, response: { 200: okEnvelope(CreatedWebhookEndpointJson) } },
    toRequest: (req) => ({ id: req.params.id, oldSecretExpiresInSeconds: req.body.oldSecretExpiresInSeconds }),
    toData: (res) => ({ ...webhookEndpointJson(res.endpoint!), secret: res.secret }),
  }),
  defineRoute({
    method: 'POST',
    url: '/webhook-endpoints/:id/enable',
    summary: 'Let a disabled endpoint receive pushes again',
    rpc: WebhookEndpointService.method.enableEndpoint,
    optionalBody: true,
    schema: { params: EndpointIdParams, body: EmptyActionBody, response: { 200: okEnvelope(WebhookEndpointJson) } },
    toRequest: (req) => ({ id: req.params.id }),
    toData: (res) => webhookEndpointJson(res.endpoint!),
  }),
  defineRoute({
    method: 'POST',
    url: '/webhook-endpoints/:id/recover',
    summary: 'Redeliver every event since a time that never reached the endpoint (at most 1000 per call)',
    rpc: WebhookEndpointService.method.recoverEndpoint,
    schema: { params: EndpointIdParams, body: RecoverEndpointBody, response: { 200: okEnvelope(RecoveredJson) } },
    toRequest: (req) => ({ id: req.params.id, since: timestampFromDate(new Date(req.body.since)) }),
    toData: (res) => ({ redelivered: res.redelivered, truncated: res.truncated }),
  }),
  defineRoute({
    method: 'POST',
    url: '/webhook-endpoints/:id/test',
    summary: 'Log a service.endpoint.test event and push it, signed, to this endpoint only; returns the event and its delivery',
    rpc: WebhookEndpointService.method.testEndpoint,
    optionalBody: true,
    schema: { params: EndpointIdParams, body: EmptyActionBody, response: { 200: okEnvelope(TestEventJson) } },
    toRequest: (req) => ({ id: req.params.id }),
    toData: (res) => ({ event: bodyFromMessage(res.event!), delivery: deliveryJson(res.delivery!) }),
  }),
  defineRoute({
    method: 'DELETE',
    url: '/webhook-endpoints/:id',
    summary: 'Delete a webhook endpoint',
    rpc: WebhookEndpointService.method.deleteEndpoint,
    schema: { params: EndpointIdParams, response: { 200: okEnvelope(DeletedEndpointJson) } },
    toRequest: (req) => ({ id: req.params.id }),
    toData: (res) => ({ id: res.id, deleted: true as const }),
  }),
];
