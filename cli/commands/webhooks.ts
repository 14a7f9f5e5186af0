/** `vps webhooks create|list|delete`: the endpoints events are pushed to. */
import { Command } from 'commander';
import type { WebhookEndpointJson } from '../../gateway/schemas/webhook-endpoints';
import type { View } from '../output';
import { apiCommand, collect, onApi } from './api-command';

const ENDPOINT_VIEW: View<WebhookEndpointJson> = [
  { header: 'id', value: (e) => e.id },
  { header: 'url', value: (e) => e.url, maxWidth: 50 },
  { header: 'event types', value: (e) => e.eventTypes.join(',') },
  { header: 'created', value: (e) => e.createdAt },
  { header: 'disabled', value: (e) => e.disabledReason ?? e.disabledAt },
];

export function webhooksCommand(): Command {
  const create = apiCommand('create', 'add an endpoint; its signing secret is printed here, once')
    .requiredOption('--url <url>', 'public https URL that receives the pushes')
    .option('--event-type <pattern>', '"*", "vplat.*" or an exact type (repeatable; default "*")', collect);
  const list = apiCommand('list', 'your endpoints');
  const del = apiCommand('delete', 'remove an endpoint').argument('<id>', 'the endpoint id');
  return new Command('webhooks')
    .description('webhook endpoints')
    .addCommand(
      onApi(create, async ({ client, out }) => {
        const { url, eventType } = create.opts<{ url: string; eventType?: string[] }>();
        out.print(await client.webhooks.create({ body: { url, eventTypes: eventType ?? ['*'] } }));
      }),
    )
    .addCommand(onApi(list, async ({ client, out }) => out.print(await client.webhooks.list(), ENDPOINT_VIEW)))
    .addCommand(onApi(del, async ({ client, out }) => out.print(await client.webhooks.delete({ params: { id: del.args[0]! } }))));
}
