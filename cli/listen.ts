/** `vps listen`: the event stream, one JSON event per line. */
import { Command } from 'commander';

export function listenCommand(): Command {
  return new Command('listen').description('print events as they happen, one JSON object per line');
}
