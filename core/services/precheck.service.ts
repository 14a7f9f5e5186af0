/**
 * Shop pre-checks: accepting one (checks in the spec's order: fields, the account binding, the
 * file, the anchor text, then the account's daily quota), starting its workflow, and reading the
 * record the workflow keeps. The official submit and the polls happen in the workflow; the record
 * is the truth a read returns, never refreshed by the read.
 */
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type { Client } from '@temporalio/client';
import type { GetPrecheckRequest, PrecheckService, SubmitPrecheckRequest } from '../../gen/vps/shop/v1/shop_pb';
import { customerOf } from '../context';
import type { Db } from '../db/client';
import * as prechecks from '../db/repositories/prechecks';
import { ApiError, invalidField } from '../errors';
import { newId } from '../ids';
import { toPrecheck } from '../mappers/prechecks';
import { anchorTextProblem } from '../publishing/anchor-text';
import { quotaResetAt, secondsUntilQuotaReset } from '../publishing/prechecks';
import { bookSeat } from '../publishing/seats';
import { shopLibraryFile } from '../publishing/shop-files';
import { workflowIds } from '../../workflows/workflow-ids';
import type { PrecheckInput } from '../../workflows/shared';
import { startPrecheck } from '../temporal/client';

export interface PrecheckSettings {
  /** Pre-checks per account per UTC day. */
  dailyQuota: number;
  pollIntervalMs: number;
  pollAttempts: number;
}

/** The prefix of our pre-check ids, the taskId of the routes. */
export const PRECHECK_ID_PREFIX = 'pre';

/** Id kinds that are not pre-check ids, each refused with 1005 and a message naming the right kind. */
const WRONG_ID_KINDS: ReadonlyArray<readonly [RegExp, string]> = [
  [/^pub_/, 'is a publish record id; pass the taskId of the pre-check response'],
  [/^vid_/, 'is a video library record id; pass the taskId of the pre-check response'],
  [/^seat_/, 'is a seat id; pass the taskId of the pre-check response'],
  [/^\d{6,}$/, "looks like the shop's own task id (officialTaskId); pass the taskId of the pre-check response"],
];

export class PrecheckHandlers implements ServiceImpl<typeof PrecheckService> {
  constructor(readonly deps: { db: Db; temporalClient: () => Promise<Client>; taskQueue: string; settings: PrecheckSettings }) {}

  async submitPrecheck(req: SubmitPrecheckRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    for (const [field, value] of [
      ['accountId', req.accountId],
      ['fileId', req.fileId],
      ['productId', req.productId],
      ['productTitle', req.productTitle],
    ] as const) {
      if (!value.trim()) throw invalidField(field, 'is required');
    }
    const seat = await bookSeat(this.deps.db, customerId, req.accountId, 'shop', 'accountId');
    const video = await shopLibraryFile(this.deps.db, customerId, seat, req.fileId);
    const anchor = anchorTextProblem(req.productTitle);
    if (anchor) throw invalidField('productTitle', anchor);

    const id = newId(PRECHECK_ID_PREFIX);
    const workflowId = workflowIds.precheck(id);
    const decision = await prechecks.insertWithinQuota(
      this.deps.db,
      {
        id,
        customerId,
        seatId: seat.id,
        track: 'shop',
        accountId: seat.accountId,
        videoId: video.id,
        fileId: req.fileId,
        productId: req.productId,
        productTitle: req.productTitle,
        status: 'submitted',
        workflowId,
      },
      this.deps.settings.dailyQuota,
    );
    if (!decision.accepted) throw quotaExhausted(req.accountId, this.deps.settings.dailyQuota, decision.used, decision.at);

    const { pollIntervalMs, pollAttempts } = this.deps.settings;
    const input: PrecheckInput = { precheckId: id, pollIntervalMs, pollAttempts };
    try {
      await startPrecheck(await this.deps.temporalClient(), this.deps.taskQueue, decision.row, input);
    } catch (err) {
      // A record no workflow follows would stay `submitted` and hold a quota slot all day: end it
      // (without a task id it no longer counts), then let the caller see the failure.
      await prechecks.updateOpenPrecheck(this.deps.db, id, {
        status: 'service_error',
        reason: 'the pre-check could not be started; submit it again',
        completedAt: new Date(),
      });
      throw err;
    }
    return { precheck: toPrecheck(decision.row) };
  }

  async getPrecheck(req: GetPrecheckRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    const id = req.id.trim();
    if (!id) throw invalidField('taskId', 'is required');
    const wrongKind = WRONG_ID_KINDS.find(([pattern]) => pattern.test(id));
    if (wrongKind) throw new ApiError(1005, `taskId ${id} ${wrongKind[1]}`, { data: { field: 'taskId' } });
    const row = await prechecks.findCustomerPrecheck(this.deps.db, customerId, id);
    if (!row) throw new ApiError(1005, `taskId: pre-check ${id} does not exist among yours`, { data: { field: 'taskId' } });
    return { precheck: toPrecheck(row) };
  }
}

/** 2002 with Retry-After until the next UTC midnight, when the account's quota starts afresh. */
export function quotaExhausted(account: string, dailyQuota: number, used: number, at: Date): ApiError {
  const resetsAt = quotaResetAt(at).toISOString();
  const retryAfterSeconds = secondsUntilQuotaReset(at);
  return new ApiError(
    2002,
    `accountId: the daily pre-check quota of ${account} is used up (${used} of ${dailyQuota} today, UTC); it resets at ${resetsAt}, in ${retryAfterSeconds} s`,
    { retryAfterSeconds, data: { field: 'accountId', dailyQuota, used, resetsAt } },
  );
}
