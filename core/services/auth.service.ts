import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type { AuthService, AuthorizeRequest } from '../../gen/vps/auth/v1/auth_pb';
import { Access } from '../../gen/vps/options/v1/options_pb';
import { assertPlanActive, customerOf } from '../context';
import { invalidField } from '../errors';

/** The interceptor has already authenticated and metered the call; this adds the write check. */
export class AuthHandlers implements ServiceImpl<typeof AuthService> {
  async authorize(req: AuthorizeRequest, ctx: HandlerContext) {
    const principal = customerOf(ctx);
    if (req.access === Access.WRITE) assertPlanActive(principal);
    else if (req.access !== Access.READ) throw invalidField('access', 'must be ACCESS_READ or ACCESS_WRITE');
    return { customerId: principal.customerId, userId: principal.userId, apiKeyId: principal.apiKeyId };
  }

  /** The interceptor has judged the caller as a write's preflight (plan included) and drawn nothing. */
  checkWriter() {
    return {};
  }
}
