/**
 * `vps trigger <event>`: a real platform event for a seat, made the way the platform would make it,
 * so a handler can be tested end to end without the platform. The sandbox emulator the service
 * points at makes the change (a viewer's comment or reply, a user's direct message) and pushes the
 * official webhook to the service, which records the event; a publish outcome is a real publish
 * through the service whose outcome the emulator was told first. Every channel then sees the event:
 * endpoints, GET /v1/events, the stream, `vps listen`. The command itself watches the stream,
 * opened before the change, and prints the event once the service has recorded it.
 *
 * Only a service backed by the emulator can be triggered: against production (no emulator) or an
 * emulator that does not hold the seat's account, it says so and exits 5 without changing anything.
 */
import { Command, InvalidArgumentError } from 'commander';
import type { SeatJson } from '../../sdk/api-types';
import type { VpsClient } from '../../sdk/client';
import { streamEvents, type StreamedEvent } from '../../sdk/event-stream';
import { SAMPLE_VIDEO_PATH } from '../../sandbox/sample-video';
import { EXIT } from '../exit-codes';
import type { Output } from '../output';
import { control, emulatorAccount, NoEmulatorError, SandboxRefusal, sandboxTarget, type SandboxTarget } from '../sandbox-client';
import { UsageError } from '../usage-error';
import { apiCommand, onApi, positiveInt } from './api-command';

type Seat = SeatJson;

interface TriggerFlags {
  seat?: string;
  text?: string;
  videoId?: string;
  parentCommentId?: string;
  reason?: string;
  sandboxUrl?: string;
  wait: number;
}

/** Where the change was pushed by the emulator: null when nothing subscribed to its webhooks. */
type WebhookPush = { id: string; callbackUrl: string } | null;

/** What one trigger did, and how to know its event on the stream. */
interface Made {
  note: string;
  matches: (event: StreamedEvent) => boolean;
  /** The emulator's push of the official webhook; absent for publishes, which the service polls. */
  push?: WebhookPush;
}

interface TriggerContext {
  client: VpsClient;
  sandbox: SandboxTarget;
  seat: Seat;
  accountId: string;
  flags: TriggerFlags;
}

const idOf = (value: unknown) => (typeof value === 'number' || typeof value === 'string' ? String(value) : undefined);

/** A viewer's comment, or a reply under a comment; `comment.update` with action insert. */
async function comment(ctx: TriggerContext, reply: boolean): Promise<Made> {
  const { flags } = ctx;
  const made = await control<{ commentId: string; videoId: string; parentCommentId?: string; username: string; webhookPush: WebhookPush }>(
    ctx.sandbox,
    'POST',
    `/_sandbox/accounts/${encodeURIComponent(ctx.accountId)}/comments`,
    {
      text: flags.text ?? (reply ? 'A reply made by vps trigger' : 'A comment made by vps trigger'),
      ...(flags.videoId !== undefined ? { videoId: flags.videoId } : {}),
      ...(reply ? (flags.parentCommentId !== undefined ? { parentCommentId: flags.parentCommentId } : { reply: true }) : {}),
    },
  );
  const what = made.parentCommentId ? `reply ${made.commentId} to comment ${made.parentCommentId}` : `comment ${made.commentId}`;
  return {
    note: `${what} by ${made.username} on post ${made.videoId}`,
    matches: (e) => e.type === 'vplat.comment.created' && idOf(e.data.comment_id) === made.commentId,
    push: made.webhookPush,
  };
}

/** A user writes to the account; `im_receive_msg`. */
async function message(ctx: TriggerContext): Promise<Made> {
  const made = await control<{ conversationId: string; messageId: string; webhookPush: WebhookPush }>(
    ctx.sandbox,
    'POST',
    `/_sandbox/accounts/${encodeURIComponent(ctx.accountId)}/messages`,
    { text: ctx.flags.text ?? 'A direct message made by vps trigger' },
  );
  return {
    note: `message ${made.messageId} in conversation ${made.conversationId}`,
    matches: (e) => e.type === 'vplat.message.received' && e.data.message_id === made.messageId,
    push: made.webhookPush,
  };
}

/**
 * A publish through the service, of a clip the emulator serves, after telling the emulator how the
 * account's next publish ends. The event is the record's status change to that end, logged by the
 * service's publish workflow as it follows the publish.
 */
