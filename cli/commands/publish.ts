/**
 * `vps publish video|photo|shop`: the common body fields as flags named after the field
 * (--disable-comment sets disableComment), any other field with `--field key=value`, and `--wait`
 * to follow the publish with `vps status`'s polling. Video posts go to the v1.3 route unless
 * `--via legacy` picks the deprecated POST /v1/publish/vplat, as the spec asks of the client.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import type { VpsClient } from '../../sdk/client';
import { PRIVACY_LEVELS, type PrivacyLevel } from '../../core/upstream/vplat/publishing';
import { UsageError } from '../usage-error';
import { apiCommand, collect, onApi, wholeNumber } from './api-command';
import { follow, pollSettings, statusCheck, withPolling, type Observed } from './status';

type Flags = Record<string, unknown>;

interface PublishAnswer extends Observed {
  id: string;
  seatId: string;
  /** The service's handle, which the track's status query takes from the answer on. */
  handle: string;
  track: 'video' | 'shop';
}

const CHANNELS = ['v1.3', 'legacy'] as const;

/** `key=value`; the value is read as JSON when it is JSON (true, 42, ["a"]), else as text. */
function field(value: string, previous: Flags = {}): Flags {
  const match = /^([A-Za-z][A-Za-z0-9]*)=(.*)$/s.exec(value);
  if (!match) throw new InvalidArgumentError('expected key=value, e.g. musicSoundVolume=40');
  let parsed: unknown;
  try {
    parsed = JSON.parse(match[2]!);
  } catch {
    parsed = match[2]; // not JSON: the text as typed
  }
  return { ...previous, [match[1]!]: parsed };
}

const flag = (flags: string, description: string) => new Option(flags, description);
const intFlag = (flags: string, description: string) => new Option(flags, description).argParser(wholeNumber);

/** Body fields both post kinds of the video track take, each flag named after its field. */
const postFields = () => [
  flag('--caption <text>', 'caption: at most 2200 UTF-16 code units and 30 mentions'),
  flag('--is-brand-organic', 'brand organic content (the service sends false when absent)'),
  flag('--is-branded-content', 'branded content; takes priority over --is-brand-organic'),
  flag('--disable-comment', 'turn comments off'),
  flag('--draft', "send to the account's inbox as a draft: ends in publish_draft_inbox"),
  flag('--music-sound-id <id>', 'commercial music id'),
  flag('--location-id <id>', 'location tag id'),
];

/**
 * The account flag, the command's required flags, its optional body-field flags, --field, --wait
 * and the polling flags; returns the command and how to read the optional fields from its flags
 * (the required ones are read by name, so the type checker sees them).
 */
function postCommand(name: string, description: string, flags: { account: string; required?: Option[]; body: Option[] }) {
  const cmd = apiCommand(name, description).requiredOption('--account <account>', flags.account);
  for (const o of [...(flags.required ?? []).map((r) => r.makeOptionMandatory()), ...flags.body]) cmd.addOption(o);
  withPolling(
    cmd
      .option(
        '--field <key=value>',
        'any other body field (repeatable); a value that parses as JSON is sent as JSON, e.g. musicSoundVolume=40; a typed flag wins over it',
        field,
      )
      .option('--wait', 'follow the publish until a terminal status, as vps status does'),
  );
  const names = flags.body.map((o) => o.attributeName());
  // A typed flag wins over the same field given with --field.
  const body = (parsed: Flags): Flags => ({
    ...(parsed.field as Flags | undefined),
    ...Object.fromEntries(names.filter((n) => parsed[n] !== undefined).map((n) => [n, parsed[n]])),
  });
  return { cmd, body };
}

/**
 * Publishes, then prints the answer, or follows it with the service's handle, which the status
 * query takes at once whether or not the platform has given its id yet.
 */
function publishAction(cmd: Command, publish: (client: VpsClient, flags: Flags) => Promise<PublishAnswer>): Command {
  return onApi(cmd, async (ctx) => {
    const flags = cmd.opts<Flags & { interval: number; attempts: number }>();
    const answer = await publish(ctx.client, flags);
    if (flags.wait !== true) return ctx.out.print(answer);
    await follow(ctx, followRecord(ctx.client, answer), pollSettings(flags, ctx), answer);
  });
}

