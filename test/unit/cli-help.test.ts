/** `--help` answers on every `vps` command: the whole command tree, walked and run in process. */
import type { Command } from 'commander';
import { main, program } from '../../cli/main';

function paths(cmd: Command, prefix: string[] = []): string[][] {
  return cmd.commands.flatMap((sub) => [[...prefix, sub.name()], ...paths(sub, [...prefix, sub.name()])]);
}

describe('vps --help', () => {
  let written = '';
  beforeEach(() => {
    written = '';
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written += chunk.toString();
      return true;
    });
  });
  afterEach(() => {
    jest.restoreAllMocks();
    process.exitCode = undefined;
  });

  it.each(
    paths(program())
      .filter((p) => p.at(-1) !== 'help')
      .map((p) => [p.join(' ')]),
  )('vps %s --help prints its usage and exits 0', async (path) => {
    await main(['node', 'vps', ...path.split(' '), '--help']);
    expect(process.exitCode).toBe(0);
    expect(written).toMatch(new RegExp(`^Usage: vps ${path}`));
  });
});
