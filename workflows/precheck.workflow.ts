/**
 * One per pre-check record (`precheck-<precheckId>`): submits the pre-check to the shop, then polls
 * its result every `pollIntervalMs`, at most `pollAttempts` times. Passed when both dimensions
 * passed, failed when either failed, service_error when the submit kept failing or no result came
 * within the budget. Every change is written on the record by the activities.
 */
import { ActivityFailure, ApplicationFailure, proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { PrecheckProgress } from '../activities/precheck.activities';
import type { PrecheckInput, PrecheckOutcome } from './shared';

// Each accepted submission uses a slot of the shop's daily quota (50), and a try that timed out may
// have been accepted: three tries, spaced, only after failures the activity classed as retryable.
// A minute covers the upstream client's own 30 s timeout with room for the record's writes.
const { submitPrecheckTask } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 3 },
});
// A read: retried briefly; a poll that still fails is one of the budget's attempts, not the end.
const { pollPrecheckResult } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 3 },
});
// The record's own write: retried until the database answers, so the record always ends.
const { endPrecheck } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

const isOutcome = (p: PrecheckProgress): p is PrecheckOutcome => p === 'passed' || p === 'failed' || p === 'service_error';

function failureText(err: unknown): string {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure || cause instanceof Error) return cause.message;
  return String(err);
}

export async function precheckWorkflow(input: PrecheckInput): Promise<PrecheckOutcome> {
  const { precheckId } = input;
  let progress: PrecheckProgress;
  try {
    progress = await submitPrecheckTask({ precheckId });
  } catch (err) {
    return end(precheckId, `the shop kept failing the submit: ${failureText(err)}`);
  }

  let lastFailure: string | undefined;
  for (let attempt = 0; attempt < input.pollAttempts && !isOutcome(progress); attempt++) {
    await sleep(input.pollIntervalMs);
    try {
      progress = await pollPrecheckResult({ precheckId });
      lastFailure = undefined;
    } catch (err) {
      lastFailure = failureText(err);
    }
  }
  if (isOutcome(progress)) return progress;
  const seconds = Math.round((input.pollAttempts * input.pollIntervalMs) / 1000);
  return end(
    precheckId,
    `the shop gave no result after ${input.pollAttempts} polls over ${seconds} s${lastFailure ? ` (last poll: ${lastFailure})` : ''}; submit the pre-check again`,
  );
}

async function end(precheckId: string, reason: string): Promise<PrecheckOutcome> {
  const ended = await endPrecheck({ precheckId, reason });
  return isOutcome(ended) ? ended : 'service_error';
}
