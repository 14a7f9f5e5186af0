/**
 * Control routes for the shop emulator (plain JSON, no envelope), beside the general ones in
 * sandbox/control.ts: add a product to a creator's list, read today's precheck count, and choose
 * the verdict of a creator's next precheck.
 */
import type { FastifyInstance } from 'fastify';
import type { SandboxContext } from '../context';
import { ControlError, controlRoutes, requireAccount } from '../control';
import { ADDED_STATUSES, type AddedStatus } from './catalog';
import type { CheckStatus } from './precheck';
import { shopState } from './state';

function body(raw: unknown): Record<string, unknown> {
  return raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
}

function shopAccount(ctx: SandboxContext, params: unknown) {
  const account = requireAccount(ctx, (params as { openId: string }).openId);
  if (account.platform !== 'shop') throw new ControlError(400, `${account.openId} is not a shop account`);
  return account;
}

function checkStatus(value: unknown, name: string): CheckStatus {
  if (value === undefined) return 'SUCCESS';
  if (value === 'SUCCESS' || value === 'FAIL') return value;
  throw new ControlError(400, `${name} must be "SUCCESS" or "FAIL"`);
}

export function registerShopControl(app: FastifyInstance, ctx: SandboxContext): void {
  const state = shopState(ctx);
  controlRoutes(app, ctx, (control) => {
    // Body: title (required), price (e.g. "12.50"), currency, addedStatus, brandName, salesCount, id.
    control.post('/_sandbox/shop/:openId/products', async (request) => {
      const account = shopAccount(ctx, request.params);
      const b = body(request.body);
      if (typeof b.title !== 'string' || !b.title) throw new ControlError(400, 'title is required');
      if (b.addedStatus !== undefined && !ADDED_STATUSES.includes(b.addedStatus as AddedStatus)) {
        throw new ControlError(400, `addedStatus must be one of ${ADDED_STATUSES.join(', ')}`);
      }
      const price = b.price === undefined ? undefined : Number(b.price);
      if (price !== undefined && !(Number.isFinite(price) && price >= 0))
        throw new ControlError(400, 'price must be a non-negative number');
      if (b.id !== undefined && !(typeof b.id === 'string' && /^\d{1,19}$/.test(b.id)))
        throw new ControlError(400, 'id must be a numeric string');
      const salesCount = b.salesCount === undefined ? undefined : Number(b.salesCount);
      if (salesCount !== undefined && !(Number.isInteger(salesCount) && salesCount >= 0))
        throw new ControlError(400, 'salesCount must be a non-negative integer');
      const product = state.catalog.add(account.openId, {
        title: b.title,
        ...(b.id !== undefined ? { id: b.id as string } : {}),
        ...(price !== undefined ? { amount: price.toFixed(2) } : {}),
        ...(typeof b.currency === 'string' && b.currency ? { currency: b.currency } : {}),
        ...(b.addedStatus !== undefined ? { addedStatus: b.addedStatus as AddedStatus } : {}),
        ...(typeof b.brandName === 'string' ? { brandName: b.brandName } : {}),
        ...(salesCount !== undefined ? { salesCount } : {}),
      });
      return { product: state.catalog.official(product) };
    });

    control.get('/_sandbox/shop/:openId/precheck-count', async (request) => {
      const account = shopAccount(ctx, request.params);
      return { openId: account.openId, ...state.prechecks.usage(account.openId) };
    });

    // Body: violation and quality, each "SUCCESS" (default) or "FAIL".
    control.post('/_sandbox/shop/:openId/next-precheck', async (request) => {
      const account = shopAccount(ctx, request.params);
      const b = body(request.body);
      const verdict = { violation: checkStatus(b.violation, 'violation'), quality: checkStatus(b.quality, 'quality') };
      state.prechecks.queueVerdict(account.openId, verdict);
      return { openId: account.openId, verdict };
    });
  });
}