function followRecord(client: VpsClient, answer: PublishAnswer): () => Promise<Observed> {
  return statusCheck(client, { handle: answer.handle, shop: answer.track === 'shop' });
}

function videoCommand(): Command {
  const { cmd, body } = postCommand('video', 'publish a video post (the v1.3 route; --via legacy for the deprecated one)', {
    account: 'the bound account: businessId or username',
    body: [
      flag('--video-id <id>', 'a video library record id (vps videos upload); or --video-url'),
      flag('--video-url <url>', 'a public URL of the video; or --video-id'),
      ...postFields(),
      flag('--disable-duet', 'turn duets off'),
      flag('--disable-stitch', 'turn stitches off'),
      intFlag('--thumbnail-offset <ms>', 'cover frame, in milliseconds'),
      flag('--is-ai-generated', 'AI-generated content label'),
    ],
  });
  cmd.addOption(
    new Option('--via <channel>', 'the route: v1.3, or legacy for the deprecated POST /v1/publish/vplat').choices(CHANNELS).default('v1.3'),
  );
  return publishAction(cmd, (client, flags) => {
    const fields = body(flags);
    if ((fields.videoId === undefined) === (fields.videoUrl === undefined)) throw new UsageError('pass one of --video-id or --video-url');
    const account = flags.account as string;
    return flags.via === 'legacy'
      ? client.publish.videoLegacy({ body: { ...fields, accountId: account } })
      : client.publish.video({ body: { ...fields, account } });
  });
}

function photoCommand(): Command {
  const { cmd, body } = postCommand('photo', 'publish a photo post (1 to 35 images)', {
    account: 'the bound account: businessId or username',
    required: [
      new Option('--photo-url <url>', 'a public image URL (repeat for each photo, in order)').argParser(collect),
      new Option('--privacy-level <level>', 'who sees the post').choices(PRIVACY_LEVELS),
    ],
    body: [
      flag('--title <text>', 'title'),
      intFlag('--photo-cover-index <n>', 'which photo is the cover, from 0'),
      flag('--auto-add-music', 'let the platform add music'),
      ...postFields(),
    ],
  });
  return publishAction(cmd, (client, flags) =>
    client.publish.photo({
      body: {
        ...body(flags),
        account: flags.account as string,
        photoUrls: flags.photoUrl as string[],
        privacyLevel: flags.privacyLevel as PrivacyLevel,
      },
    }),
  );
}

function shopCommand(): Command {
  const { cmd, body } = postCommand('shop', 'publish a shop video linked to a product (--wait polls /v1/publish/tts/status)', {
    account: 'the bound shop account (creatorUserOpenId)',
    required: [
      new Option('--file-id <id>', 'the fileId of a shop track upload (consumed by one post)'),
      new Option('--product-id <id>', 'from POST /v1/products/query'),
      new Option('--title <text>', "the video's text"),
    ],
    body: [
      flag('--product-title <text>', 'anchor text: at most 30 characters, no punctuation or emoji'),
      flag('--cover-uri <uri>', 'a cover from POST /v1/photos'),
      intFlag('--cover-timestamp-ms <ms>', 'a cover frame, in milliseconds'),
      flag('--music-id <id>', 'from POST /v1/music/search'),
      flag('--is-ai-generated', 'AI-generated content label'),
    ],
  });
  return publishAction(cmd, (client, flags) => {
    const { account, fileId, productId, title } = flags as Record<'account' | 'fileId' | 'productId' | 'title', string>;
    return client.publish.shop({ body: { ...body(flags), accountId: account, fileId, productId, title } });
  });
}

export function publishCommand(): Command {
  return new Command('publish')
    .description('publish video, photo and shop posts')
    .addCommand(videoCommand())
    .addCommand(photoCommand())
    .addCommand(shopCommand());
}
