/** The `vps` command: `serve` runs the service; the other commands are clients of it. */
import { Command, CommanderError } from 'commander';
import { ConfigError, loadConfig } from '../config/config';
import { adminCommand } from './admin';
import { apiCommands } from './commands';
import { listenCommand } from './listen';
import { EXIT } from './exit-codes';
import type * as ServeModule from './serve';
import { UsageError } from './usage-error';

/** How much longer than the grace time a stopping process may take before it exits regardless. */
const FORCED_EXIT_MARGIN_MS = 5_000;

export function program(): Command {
  const root = new Command('vps')
    .description('video publishing and engagement service: run it, or call its API')
    .option('--api-key <key>', 'API key, bare (env VPS_API_KEY; default .data/dev-api-key of an embedded instance)')
    .option(
      '--base-url <url>',
      "the service's address (env VPS_BASE_URL; default: the address a running service wrote to .data/base-url, else http://127.0.0.1:8080)",
    );
  root
    .command('serve')
    .description('run the service roles in this process')
    .option('--role <roles>', 'all, or a comma list of gateway, core, worker, sandbox', 'all')
    .action(async (o: { role: string }) => {
      // The service's modules take seconds to load; the client commands never need them.
      const { banner, serve } = require('./serve') as typeof ServeModule;
      const config = loadConfig();
      let running: ServeModule.Running | undefined;
      let stopping = false;
      const shutdown = (signal: string, exitCode = 0) => {
        if (stopping) return;
        stopping = true;
        process.stderr.write(`${signal}: stopping\n`);
        // A signal during start-up exits at once; exit hooks stop what was already started.
        if (!running) process.exit(1);
        // In-flight work has SHUTDOWN_GRACE_MS; a request or stream that outlives it by far is cut.
        setTimeout(() => {
          process.stderr.write(`${signal}: not stopped within ${config.env.SHUTDOWN_GRACE_MS + FORCED_EXIT_MARGIN_MS} ms; exiting\n`);
          process.exit(1);
        }, config.env.SHUTDOWN_GRACE_MS + FORCED_EXIT_MARGIN_MS).unref();
        running.stop().then(
          () => process.exit(exitCode),
          (err: unknown) => {
            process.stderr.write(`error while stopping: ${String(err)}\n`);
            process.exit(1);
          },
        );
      };
      process.once('SIGINT', () => shutdown('SIGINT'));
      process.once('SIGTERM', () => shutdown('SIGTERM'));
      running = await serve(o.role, config, (err) => {
        process.stderr.write(`vps: a role failed and the process stops: ${String(err)}\n`);
        shutdown('failure', 1);
      });
      process.stdout.write(banner(running, config.dataDir));
    });
  root.addCommand(adminCommand());
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
    if (err instanceof ConfigError || err instanceof UsageError) {
      process.stderr.write(`vps: ${err.message}\n`);
      process.exitCode = EXIT.usage;
      return;
    }
    process.stderr.write(`vps: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  }
}

if (require.main === module) void main(process.argv);
