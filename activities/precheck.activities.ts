/**
 * The side effects of a shop pre-check: the official submit, the polls of its result, and the
 * record's end. The workflow is the record's only writer; every change lands on the record, which
 * is what GET /v1/publish/tts/precheck/{taskId} returns.
 */
import { ApplicationFailure } from '@temporalio/activity';
import * as prechecks from '../core/db/repositories/prechecks';
import type { PrecheckChange, PrecheckRow } from '../core/db/repositories/prechecks';
import { findSeat } from '../core/db/repositories/seats';
import { flattenIssues, isTerminalPrecheck, normalizeCheckStatus, precheckStatusOf, verdictReason } from '../core/publishing/prechecks';
import { openCredentials } from '../core/upstream/credentials';
import { UpstreamError } from '../core/upstream/failures';
import { flattenOfficial } from '../core/upstream/mapping';
import { getPrecheckResult, submitPrecheck as submitOfficialPrecheck } from '../core/upstream/shop/content';
import type { PrecheckOutcome } from '../workflows/shared';
import type { ActivityDeps } from './deps';

/** Where a pre-check stands after a step: still being checked by the shop, or ended. */
export type PrecheckProgress = PrecheckOutcome | 'submitted' | 'processing';

type PrecheckActivityDeps = Pick<ActivityDeps, 'db' | 'sealedBox' | 'upstream' | 'logger'>;

const progressOf = (row: PrecheckRow): PrecheckProgress => row.status;

export function createPrecheckActivities(deps: PrecheckActivityDeps) {
  const load = async (precheckId: string): Promise<PrecheckRow> => {
    const row = await prechecks.findPrecheck(deps.db, precheckId);
    // A workflow without its record is a wiring bug; retrying cannot create the row.
    if (!row) throw ApplicationFailure.nonRetryable(`pre-check ${precheckId} does not exist`, 'precheck.record_missing');
    return row;
  };

  const change = async (row: PrecheckRow, next: PrecheckChange): Promise<PrecheckRow> => {
    const ending = next.status !== undefined && isTerminalPrecheck(next.status);
    const written = await prechecks.updateOpenPrecheck(deps.db, row.id, { ...next, ...(ending ? { completedAt: new Date() } : {}) });
    return written ?? row;
  };

  const serviceError = (row: PrecheckRow, reason: string) => change(row, { status: 'service_error', reason });

  /** The access token of the seat the pre-check was made through, while it still holds the account. */
  const accessToken = async (row: PrecheckRow): Promise<string | undefined> => {
    const seat = await findSeat(deps.db, row.seatId);
    if (!seat?.credentialsSealed || seat.accountId !== row.accountId) return undefined;
    return openCredentials(deps.sealedBox, seat.id, seat.credentialsSealed).accessToken;
  };
  const seatGoneReason = (row: PrecheckRow) =>
    `seat ${row.seatId} no longer holds account ${row.accountId}; connect the account again, then submit the pre-check again`;

  return {
    /**
     * Sends the pre-check to the shop. Not claimed like a publish: a pre-check consumes no file
     * id, so a resend after an unknown outcome (a timeout) costs at most one slot of the shop's
     * daily quota, and the workflow allows few tries.
     */
    async submitPrecheckTask(input: { precheckId: string }): Promise<PrecheckProgress> {
      const row = await load(input.precheckId);
      if (row.officialTaskId || isTerminalPrecheck(row.status)) return progressOf(row);
      const token = await accessToken(row);
      if (!token) return progressOf(await serviceError(row, seatGoneReason(row)));
      let taskId: string;
      try {
        const sent = await submitOfficialPrecheck(deps.upstream.shop, token, {
          video_info: { file_id: row.fileId },
          product_link_info: { product_id: row.productId, title: row.productTitle },
        });
        taskId = sent.precheck.task_id;
      } catch (err) {
        if (!(err instanceof UpstreamError)) throw err;
        // Throttled, 5xx, expired token (refreshed meanwhile), no answer: the next try may pass.
        if (err.retryable) throw err;
        return progressOf(await refused(row, err));
      }
      return progressOf(await change(row, { officialTaskId: taskId, status: 'processing' }));
    },

    /** Reads the official result once and stores what changed; a final verdict ends the pre-check. */
    async pollPrecheckResult(input: { precheckId: string }): Promise<PrecheckProgress> {
      const row = await load(input.precheckId);
      if (isTerminalPrecheck(row.status) || !row.officialTaskId) return progressOf(row);
      const token = await accessToken(row);
      if (!token) return progressOf(await serviceError(row, seatGoneReason(row)));
      const task = (await getPrecheckResult(deps.upstream.shop, token, row.officialTaskId)).precheck_task;
      const violation = normalizeCheckStatus(task.violation_check_result?.status);
      const quality = normalizeCheckStatus(task.good_quality_check_result?.status);
      const issues = flattenIssues({
        violation: (task.violation_check_result?.issues ?? []).map((i) => flattenOfficial(i as Record<string, unknown>)),
        quality: (task.good_quality_check_result?.issues ?? []).map((i) => flattenOfficial(i as Record<string, unknown>)),
      });
      const status = precheckStatusOf(violation, quality);
      const unchanged =
        status === row.status &&
        violation === row.violation &&
        quality === row.quality &&
        JSON.stringify(issues) === JSON.stringify(row.issues);
      if (unchanged) return progressOf(row);
      return progressOf(await change(row, { status, violation, quality, issues, reason: verdictReason(violation, quality) }));
    },

    /**
     * Ends a pre-check the workflow could not take further. A dimension that already failed is a
     * verdict, so that pre-check ends failed; otherwise service_error with the workflow's reason.
     */
    async endPrecheck(input: { precheckId: string; reason: string }): Promise<PrecheckProgress> {
      const row = await load(input.precheckId);
      if (isTerminalPrecheck(row.status)) return progressOf(row);
      const violation = row.violation as 'passed' | 'failed' | null;
      const quality = row.quality as 'passed' | 'failed' | null;
      if (violation === 'failed' || quality === 'failed') {
        return progressOf(
          await change(row, { status: 'failed', reason: `${verdictReason(violation, quality)}; the other check gave no result in time` }),
        );
      }
      return progressOf(await serviceError(row, input.reason));
    },
  };

  /**
   * A refusal the shop answered and that retrying cannot fix. Only a content refusal is a verdict
   * (the violation dimension failed); the rest, the shop's own quota included, leave the material
   * unjudged: service_error, with the official reason. None of them holds a slot of our quota.
   */
  async function refused(row: PrecheckRow, err: UpstreamError): Promise<PrecheckRow> {
    const { officialCode } = err.failure;
    const code = officialCode === undefined ? '' : ` (official code ${officialCode})`;
    deps.logger.warn({ precheckId: row.id, officialCode, failureClass: err.failureClass }, 'pre-check refused by the shop');
    if (err.failureClass === 'content_violation') {
      return change(row, {
        status: 'failed',
        violation: 'failed',
        issues: flattenIssues({ violation: [{ officialCode: officialCode ?? null, suggestions: err.message }] }),
        reason: `the shop refused the pre-check's content${code}: ${err.message}`,
      });
    }
    if (err.failureClass === 'quota') {
      return serviceError(
        row,
        `the shop's own daily pre-check quota for ${row.accountId} is used up${code}: ${err.message}; it resets at the next UTC midnight, and this pre-check does not count against your quota`,
      );
    }
    return serviceError(row, `the shop refused the pre-check${code}: ${err.message}`);
  }
}
