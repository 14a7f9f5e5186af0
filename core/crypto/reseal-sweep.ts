/**
 * Seals again, under the current key, the stored secrets that are not under it: upstream
 * credentials and webhook signing keys sealed under a key now only accepted (after a rotation) or
 * in the format from before key ids, and signing keys stored plain from before they were sealed.
 * Core runs it at its start and then every VPS_RESEAL_INTERVAL_MS, so a rotation completes without
 * anyone running anything, and an operator knows from its log when an old key may be dropped.
 *
 * Idempotent and safe beside other cores and writers: each value is replaced only if the row still
 * holds what was opened (a refresh or a rotation meanwhile wrote a newer one, which wins), and a
 * value that no key held opens is left as it is and reported, never lost.
 */
import type { Db } from '../db/client';
import { replaceSealedCredentials, seatCredentialsNotUnder } from '../db/repositories/seats';
import { replaceSealedSigningKey, SEALED_KEY_COLUMNS, signingKeysNotUnder } from '../db/repositories/webhook-endpoints';
import { resealedSigningKey } from '../events/signing-keys';
import type { Logger } from '../logger';
import { resealedCredentials } from '../upstream/credentials';
import { SealedValueError, type SealedBox } from './sealed-box';

/** Rows read per statement: the sweep walks every table in id order, a page at a time. */
const PAGE = 200;

/** Passes of one sweep at most: the last finds nothing to do unless writers keep using an old key. */
const MAX_PASSES = 3;

/** Unopenable rows named in one log line at most (the count says how many in all). */
const NAMED_IN_LOG = 10;

export interface ResealReport {
  /** Seat credentials and signing keys sealed again (or sealed for the first time). */
  resealed: { seatCredentials: number; signingKeys: number };
  /** Values no key held opens, by row: `seat <id>` or `webhook endpoint <id>`. */
  unopenable: string[];
}

/** One pass over every stored secret. */
export async function resealStoredSecrets(db: Db, box: SealedBox): Promise<ResealReport> {
  const report: ResealReport = { resealed: { seatCredentials: 0, signingKeys: 0 }, unopenable: [] };
  for (let after = ''; ;) {
    const rows = await seatCredentialsNotUnder(db, box.currentPrefix, after, PAGE);
    for (const row of rows) {
      const sealed = attempt(() => resealedCredentials(box, row.id, row.credentialsSealed), report, `seat ${row.id}`);
      if (sealed && (await replaceSealedCredentials(db, row.id, row.credentialsSealed, sealed))) report.resealed.seatCredentials++;
    }
    if (rows.length < PAGE) break;
    after = rows[rows.length - 1]!.id;
  }
  for (let after = ''; ;) {
    const rows = await signingKeysNotUnder(db, box.currentPrefix, after, PAGE);
    for (const row of rows) {
      for (const which of SEALED_KEY_COLUMNS) {
        const value = row[which];
        if (value === null) continue;
        const sealed = attempt(() => resealedSigningKey(box, row.id, value), report, `webhook endpoint ${row.id}`);
        if (sealed && (await replaceSealedSigningKey(db, row.id, which, value, sealed))) report.resealed.signingKeys++;
      }
    }
    if (rows.length < PAGE) break;
    after = rows[rows.length - 1]!.id;
  }
  return report;
}

/** The value sealed anew, or undefined when it is current or cannot be opened (then reported). */
function attempt(reseal: () => string | undefined, report: ResealReport, row: string): string | undefined {
  try {
    return reseal();
  } catch (err) {
    if (!(err instanceof SealedValueError)) throw err;
    // Kept as a name only: the reason is the same for every value of a key not held here.
    if (!report.unopenable.includes(row)) report.unopenable.push(row);
    return undefined;
  }
}

/** Runs the sweep now and every `intervalMs`, logging what it did; stop() ends it. */
export function startResealSweep(db: Db, box: SealedBox, opts: { intervalMs: number; logger: Logger }): { stop(): void } {
  const { logger } = opts;
  logger.info({ keyId: box.keyId, accepted: box.acceptedKeyIds }, `stored secrets are sealed under key ${box.keyId}`);
  let running: Promise<void> | undefined;
  // Said once per change of state, not every pass: the line an operator waits for before dropping a key.
  let saidAllCurrent = false;
  const sweep = async () => {
    try {
      // Passes until one finds nothing to do, so "every stored secret" is what a pass saw, not
      // what it changed (a writer still on the old key may have written meanwhile); a few at most.
      let report = await resealStoredSecrets(db, box);
      const resealed = { ...report.resealed };
      for (let pass = 1; pass < MAX_PASSES && report.resealed.seatCredentials + report.resealed.signingKeys > 0; pass++) {
        report = await resealStoredSecrets(db, box);
        resealed.seatCredentials += report.resealed.seatCredentials;
        resealed.signingKeys += report.resealed.signingKeys;
      }
      const { unopenable } = report;
      const changed = resealed.seatCredentials + resealed.signingKeys;
      const settled = report.resealed.seatCredentials + report.resealed.signingKeys === 0;
      if (changed > 0) logger.info({ keyId: box.keyId, resealed }, `sealed ${changed} stored secrets again under key ${box.keyId}`);
      if (unopenable.length > 0) {
        logger.error(
          { keyId: box.keyId, count: unopenable.length, rows: unopenable.slice(0, NAMED_IN_LOG) },
          `${unopenable.length} stored secrets open with no key held (VPS_ENCRYPTION_KEY, VPS_ENCRYPTION_KEYS_ACCEPTED): they stay as they are until the key that sealed them is configured`,
        );
        saidAllCurrent = false;
      } else if (settled && (changed > 0 || !saidAllCurrent)) {
        logger.info({ keyId: box.keyId }, `every stored secret is sealed under key ${box.keyId}`);
        saidAllCurrent = true;
      }
    } catch (err) {
      // The database being away for a while is reported by the requests that need it; try next time.
      logger.warn({ err }, 'could not seal stored secrets again under the current key; the next sweep tries again');
    }
  };
  const tick = () => {
    // One pass at a time: a slow pass is not overlapped by the next.
    running ??= sweep().finally(() => {
      running = undefined;
    });
  };
  const timer = setInterval(tick, opts.intervalMs);
  timer.unref();
  tick();
  return { stop: () => clearInterval(timer) };
}
