/**
 * One per bound seat (`token-refresh-<seatId>`): keeps the seat's upstream access token fresh by
 * refreshing it a margin before it expires, for as long as the seat stays bound. It ends when the
 * seat is unbound or the platform refuses the refresh token (a person must re-authorize); binding
 * the seat again starts a new run. Sleeping is a durable timer: a worker restart loses nothing.
 */
import { continueAsNew, proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { TokenRefreshInput, TokenRefreshStep } from './shared';

const { refreshSeatToken } = proxyActivities<Activities>({
  // One refresh call; the upstream client's own timeout is shorter.
  startToCloseTimeout: '2 minutes',
  // A platform outage must not end the workflow: retry until the token can be refreshed.
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '10 minutes' },
});

/** Rounds per run before the history is rolled over; about a year of daily refreshes fits many times. */
const ROUNDS_PER_RUN = 100;

export async function tokenRefreshWorkflow(input: TokenRefreshInput): Promise<TokenRefreshStep> {
  for (let round = 0; round < ROUNDS_PER_RUN; round++) {
    const step = await refreshSeatToken({ seatId: input.seatId, marginSeconds: input.marginSeconds });
    if (step.outcome === 'unbound' || step.outcome === 'reauthorization_required' || step.refreshAt === undefined) return step;
    await sleep(Math.max(input.minIntervalMs, step.refreshAt - Date.now()));
  }
  return continueAsNew<typeof tokenRefreshWorkflow>(input);
}