async function publish(ctx: TriggerContext, outcome: 'complete' | 'failed'): Promise<Made> {
  const reason = ctx.flags.reason ?? 'internal';
  const nextPublish = `/_sandbox/accounts/${encodeURIComponent(ctx.accountId)}/next-publish`;
  await control(ctx.sandbox, 'POST', nextPublish, { outcome, ...(outcome === 'failed' ? { reason } : {}) });
  let record;
  try {
    record = await ctx.client.publish.video({
      body: { account: ctx.accountId, videoUrl: `${ctx.sandbox.url}${SAMPLE_VIDEO_PATH}`, caption: `vps trigger publish-${outcome}` },
    });
  } catch (err) {
    // Refused by the service (a plan that expired, the rate limit): the outcome must not wait for
    // the account's next publish, which would be someone else's.
    await control(ctx.sandbox, 'DELETE', nextPublish).catch(() => undefined);
    throw err;
  }
  const status = outcome === 'complete' ? 'publish_complete' : 'publish_failed';
  return {
    note: `publish record ${record.id} (share id ${record.shareId ?? 'not yet known'}), to end in ${status}${outcome === 'failed' ? ` (${reason})` : ''}`,
    matches: (e) => e.type === 'vplat.publish.status_changed' && e.data.record_id === record.id && e.data.status === status,
  };
}

/** The flags that shape one trigger's change; the others are refused with it rather than ignored. */
type ShapingFlag = 'text' | 'videoId' | 'parentCommentId' | 'reason';
const FLAG_NAMES: Record<ShapingFlag, string> = {
  text: '--text',
  videoId: '--video-id',
  parentCommentId: '--parent-comment-id',
  reason: '--reason',
};

interface Trigger {
  type: string;
  about: string;
  flags: readonly ShapingFlag[];
  make: (ctx: TriggerContext) => Promise<Made>;
}

/** The triggers: the event each makes and how. One table, read by the help and the action. */
const TRIGGERS = {
  comment: {
    type: 'vplat.comment.created',
    about: "a viewer comments on the account's newest post",
    flags: ['text', 'videoId'],
    make: (c) => comment(c, false),
  },
  reply: {
    type: 'vplat.comment.created',
    about: "a viewer replies to the post's newest comment",
    flags: ['text', 'videoId', 'parentCommentId'],
    make: (c) => comment(c, true),
  },
  message: { type: 'vplat.message.received', about: 'a user sends the account a direct message', flags: ['text'], make: message },
  'publish-complete': {
    type: 'vplat.publish.status_changed',
    about: 'a publish the platform completes',
    flags: [],
    make: (c) => publish(c, 'complete'),
  },
  'publish-failed': {
    type: 'vplat.publish.status_changed',
    about: 'a publish the platform fails',
    flags: ['reason'],
    make: (c) => publish(c, 'failed'),
  },
} satisfies Record<string, Trigger>;

type TriggerName = keyof typeof TRIGGERS;

function triggerName(value: string): TriggerName {
  if (!Object.hasOwn(TRIGGERS, value)) throw new InvalidArgumentError(`expected one of ${Object.keys(TRIGGERS).join(', ')}`);
  return value as TriggerName;
}

/** The seat asked for, or the first bound seat of the video track: every trigger is a Business API event. */
function pickSeat(seats: readonly Seat[], id: string | undefined): Seat & { capabilityAccountId: string } {
  const seat = id === undefined ? seats.find((s) => s.track === 'video' && s.capabilityAccountId) : seats.find((s) => s.id === id);
  if (!seat) {
    throw new UsageError(
      id === undefined
        ? 'no bound seat of the video track among your seats (vps seats): bind one first, or pass --seat'
        : `no seat ${id} among your seats (vps seats)`,
    );
  }
  if (seat.track !== 'video')
    throw new UsageError(`seat ${seat.id} is on the shop track: vps trigger makes video-track events (comments, messages, publishes)`);
  if (!seat.capabilityAccountId) throw new UsageError(`seat ${seat.id} is not bound to an account: bind it first`);
  return seat as Seat & { capabilityAccountId: string };
}

/**
 * The service's stream, connected before the change is made (it carries only what is recorded
 * after connection), collecting events until closed.
 */
class EventWatch {
  private readonly events: StreamedEvent[] = [];
  private failure: { error: unknown } | undefined;
  private wake: () => void = () => {};
  private readonly stopping = new AbortController();
  private readonly running: Promise<void>;
  private connected = false;

  constructor(client: VpsClient, types: string[]) {
    this.running = (async () => {
      try {
        const stream = streamEvents({
          baseUrl: client.config.baseUrl,
          apiKey: client.config.apiKey,
          types,
          signal: this.stopping.signal,
          userAgent: 'vps-cli',
          onState: (state) => {
            if (state.state !== 'connected') return;
            this.connected = true;
            this.wake();
          },
        });
        for await (const event of stream) {
          this.events.push(event);
          this.wake();
        }
      } catch (error) {
        this.failure = { error };
      }
      this.wake();
    })();
  }

  /** Resolves once the stream is connected, or with false when the deadline passed first. */
  ready(deadline: number): Promise<boolean> {
    return this.until(() => (this.connected ? true : undefined), deadline).then((v) => v ?? false);
  }

  /** The first event that matches, or undefined when the deadline passed first. */
  first(matches: (e: StreamedEvent) => boolean, deadline: number): Promise<StreamedEvent | undefined> {
    return this.until(() => this.events.find(matches), deadline);
  }

  async close(): Promise<void> {
    this.stopping.abort();
    await this.running;
  }

