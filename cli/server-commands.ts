/**
 * The commands that run the service or operate it from inside (`serve`, `admin`): they load the
 * service's own modules and need a checkout. The installable `vps` package is built with
 * server-commands.packaged.ts in this module's place (scripts/build-packages.cjs).
 */
import { Command } from 'commander';
import { ConfigError, loadConfig } from '../config/config';
import { adminCommand } from './admin';
import type * as ServeModule from './serve';
import { UsageError } from './usage-error';

/** How much longer than the grace time a stopping process may take before it exits regardless. */
const FORCED_EXIT_MARGIN_MS = 5_000;

export function serverCommands(): Command[] {
  return [serveCommand(), adminCommand()];
}

function serveCommand(): Command {
  return new Command('serve')
    .description('run the service roles in this process')
    .option('--role <roles>', 'all, or a comma list of gateway, core, worker, sandbox', 'all')
    .action(async (o: { role: string }) => {
      // The service's modules take seconds to load; the client commands never need them.
      const { banner, serve } = require('./serve') as typeof ServeModule;
      let config: ReturnType<typeof loadConfig>;
      try {
        config = loadConfig();
      } catch (err) {
        throw err instanceof ConfigError ? new UsageError(err.message) : err;
      }
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
}
