/**
 * One per task queue (`video-expiry-repair-<taskQueue>`), started by every worker: every interval,
 * the video track records that are available without a confirmed lifetime (its start failed, or
 * the process died before it) get one with the time they have left, and records a working timer
 * would have expired by now get their lifetime started again, which expires them at once. A
 * workflow rather than a timer in a process, so that it survives restarts, runs once however many
 * workers there are, and shows its rounds in the Temporal UI.
 */
import { continueAsNew, defineSignal, proxyActivities, setHandler, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { VIDEO_EXPIRY_REPAIR_SETTINGS_SIGNAL, type VideoExpiryRepairInput } from './shared';

const { repairVideoLifetimes } = proxyActivities<Activities>({
  // A batch of database reads and workflow starts, each quick.
  startToCloseTimeout: '2 minutes',
  // The database or Temporal away: try again until they are back, the round is only late.
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export const repairSettingsSignal = defineSignal<[VideoExpiryRepairInput]>(VIDEO_EXPIRY_REPAIR_SETTINGS_SIGNAL);

/** Rounds per run before the history is rolled over (each round is a handful of events). */
const ROUNDS_PER_RUN = 200;

export async function videoExpiryRepairWorkflow(input: VideoExpiryRepairInput): Promise<never> {
  let settings = input;
  // Each worker start sends its configuration: the latest one wins from the next round on.
  setHandler(repairSettingsSignal, (next) => {
    settings = next;
  });
  for (let round = 0; round < ROUNDS_PER_RUN; round++) {
    const { more } = await repairVideoLifetimes({ graceMs: settings.graceMs });
    if (!more) await sleep(settings.intervalMs);
  }
  // Signal handlers run synchronously, so no settings are pending here.
  return continueAsNew<typeof videoExpiryRepairWorkflow>(settings);
}
