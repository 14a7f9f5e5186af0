/** `vps seats`: the caller's seats and the accounts bound to them. */
import type { Command } from 'commander';
import type { SeatJson } from '../../sdk/api-types';
import type { View } from '../output';
import { apiCommand, onApi } from './api-command';

const SEAT_VIEW: View<SeatJson> = [
  { header: 'id', value: (s) => s.id },
  { header: 'name', value: (s) => s.name },
  { header: 'track', value: (s) => s.track },
  { header: 'account', value: (s) => s.capabilityAccountId },
  { header: 'username', value: (s) => s.accountUsername },
  { header: 'authorization', value: (s) => s.authorizationStatus },
];

export function seatsCommand(): Command {
  const cmd = apiCommand('seats', 'your seats with their bound accounts (businessId or creatorUserOpenId)');
  return onApi(cmd, async ({ client, out }) => out.print(await client.seats.list(), SEAT_VIEW));
}
