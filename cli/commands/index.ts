/** The API commands other than `listen`: one module per resource. */
import type { Command } from 'commander';

export function apiCommands(): Command[] {
  return [];
}
