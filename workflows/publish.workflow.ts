/**
 * One per publish record (`publish-<recordId>`): submits the post once, then follows the official
 * status at the spec's cadence (every few seconds, about 30 times), then more slowly for a bounded
 * time, and waits a while for the post id the platform reports late. A submit whose outcome is
 * unknown (a timeout, or a worker that died mid-call) is never sent again: the workflow looks for
 * the post among the account's posts instead, and says the outcome is unconfirmed if it finds none.
 */
import { ActivityFailure, ApplicationFailure, proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { TERMINAL_PUBLISH_STATUSES, type PublishInput, type PublishStep } from './shared';

const isTerminal = (step: PublishStep) => TERMINAL_PUBLISH_STATUSES.includes(step.status);

function failureText(err: unknown): string {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure || cause instanceof Error) return cause.message;
  return String(err);
}

export async function publishWorkflow(input: PublishInput): Promise<PublishStep> {
  // The irreversible call: few tries, and only after refusals the platform answered (the activity
  // reports a timeout as an unknown outcome instead of failing, so it is not retried here).
  const { submitPublish } = proxyActivities<Activities>({
    startToCloseTimeout: input.submitTimeoutMs,
    retry: { initialInterval: input.submitRetryInitialMs, backoffCoefficient: 2, maximumAttempts: 5 },
  });
  // Reads and the record's own writes, each at most one official call: the submit's bound suits
  // them too. A fixed minute made a step whose result was lost (Temporal restarting as it ended)
  // wait a minute before its retry, longer than the drills allow a publish to settle.
  const { refreshPublish, reconcilePublish } = proxyActivities<Activities>({
    startToCloseTimeout: input.submitTimeoutMs,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 3 },
  });
  const { endPublish } = proxyActivities<Activities>({
    startToCloseTimeout: input.submitTimeoutMs,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
  });
  const { recordId } = input;
  const pauses = [...Array<number>(input.pollAttempts).fill(input.pollIntervalMs), ...input.slowPollScheduleMs];

  let step: PublishStep;
  let outcomeUnknown: boolean;
  try {
    ({ step, outcomeUnknown } = await submitPublish({ recordId }));
  } catch (err) {
    return endPublish({ recordId, status: 'service_error', reason: `the publish could not be submitted: ${failureText(err)}` });
  }

  if (outcomeUnknown && input.track === 'shop') {
    // The shop lists no creator's posts to look in, and its file id is consumed either way.
    return endPublish({
      recordId,
      status: 'publish_unconfirmed',
      reason:
        "the shop did not answer the post; its file id is consumed either way, so the post is not sent again: check the creator's videos",
    });
  }
  if (outcomeUnknown) {
    // Nothing to poll without a share id: look for the post at the same cadence.
    for (const pause of pauses) {
      await sleep(pause);
      step = await reconcilePublish({ recordId }).catch(() => step);
      if (isTerminal(step)) return step;
    }
    return endPublish({
      recordId,
      status: 'publish_unconfirmed',
      reason: 'the platform did not confirm the publish and no matching post was found; check the account before publishing again',
    });
  }

  for (const pause of pauses) {
    if (isTerminal(step)) break;
    await sleep(pause);
    // A failed refresh is not the publish's failure: the next poll tries again.
    step = await refreshPublish({ recordId }).catch(() => step);
  }
  if (!isTerminal(step) && input.track === 'video') {
    step = await reconcilePublish({ recordId }).catch(() => step);
  }
  if (!isTerminal(step)) {
    return endPublish({
      recordId,
      status: 'publish_unconfirmed',
      reason: 'the platform reported no final status in time and no matching post was found; check the account before publishing again',
    });
  }

  // The post id follows completion by minutes; each arrival is a change, logged as an event.
  for (
    let waited = 0;
    input.track === 'video' && step.status === 'publish_complete' && !step.hasPostId && waited < input.postIdWaitMs;
    waited += input.pollIntervalMs
  ) {
    await sleep(input.pollIntervalMs);
    step = await refreshPublish({ recordId }).catch(() => step);
  }
  return step;
}
