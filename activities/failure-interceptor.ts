/**
 * Every activity's failure is classified here, once, on its way out of the activity: an upstream
 * failure becomes the Temporal failure its class calls for (upstream-failure.ts), so no activity
 * converts one by hand, and none can forget to. An activity still catches the failures it handles
 * itself (a refused refresh token, a submit that timed out); whatever it rethrows passes here.
 */
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { asActivityFailure } from './upstream-failure';

export const classifyActivityFailures: ActivityInterceptorsFactory = () => ({
  inbound: {
    async execute(input, next) {
      try {
        return await next(input);
      } catch (err) {
        throw asActivityFailure(err);
      }
    },
  },
});
