/**
 * In the installable `vps` package, `serve` and `admin` stand in for the checkout's commands of
 * the same names (server-commands.ts): they load the service's own modules, which the package
 * does not carry, so they say where to run them instead of failing on a missing module.
 */
import { Command } from 'commander';
import { UsageError } from './usage-error';

export function serverCommands(): Command[] {
  return [
    checkoutOnly('serve', 'run the service roles (from a checkout of the service: bin/vps serve)'),
    checkoutOnly('admin', 'operator commands over the core AdminService (from a checkout of the service: bin/vps admin)'),
  ];
}

function checkoutOnly(name: string, description: string): Command {
  return new Command(name)
    .description(description)
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .action(() => {
      throw new UsageError(
        `vps ${name} runs the service's own code, which this package does not carry: run bin/vps ${name} in a checkout of the service`,
      );
    });
}
