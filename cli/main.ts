/** The `vps` command: `serve` runs the service; the other commands are clients of it. */
import { Command, CommanderError } from 'commander';
import { apiCommands } from './commands';
import { listenCommand } from './listen';
import { EXIT } from './exit-codes';
import { serverCommands } from './server-commands';
import { UsageError } from './usage-error';

export function program(): Command {
  const root = new Command('vps')
    .description('video publishing and engagement service: run it, or call its API')
    .option(
      '--api-key <key>',
      'API key, bare (env VPS_API_KEY; default: the dev key of a service started by npm start, .data/dev-api-key in this folder or one above)',
    )
    .option(
      '--base-url <url>',
      "the service's address (env VPS_BASE_URL; default: the address a running service wrote to .data/base-url, else http://127.0.0.1:8080)",
    );
  for (const command of serverCommands()) root.addCommand(command);
  root.addCommand(listenCommand());
  for (const command of apiCommands()) root.addCommand(command);
  // Commander exits by itself on usage errors unless told otherwise on every command; main()
  // turns its errors into our exit codes instead.
  const override = (cmd: Command) => {
    cmd.exitOverride();
    cmd.commands.forEach(override);
  };
  override(root);
  return root;
}

export async function main(argv: string[]): Promise<void> {
  try {
    await program().parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      process.exitCode = err.exitCode === 0 ? EXIT.ok : EXIT.usage;
      return;
    }
    if (err instanceof UsageError) {
      process.stderr.write(`vps: ${err.message}\n`);
      process.exitCode = EXIT.usage;
      return;
    }
    process.stderr.write(`vps: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  }
}

if (require.main === module) void main(process.argv);
