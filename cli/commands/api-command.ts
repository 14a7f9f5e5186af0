/**
 * What every API command shares: the --json flag, the client configured from the global flags,
 * the output mode, retry notes on stderr, and runApi's exit codes; and the flag parsers, whose
 * InvalidArgumentError commander turns into a usage error (exit 2).
 */
import { Command, InvalidArgumentError } from 'commander';
import type { RetryInfo, VpsClient } from '../../sdk/client';
import { VpsApiError } from '../../sdk/errors';
import { clientFor, runApi } from '../api-client';
import { Output } from '../output';

export interface ApiContext {
  client: VpsClient;
  out: Output;
}

/** A command that calls the API; give it its options, then its action with `onApi`. */
export function apiCommand(name: string, description: string): Command {
  return new Command(name).description(description).option('--json', 'print JSON even on a terminal (always JSON when stdout is piped)');
}

/** Sets the command's action: `run` with the client and the output; its failures become exit codes. */
export function onApi(cmd: Command, run: (ctx: ApiContext) => Promise<void>): Command {
  return cmd.action(() =>
    runApi(async () => {
      const out = new Output(cmd.opts<{ json?: boolean }>().json);
      // The client retries by the spec's policy on its own; a person waiting should see why.
      const onRetry = ({ method, path, error, retry, delayMs }: RetryInfo) =>
        out.note(
          `${method} ${path}: ${error instanceof VpsApiError ? `code ${error.code}` : error.message}; retry ${retry} in ${(delayMs / 1000).toFixed(1)} s`,
        );
      try {
        await run({ client: await clientFor(cmd, { onRetry }), out });
      } finally {
        out.progress.done(); // an error printed after a half-drawn bar starts on its own line
      }
    }),
  );
}

/** `--limit` and `--cursor` of the paginated lists. */
export function withPaging(cmd: Command): Command {
  return cmd
    .option('--limit <n>', 'page size (1 to 100)', positiveInt)
    .option('--cursor <cursor>', "the next page, from the previous page's nextCursor");
}

/** A list command's flags as its query: every option but --json, each named as its query field. */
export function queryOf<T extends object>(cmd: Command): T {
  const { json: _json, ...query } = cmd.opts<{ json?: boolean }>();
  return query as T;
}

export function positiveInt(value: string): number {
  if (!/^[1-9]\d*$/.test(value)) throw new InvalidArgumentError('expected a whole number of at least 1');
  return Number(value);
}

export function wholeNumber(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('expected a whole number');
  return Number(value);
}

/** Collects a repeatable flag's values. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}
