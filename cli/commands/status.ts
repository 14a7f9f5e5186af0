/**
 * `vps status`: follows a publish by the spec's polling rule (every 5 to 10 s, about 30 times,
 * stop at a terminal status) and prints the last answer. `vps publish … --wait` runs the same loop.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { InvalidArgumentError, type Command } from 'commander';
import { isTerminal } from '../../core/publishing/status';
import type { PublishStatus } from '../../core/db/schema';
import { TERMINAL_PUBLISH_STATUSES } from '../../workflows/shared';
import type { VpsClient } from '../../sdk/client';
import { pollProgressText } from '../output';
import { EXIT } from '../exit-codes';
import { apiCommand, onApi, positiveInt, type ApiContext } from './api-command';

/** The spec's rule; shorter intervals are for tests against the emulator. */
const DEFAULT_INTERVAL_SECONDS = 5;
const DEFAULT_ATTEMPTS = 30;
const SPEC_INTERVAL_SECONDS = { min: 5, max: 10 };

export interface PollSettings {
  intervalMs: number;
  attempts: number;
}

interface PollFlags {
  interval: number;
  attempts: number;
}

/** Something with a normalized publish status: a publish record or a status answer. */
export interface Observed {
  status: PublishStatus;
}

function seconds(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0)
    throw new InvalidArgumentError('expected a number of seconds above 0, e.g. 5 or 0.5');
  return n;
}

/** --interval and --attempts, and the exit codes, on `status` and on `publish … --wait`. */
export function withPolling(cmd: Command): Command {
  return cmd
    .option(
      '--interval <seconds>',
      `seconds between polls (the spec: ${SPEC_INTERVAL_SECONDS.min} to ${SPEC_INTERVAL_SECONDS.max})`,
      seconds,
      DEFAULT_INTERVAL_SECONDS,
    )
    .option('--attempts <n>', 'polls at most', positiveInt, DEFAULT_ATTEMPTS)
    .addHelpText(
      'after',
      `\nPolling stops at a terminal status, prints the record and exits 0 whatever that status is:\n  ${TERMINAL_PUBLISH_STATUSES.join(', ')}.` +
        `\nWhen --attempts polls end before one, it prints the last answer and exits ${EXIT.notTerminal}.`,
    );
}

export function pollSettings(flags: PollFlags, ctx: ApiContext): PollSettings {
  if (flags.interval < SPEC_INTERVAL_SECONDS.min || flags.interval > SPEC_INTERVAL_SECONDS.max) {
    ctx.out.note(
      `--interval ${flags.interval}: the spec asks for polls every ${SPEC_INTERVAL_SECONDS.min} to ${SPEC_INTERVAL_SECONDS.max} seconds`,
    );
  }
  return { intervalMs: Math.round(flags.interval * 1000), attempts: flags.attempts };
}

/**
 * Checks until a terminal status or the attempts run out, waiting the interval between checks. With
 * an `initial` observation (a publish's answer) the first check waits too, as a poll would.
 */
export async function pollUntilTerminal<T extends Observed>(
  check: () => Promise<T>,
  settings: PollSettings,
  hooks: { wait?: (ms: number) => Promise<unknown>; onAttempt?: (attempt: number, status: string) => void } = {},
  initial?: T,
): Promise<{ last: T; terminal: boolean }> {
  const wait = hooks.wait ?? sleep;
  let last = initial;
  if (last && isTerminal(last.status)) return { last, terminal: true };
  for (let attempt = 1; attempt <= settings.attempts; attempt++) {
    if (last) await wait(settings.intervalMs);
    last = await check();
    hooks.onAttempt?.(attempt, last.status);
    if (isTerminal(last.status)) return { last, terminal: true };
  }
  if (!last) throw new RangeError('pollUntilTerminal: attempts must be at least 1');
  return { last, terminal: false };
}

/** Polls with the progress line, prints the last answer, and sets the exit code for a non-terminal end. */
export async function follow<T extends Observed>(
  ctx: ApiContext,
  check: () => Promise<T>,
  settings: PollSettings,
  initial?: T,
): Promise<void> {
  const { last, terminal } = await pollUntilTerminal(
    check,
    settings,
    { onAttempt: (n, status) => ctx.out.progress.update(pollProgressText(n, settings.attempts, status)) },
    initial,
  );
  ctx.out.print(last);
  if (!terminal) {
    ctx.out.note(`still ${last.status} after ${settings.attempts} polls; run vps status again later`);
    process.exitCode = EXIT.notTerminal;
  }
}

/** One status query: the video track's by publishId, or the shop track's by the official video id. */
export function statusCheck(client: VpsClient, target: { handle: string; shop: boolean; account?: string }): () => Promise<Observed> {
  return target.shop
    ? () => client.publish.shopStatus({ query: { videoId: target.handle, accountId: target.account } })
    : () => client.publish.status({ query: { publishId: target.handle, account: target.account } });
}

export function statusCommand(): Command {
  const cmd = withPolling(
    apiCommand('status', 'follow a publish until a terminal status, printing the record')
      .argument('<publishId>', 'the shareId (publishId) of the publish answer; with --shop, the official video id')
      .option('--shop', 'a shop track publish: query /v1/publish/tts/status with the official video id')
      .option('--account <account>', 'the bound account; needed only when the id matches none of your publish records'),
  );
  return onApi(cmd, async (ctx) => {
    const flags = cmd.opts<PollFlags & { shop?: boolean; account?: string }>();
    await follow(
      ctx,
      statusCheck(ctx.client, { handle: cmd.args[0]!, shop: flags.shop === true, account: flags.account }),
      pollSettings(flags, ctx),
    );
  });
}
