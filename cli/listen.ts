/**
 * `vps listen`: the event stream, one JSON event per line on stdout (the push body's shape, and
 * nothing else there, so it pipes into jq), connection states and forwarding results on stderr.
 * The SDK's stream reconnects by itself and resumes with Last-Event-ID, so a dropped connection or
 * a restarted gateway loses and repeats nothing. SIGINT and SIGTERM end it with exit 0.
 *
 * --forward-to POSTs each event to a local handler, unsigned (it is the caller's own machine), as
 * the spec has it. With --sign (a new secret, printed) or --forward-secret (one kept from an earlier
 * run) each forward is signed as a push is, so a handler that verifies signatures is tested as it
 * runs in production. Forwards go one at a time in stream order, so the handler sees the order
 * stdout shows, but from a queue of their own: a slow or dead handler never holds up stdout or the
 * stream. Each has a timeout and is not retried; a handler that missed events reads them from GET
 * /v1/events.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { once } from 'node:events';
import { EVENT_ID_HEADER, pushSignatureHeaders, type PushKey } from '../core/events/push-signature';
import { newEndpointSecret, pushKeyOfSecret } from '../core/events/signing-keys';
import { LOG_START_ID, streamEvents, type StreamedEvent, type StreamState } from '../sdk/event-stream';
import { apiClientConfig, checkReachable, runApi, type ApiFlags } from './api-client';
import { UsageError } from './usage-error';

interface ListenFlags {
  events?: string;
  includeTest?: boolean;
  forwardTo?: string;
  sign?: boolean;
  forwardSecret?: string;
  lastEventId?: string;
  reconnectInitialMs?: number;
  reconnectMaxMs?: number;
  forwardTimeoutMs: number;
}

/** Long enough for a handler doing real work, short enough that a hung one is noticed. */
const FORWARD_TIMEOUT_MS = 10_000;

function milliseconds(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('a whole number of milliseconds, at least 1');
  return Number(value);
}

export function listenCommand(): Command {
  return (
    new Command('listen')
      .description('print events as they happen, one JSON object per line; reconnects and resumes by itself')
      .option('--events <types>', 'comma-separated patterns: "*", "vplat.*" or exact types (default: all)')
      .option('--include-test', 'also the test events (service.endpoint.test), left out otherwise')
      .option('--forward-to <url>', 'also POST each event, unsigned, to this local handler; its status is shown on stderr')
      .option('--sign', 'sign each forward as pushes are (X-Service-Signature and Standard Webhooks), with a new secret printed on stderr')
      .option('--forward-secret <secret>', 'sign each forward with this secret (e.g. one --sign printed before) instead of a new one')
      .option('--last-event-id <id>', 'start after this event, replaying what came since, instead of at connection')
      // For tests and tuning: the defaults follow the service's `retry:` (3 s), doubling up to 30 s.
      .addOption(new Option('--reconnect-initial-ms <ms>', 'first wait before reconnecting').argParser(milliseconds).hideHelp())
      .addOption(new Option('--reconnect-max-ms <ms>', 'longest wait before reconnecting').argParser(milliseconds).hideHelp())
      .addOption(
        new Option('--forward-timeout-ms <ms>', 'how long one forward may take')
          .argParser(milliseconds)
          .default(FORWARD_TIMEOUT_MS)
          .hideHelp(),
      )
      .action((flags: ListenFlags, cmd: Command) => listen(flags, cmd.optsWithGlobals<ApiFlags>()))
  );
}

async function listen(flags: ListenFlags, api: ApiFlags): Promise<void> {
  const target = apiClientConfig(api);
  const { baseUrl, apiKey } = target;
  const types = flags.events
    ?.split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  if (flags.events !== undefined && !types?.length) throw new UsageError('--events: give at least one pattern');
  const forwardTo = flags.forwardTo === undefined ? undefined : handlerUrl(flags.forwardTo);
  const secret = forwardSecret(flags);

  const stopping = new AbortController();
  const stop = () => stopping.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  // A closed stdout (`vps listen | head -1`) ends the listener like Ctrl-C, not with a crash.
  process.stdout.on('error', stop);
  const forwarder = forwardTo ? new Forwarder(forwardTo, flags.forwardTimeoutMs, stopping.signal, secret) : undefined;
  // Before anything else on stderr, so a person sees it first and a script reads it off the first line.
  if (secret !== undefined && flags.sign) process.stderr.write(`signing forwards with secret ${secret}\n`);
  try {
    await runApi(async () => {
      // Once connected, the stream rides out a restart by itself; an address where nothing has
      // ever answered is a mistake to report, not to retry forever.
      await checkReachable(target);
      const events = streamEvents({
        baseUrl,
        apiKey,
        types,
        includeTest: flags.includeTest,
        lastEventId: flags.lastEventId,
        signal: stopping.signal,
        backoff: { initialMs: flags.reconnectInitialMs, maxMs: flags.reconnectMaxMs },
        userAgent: 'vps-cli',
        onState: (state) => process.stderr.write(`${stateLine(state, baseUrl)}\n`),
      });
      for await (const event of events) {
        await printLine(JSON.stringify(event), stopping.signal);
        forwarder?.enqueue(event);
      }
    });
    await forwarder?.idle();
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    process.stdout.off('error', stop);
  }
}

