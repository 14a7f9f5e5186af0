import { createContextKey, type HandlerContext } from '@connectrpc/connect';
import { ApiError } from './errors';

/** Who is calling, established by the access interceptor before any handler runs. */
export type Principal =
  | { kind: 'customer'; customerId: string; userId: string; apiKeyId: string; planExpiresAt: Date | null; planExpired: boolean }
  | { kind: 'admin' };

export const principalKey = createContextKey<Principal | undefined>(undefined, { description: 'the authenticated caller' });

export type CustomerPrincipal = Extract<Principal, { kind: 'customer' }>;

export function customerOf(ctx: HandlerContext): CustomerPrincipal {
  const principal = ctx.values.get(principalKey);
  // Reaching a customer handler without a customer principal would be a wiring bug, not bad input.
  if (principal?.kind !== 'customer') throw new Error(`no customer principal for ${ctx.method.name}`);
  return principal;
}

export function assertPlanActive(principal: CustomerPrincipal): void {
  if (principal.planExpired) {
    const when = principal.planExpiresAt ? ` at ${principal.planExpiresAt.toISOString()}` : '';
    throw new ApiError(1003, `plan expired${when}; write operations are rejected until it is renewed`);
  }
}
