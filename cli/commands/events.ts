/** `vps events list|redeliver`: pulled events (the reconciliation fallback) and redelivery. */
import { Command } from 'commander';
import type { DeliveryJson, EventJson } from '../../sdk/api-types';
import type { View } from '../output';
import { apiCommand, onApi, queryOf, withPaging } from './api-command';

const EVENT_VIEW: View<EventJson> = [
  { header: 'id', value: (e) => e.id },
  { header: 'type', value: (e) => e.type },
  { header: 'seat', value: (e) => e.seat_id },
  { header: 'occurred', value: (e) => e.occurred_at },
  { header: 'data', value: (e) => e.data, maxWidth: 60 },
];

const DELIVERY_VIEW: View<DeliveryJson> = [
  { header: 'id', value: (d) => d.id },
  { header: 'endpoint', value: (d) => d.endpointId },
  { header: 'status', value: (d) => d.status },
  { header: 'reason', value: (d) => d.reason },
];

export function eventsCommand(): Command {
  const list = withPaging(apiCommand('list', 'events, oldest first from the cursor'))
    .option('--types <patterns>', 'comma-separated patterns: "*", "vplat.*" or exact types')
    .option('--seat-id <id>', "only this seat's events")
    .option('--since <iso>', 'occurred at or after this time')
    .option('--until <iso>', 'occurred before this time')
    .option('--include-test', 'also the test events (service.endpoint.test), left out otherwise');
  const redeliver = apiCommand('redeliver', 'push an event again')
    .argument('<id>', 'the event id')
    .option('--endpoint-id <id>', 'only to this endpoint (default: every endpoint the event matches)');
  return new Command('events')
    .description('events: pull and redeliver')
    .addCommand(onApi(list, async ({ client, out }) => out.print(await client.events.list({ query: queryOf(list) }), EVENT_VIEW)))
    .addCommand(
      onApi(redeliver, async ({ client, out }) =>
        out.print(await client.events.redeliver({ params: { id: redeliver.args[0]! }, body: queryOf(redeliver) }), DELIVERY_VIEW),
      ),
    );
}
