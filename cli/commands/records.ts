/** `vps records`: the publish records, a read-only snapshot (`vps status` refreshes one). */
import type { Command } from 'commander';
import type { PublishRecordJson } from '../../sdk/api-types';
import type { View } from '../output';
import { apiCommand, onApi, queryOf, withPaging } from './api-command';

const RECORD_VIEW: View<PublishRecordJson> = [
  { header: 'id', value: (r) => r.id },
  { header: 'status', value: (r) => r.status },
  { header: 'track', value: (r) => r.track },
  { header: 'kind', value: (r) => r.kind },
  { header: 'channel', value: (r) => r.channel },
  { header: 'draft', value: (r) => r.draft },
  { header: 'share id', value: (r) => r.shareId },
  { header: 'post id', value: (r) => r.postId },
  { header: 'created', value: (r) => r.createdAt },
];

export function recordsCommand(): Command {
  const cmd = withPaging(apiCommand('records', 'publish records, newest first (a snapshot: vps status refreshes one)'))
    .option('--status <status>', 'only records in this status')
    .option('--seat-id <id>', "only this seat's records")
    .option('--file-id <id>', 'only shop publishes of this fileId');
  return onApi(cmd, async ({ client, out }) => out.print(await client.publish.records({ query: queryOf(cmd) }), RECORD_VIEW));
}
