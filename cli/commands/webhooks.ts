/**
 * `vps webhooks create|list|get|update|test|rotate-secret|delete`: the endpoints events are pushed
 * to. `update` changes only the flags given, never the secret. `list` and `get` show each
 * endpoint's delivery queue as the console does (backlog, in flight, oldest and next due); its JSON
 * carries the whole `queue` object.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Command, Option } from 'commander';
import type { DeliveryJson, ListedWebhookEndpointJson } from '../../sdk/api-types';
import type { VpsClient } from '../../sdk/client';
import type { View } from '../output';
import { apiCommand, collect, onApi, wholeNumber } from './api-command';

/** How often `webhooks test` reads the delivery back: a receiver on the same network answers in ms. */
const TEST_POLL_MS = 250;

/** The delivery, read again until it is no longer pending or the deadline passes. */
async function followDelivery(client: VpsClient, delivery: DeliveryJson, waitMs: number): Promise<DeliveryJson> {
  const deadline = Date.now() + waitMs;
  let current = delivery;
  while (current.status === 'pending' && Date.now() < deadline) {
    await sleep(TEST_POLL_MS);
    const page = await client.events.deliveries({ params: { id: delivery.eventId } });
    current = page.items.find((d) => d.id === delivery.id) ?? current;
  }
  return current;
}

const ENDPOINT_VIEW: View<ListedWebhookEndpointJson> = [
  { header: 'id', value: (e) => e.id },
  { header: 'url', value: (e) => e.url, maxWidth: 50 },
  { header: 'event types', value: (e) => e.eventTypes.join(',') },
  { header: 'description', value: (e) => e.description, maxWidth: 30 },
  { header: 'created', value: (e) => e.createdAt },
  { header: 'disabled', value: (e) => e.disabledReason ?? e.disabledAt },
  { header: 'backlog', value: (e) => e.queue.backlog },
  { header: 'in flight', value: (e) => e.queue.inFlight },
  { header: 'oldest due', value: (e) => e.queue.oldestDueAt },
  { header: 'next due', value: (e) => e.queue.nextDueAt },
];

export function webhooksCommand(): Command {
  const create = apiCommand('create', 'add an endpoint; its signing secret is printed here, once')
    .requiredOption('--url <url>', 'public https URL that receives the pushes')
    .option('--event-type <pattern>', '"*", "vplat.*" or an exact type (repeatable; default "*")', collect)
    .option('--description <text>', 'a note on the endpoint (one line, at most 500 characters)');
  const list = apiCommand('list', 'your endpoints');
  const get = apiCommand('get', 'one endpoint, with its delivery queue').argument('<id>', 'the endpoint id');
  const update = apiCommand('update', "change an endpoint's URL, event types, description or state; the secret stays")
    .argument('<id>', 'the endpoint id')
    .option('--url <url>', 'a new public https URL, checked as at creation')
    .option('--event-type <pattern>', 'the new patterns, replacing the old ones (repeatable)', collect)
    .option('--description <text>', 'a new note ("" clears it)')
    .addOption(new Option('--enable', 'let a disabled endpoint receive pushes again').conflicts('disable'))
    .addOption(new Option('--disable', 'stop pushes to the endpoint; its pending deliveries are cancelled'));
  const del = apiCommand('delete', 'remove an endpoint').argument('<id>', 'the endpoint id');
  const test = apiCommand('test', 'push a service.endpoint.test event to this endpoint only, and print its delivery')
    .argument('<id>', 'the endpoint id')
    .option('--wait <seconds>', 'follow the delivery until it ends, at most this long (0: print it as started)', wholeNumber, 10);
  const rotate = apiCommand(
    'rotate-secret',
    'issue a new signing secret, printed here once; the old one keeps signing for the grace period',
  )
    .argument('<id>', 'the endpoint id')
    .option(
      '--old-secret-expires-in <seconds>',
      'how long the old secret keeps signing, at most the grace period (0: at once, for a secret that leaked)',
      wholeNumber,
    );
  return new Command('webhooks')
    .description('webhook endpoints')
    .addCommand(
      onApi(create, async ({ client, out }) => {
        const { url, eventType, description } = create.opts<{ url: string; eventType?: string[]; description?: string }>();
        out.print(await client.webhooks.create({ body: { url, eventTypes: eventType ?? ['*'], description } }));
      }),
    )
    .addCommand(onApi(list, async ({ client, out }) => out.print(await client.webhooks.list(), ENDPOINT_VIEW)))
    .addCommand(
      onApi(get, async ({ client, out }) => out.print(await client.webhooks.get({ params: { id: get.args[0]! } }), ENDPOINT_VIEW)),
    )
    .addCommand(
      onApi(update, async ({ client, out }) => {
        const o = update.opts<{ url?: string; eventType?: string[]; description?: string; enable?: boolean; disable?: boolean }>();
        // No flag at all sends {}, which changes nothing and prints the endpoint as it is.
        const body = {
          url: o.url,
          eventTypes: o.eventType,
          description: o.description,
          enabled: o.enable ? true : o.disable ? false : undefined,
        };
        out.print(await client.webhooks.update({ params: { id: update.args[0]! }, body }), ENDPOINT_VIEW);
      }),
    )
    .addCommand(
      onApi(test, async ({ client, out }) => {
        const { wait } = test.opts<{ wait: number }>();
        const { delivery } = await client.webhooks.test({ params: { id: test.args[0]! } });
        // A delivery still pending here is retrying (or not yet tried): the delivery log shows the rest.
        out.print(await followDelivery(client, delivery, wait * 1000));
      }),
    )
    .addCommand(
      onApi(rotate, async ({ client, out }) => {
        const { oldSecretExpiresIn } = rotate.opts<{ oldSecretExpiresIn?: number }>();
        const body = oldSecretExpiresIn === undefined ? {} : { oldSecretExpiresInSeconds: oldSecretExpiresIn };
        out.print(await client.webhooks.rotateSecret({ params: { id: rotate.args[0]! }, body }));
      }),
    )
    .addCommand(onApi(del, async ({ client, out }) => out.print(await client.webhooks.delete({ params: { id: del.args[0]! } }))));
}