  private async until<T>(check: () => T | undefined, deadline: number): Promise<T | undefined> {
    for (;;) {
      const found = check();
      if (found !== undefined) return found;
      if (this.failure) throw this.failure.error;
      const left = deadline - Date.now();
      if (left <= 0) return undefined;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }
}

/** Why an event made in the emulator did not show up, from the emulator's own record of its push. */
async function pushReport(sandbox: SandboxTarget, push: WebhookPush | undefined): Promise<string> {
  if (push === undefined) return 'the publish workflow did not log that status in time: see vps records and vps status';
  if (push === null) {
    return (
      'the emulator has no webhook subscription for it, so nothing was pushed: the service subscribes at start-up when the emulator is its platform' +
      ' (npm start); an emulator started apart needs the service subscribed to it'
    );
  }
  const { pushes } = await control<{ pushes: Array<{ id: string; attempts: Array<{ status: number | null; error?: string }> }> }>(
    sandbox,
    'GET',
    '/_sandbox/webhooks/pushes',
  );
  const attempts = pushes.find((p) => p.id === push.id)?.attempts ?? [];
  const tried = attempts.map((a) => (a.status === null ? (a.error ?? 'no answer') : `HTTP ${a.status}`)).join(', ');
  return `the emulator pushed it to ${push.callbackUrl}${tried ? ` (attempts: ${tried})` : ' (not yet attempted)'}; is that this service's platform webhook?`;
}

async function trigger(name: TriggerName, flags: TriggerFlags, client: VpsClient, out: Output): Promise<void> {
  const spec: Trigger = TRIGGERS[name];
  const foreign = (Object.keys(FLAG_NAMES) as ShapingFlag[]).find((f) => flags[f] !== undefined && !spec.flags.includes(f));
  if (foreign) throw new UsageError(`${FLAG_NAMES[foreign]} does not apply to ${name}`);
  const baseUrl = client.config.baseUrl;
  // Checked before anything is changed: the seat, then that its account is the emulator's.
  const sandbox = sandboxTarget(flags.sandboxUrl, baseUrl);
  const seat = pickSeat((await client.seats.list()).items, flags.seat);
  await emulatorAccount(sandbox, seat.capabilityAccountId, baseUrl);

  const deadline = Date.now() + flags.wait * 1000;
  const watch = new EventWatch(client, [spec.type]);
  try {
    if (!(await watch.ready(deadline))) {
      process.exitCode = EXIT.notTerminal;
      out.note(`the event stream of ${baseUrl} did not connect within ${flags.wait} s; nothing was triggered`);
      return;
    }
    const made = await spec.make({ client, sandbox, seat, accountId: seat.capabilityAccountId, flags });
    out.note(`${name}: ${made.note}, for seat ${seat.id}; waiting for ${baseUrl} to record it`);
    const event = made.push === null ? undefined : await watch.first(made.matches, deadline);
    if (!event) {
      process.exitCode = EXIT.notTerminal;
      out.note(`the service did not record the event within ${flags.wait} s: ${await pushReport(sandbox, made.push)}`);
      return;
    }
    out.print(event);
  } finally {
    await watch.close();
  }
}

export function triggerCommand(): Command {
  const cmd = apiCommand(
    'trigger',
    'make a real platform event for a seat in the sandbox emulator, and print it once the service recorded it',
  )
    .argument('<event>', Object.keys(TRIGGERS).join(' | '), triggerName)
    .option('--seat <id>', 'the seat (default: your first bound seat of the video track)')
    .option('--text <text>', 'comment, reply, message: the text')
    .option('--video-id <itemId>', "comment, reply: the account's post (default: its newest)")
    .option('--parent-comment-id <id>', "reply: the comment answered (default: the post's newest visible comment)")
    .option('--reason <reason>', 'publish-failed: the failure reason the platform gives (default: internal)')
    .option(
      '--sandbox-url <url>',
      'the emulator behind the service (env VPS_SANDBOX_URL; default: the address a running service wrote to .data/sandbox-url)',
    )
    .option('--wait <seconds>', 'how long to wait for the service to record the event', positiveInt, 60)
    .addHelpText(
      'after',
      `\nEvents:\n${Object.entries(TRIGGERS)
        .map(([name, t]) => `  ${name.padEnd(18)}${t.about}: ${t.type}`)
        .join('\n')}\n\nExit 5: the service is not backed by a sandbox emulator (a production service has none).`,
    );
  return onApi(cmd, async ({ client, out }) => {
    try {
      await trigger(cmd.processedArgs[0] as TriggerName, cmd.opts<TriggerFlags>(), client, out);
    } catch (err) {
      if (err instanceof NoEmulatorError) {
        process.stderr.write(`vps: ${err.message}\n`);
        process.exitCode = EXIT.noEmulator;
        return;
      }
      if (err instanceof SandboxRefusal) {
        process.stderr.write(`vps: ${err.message}\n`);
        process.exitCode = EXIT.apiError;
        return;
      }
      throw err;
    }
  });
}
