import { WebhookEndpointService } from '../../../gen/vps/webhook/v1/webhook_pb';
import { webhookEndpointJson } from '../../presenters';
import { listOf, okEnvelope } from '../../schemas/common';
import {
  CreatedWebhookEndpointJson,
  CreateWebhookEndpointBody,
  EndpointIdParams,
  WebhookEndpointJson,
} from '../../schemas/webhook-endpoints';
import { defineRoute } from '../../rpc-route';
import { Type } from '@sinclair/typebox';

export const webhookEndpointRoutes = [
  defineRoute({
    method: 'POST',
    url: '/webhook-endpoints',
    summary: 'Register a webhook endpoint; the secret is returned once',
    rpc: WebhookEndpointService.method.createEndpoint,
    schema: { body: CreateWebhookEndpointBody, response: { 200: okEnvelope(CreatedWebhookEndpointJson) } },
    toRequest: (req) => {
      const body = req.body as CreateWebhookEndpointBody;
      return { url: body.url, eventTypes: body.eventTypes };
    },
    toData: (res) => ({ ...webhookEndpointJson(res.endpoint!), secret: res.secret }),
  }),
  defineRoute({
    method: 'GET',
    url: '/webhook-endpoints',
    summary: 'List webhook endpoints',
    rpc: WebhookEndpointService.method.listEndpoints,
    schema: { response: { 200: okEnvelope(listOf(WebhookEndpointJson)) } },
    toRequest: () => ({}),
    toData: (res) => ({ items: res.endpoints.map(webhookEndpointJson) }),
  }),
  defineRoute({
    method: 'DELETE',
    url: '/webhook-endpoints/:id',
    summary: 'Delete a webhook endpoint',
    rpc: WebhookEndpointService.method.deleteEndpoint,
    schema: { params: EndpointIdParams, response: { 200: okEnvelope(Type.Object({ id: Type.String(), deleted: Type.Literal(true) })) } },
    toRequest: (req) => ({ id: (req.params as { id: string }).id }),
    toData: (res) => ({ id: res.id, deleted: true as const }),
  }),
];
