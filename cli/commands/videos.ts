/**
 * `vps videos upload|list|get|delete`: the video library. A direct upload streams the file from
 * disk with a progress bar; `--source-url` has the service fetch it instead.
 */
import { Command } from 'commander';
import type { VideoJson } from '../../sdk/api-types';
import { uploadProgressText, type View } from '../output';
import { UsageError } from '../usage-error';
import { apiCommand, onApi, queryOf, withPaging } from './api-command';

const VIDEO_VIEW: View<VideoJson> = [
  { header: 'id', value: (v) => v.id },
  { header: 'status', value: (v) => v.status },
  { header: 'track', value: (v) => v.track },
  { header: 'file', value: (v) => v.fileName ?? v.sourceUrl, maxWidth: 30 },
  { header: 'size', value: (v) => v.sizeBytes },
  { header: 'created', value: (v) => v.createdAt },
  { header: 'url or file id', value: (v) => v.videoUrl ?? v.fileId, maxWidth: 50 },
];

function uploadCommand(): Command {
  const cmd = apiCommand('upload', 'add a video to the library: a file, or --source-url for the service to fetch')
    .argument('[file]', 'the video file to send')
    .option('--source-url <url>', 'a public https URL the service fetches instead of a file')
    .option('--account <account>', 'a bound account the video is for: businessId, username or creatorUserOpenId; or --seat-id')
    .option('--seat-id <id>', 'the seat the video is for; or --account');
  return onApi(cmd, async ({ client, out }) => {
    const file = cmd.args[0];
    const { sourceUrl, account, seatId } = cmd.opts<{ sourceUrl?: string; account?: string; seatId?: string }>();
    if ((file === undefined) === (sourceUrl === undefined)) throw new UsageError('pass a file or --source-url, one of them');
    const target = { account, seatId };
    const video = file
      ? await client.videos.upload(
          { fields: target, file: { path: file } },
          { onProgress: (sent, total) => out.progress.update(uploadProgressText(sent, total)) },
        )
      : await client.videos.uploadFromUrl({ body: { sourceUrl: sourceUrl!, ...target } });
    out.print(video);
  });
}

export function videosCommand(): Command {
  const list = withPaging(apiCommand('list', 'library records, newest first; deleted ones too, with status expired'))
    .option('--status <status>', 'only records in this status')
    .option('--seat-id <id>', "only this seat's records");
  const get = apiCommand('get', 'one library record').argument('<id>', 'the video library record id');
  const del = apiCommand('delete', 'soft-delete a record: publishing it then fails with 2005').argument(
    '<id>',
    'the video library record id',
  );
  return new Command('videos')
    .description('the video library')
    .addCommand(uploadCommand())
    .addCommand(onApi(list, async ({ client, out }) => out.print(await client.videos.list({ query: queryOf(list) }), VIDEO_VIEW)))
    .addCommand(onApi(get, async ({ client, out }) => out.print(await client.videos.get({ params: { id: get.args[0]! } }))))
    .addCommand(onApi(del, async ({ client, out }) => out.print(await client.videos.delete({ params: { id: del.args[0]! } }))));
}