/** The secret forwards are signed with, when asked: a new one with --sign, else --forward-secret's. */
function forwardSecret(flags: ListenFlags): string | undefined {
  if (flags.sign === undefined && flags.forwardSecret === undefined) return undefined;
  const flag = flags.sign ? '--sign' : '--forward-secret';
  if (flags.forwardTo === undefined) throw new UsageError(`${flag}: signs forwards, so it needs --forward-to`);
  if (flags.sign && flags.forwardSecret !== undefined) throw new UsageError('give --sign (a new secret) or --forward-secret, not both');
  if (flags.forwardSecret !== undefined && flags.forwardSecret.trim() === '') throw new UsageError('--forward-secret: give the secret');
  return flags.forwardSecret ?? newEndpointSecret();
}

function handlerUrl(value: string): URL {
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url;
  } catch {
    // falls through to the usage error, which names the value
  }
  throw new UsageError(`--forward-to: ${value} is not an http(s) URL`);
}

function stateLine(state: StreamState, baseUrl: string): string {
  switch (state.state) {
    case 'connected':
      if (state.resumedAfter === LOG_START_ID) return `connected to ${baseUrl}, resuming from the start of the log`;
      return `connected to ${baseUrl}${state.resumedAfter ? `, resuming after ${state.resumedAfter}` : ''}`;
    case 'disconnected':
      return `disconnected: ${state.reason}`;
    case 'retrying':
      return `reconnecting in ${state.delayMs} ms (attempt ${state.attempt})`;
  }
}

/** Writes one line, waiting while the reader of stdout is behind rather than buffering without end. */
async function printLine(line: string, stopping: AbortSignal): Promise<void> {
  if (process.stdout.write(`${line}\n`)) return;
  try {
    await once(process.stdout, 'drain', { signal: stopping });
  } catch (err) {
    // Stopping while the reader is behind: the line is as far as it will get.
    if (!stopping.aborted) throw err;
  }
}

/**
 * Sends events to the handler one at a time, in the order they were queued. The queue has no
 * bound: a handler slower than the events falls behind, by at most the timeout per event.
 */
class Forwarder {
  private chain: Promise<void> = Promise.resolve();
  /** Both schemes' keys, derived once as an endpoint's are: what deliveries sign with. */
  private readonly signingKey: PushKey | undefined;

  constructor(
    private readonly url: URL,
    private readonly timeoutMs: number,
    private readonly stopping: AbortSignal,
    secret: string | undefined,
  ) {
    this.signingKey = secret === undefined ? undefined : pushKeyOfSecret(secret);
  }

  /** A delivery's headers: both schemes' signatures over this body at the time of sending, and the event id. */
  private signed(event: StreamedEvent, body: string): Record<string, string> {
    if (this.signingKey === undefined) return {};
    return {
      ...pushSignatureHeaders([this.signingKey], event.id, Math.floor(Date.now() / 1000), body),
      [EVENT_ID_HEADER]: event.id,
    };
  }

  enqueue(event: StreamedEvent): void {
    this.chain = this.chain.then(() => this.forward(event));
  }

  /** Resolves once every queued forward has been tried (at once when stopping: the rest are dropped). */
  idle(): Promise<void> {
    return this.chain;
  }

  private async forward(event: StreamedEvent): Promise<void> {
    if (this.stopping.aborted) {
      process.stderr.write(`not forwarded ${event.id}: stopping\n`);
      return;
    }
    const started = Date.now();
    try {
      const body = JSON.stringify(event);
      const res = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'vps-cli', ...this.signed(event, body) },
        body,
        signal: AbortSignal.any([this.stopping, AbortSignal.timeout(this.timeoutMs)]),
      });
      // The body is not used, but reading it frees the connection for the next forward.
      await res.arrayBuffer();
      process.stderr.write(`forwarded ${event.id} -> ${res.status} (${Date.now() - started} ms)\n`);
    } catch (err) {
      const reason = err instanceof Error && err.name === 'TimeoutError' ? `timed out after ${this.timeoutMs} ms` : describe(err);
      process.stderr.write(`forward failed ${event.id} -> ${reason} (${Date.now() - started} ms)\n`);
    }
  }
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  return err.cause instanceof Error ? `${err.message}: ${err.cause.message}` : err.message;
}
