/** The API commands other than `listen`: one module per resource. */
import type { Command } from 'commander';
import { eventsCommand } from './events';
import { publishCommand } from './publish';
import { recordsCommand } from './records';
import { seatsCommand } from './seats';
import { statusCommand } from './status';
import { triggerCommand } from './trigger';
import { videosCommand } from './videos';
import { webhooksCommand } from './webhooks';

export function apiCommands(): Command[] {
  return [
    seatsCommand(),
    videosCommand(),
    publishCommand(),
    statusCommand(),
    recordsCommand(),
    webhooksCommand(),
    eventsCommand(),
    triggerCommand(),
  ];
}
