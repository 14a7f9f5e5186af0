/**
 * Reports how each workflow run ends to the worker, which counts it in /metrics. Workflows do no
 * I/O, so the report leaves the sandbox through a sink; a sink call is not repeated on replay, so a
 * run moved to another worker is counted where it ends, once (rarely twice, if the ending task
 * itself fails and is retried: metrics tolerate that, which is why this is not an activity).
 */
import { ContinueAsNew, isCancellation, proxySinks, type Sinks, type WorkflowInterceptorsFactory } from '@temporalio/workflow';

export type RunOutcome = 'completed' | 'failed' | 'cancelled' | 'continued_as_new';

export interface OutcomeSinks extends Sinks {
  outcomes: { ended(outcome: RunOutcome): void };
}

const { outcomes } = proxySinks<OutcomeSinks>();

export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [
    {
      async execute(input, next) {
        try {
          const result = await next(input);
          outcomes.ended('completed');
          return result;
        } catch (err) {
          outcomes.ended(err instanceof ContinueAsNew ? 'continued_as_new' : isCancellation(err) ? 'cancelled' : 'failed');
          throw err;
        }
      },
    },
  ],
});
