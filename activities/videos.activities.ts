/**
 * The side effects of the video library: fetching a remote source into the media store (streamed,
 * capped, guarded against private addresses at every hop, resumed where a crashed attempt stopped),
 * handing a stored file to the shop's upload API, the status changes the upload and lifetime
 * workflows make, and the expiry repair's starts of missing lifetimes. A refusal that retrying
 * cannot change (4xx, too large, not a video, refused address) is a non-retryable failure whose
 * message is the record's failure reason; network errors and 5xx are retried, as are the database
 * and Temporal being away. Each failure carries in its details the spec code a caller waiting for
 * the upload is answered with, as upstream failures carry theirs (upstream-failure.ts).
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { Agent, request, type Dispatcher } from 'undici';
import type { ActivityDeps } from './deps';
import { findSeat } from '../core/db/repositories/seats';
import {
  clearStorageKey,
  expireVideo,
  findVideo,
  markLifetimeStarted,
  overdueVideos,
  transitionVideo,
  videosWithoutLifetime,
} from '../core/db/repositories/videos';
import { recordVideoOutcome } from '../core/events/library-events';
import { storageKeyOf, VIDEO_CONTENT_TYPES } from '../core/mappers/videos';
import { MediaStoreUnavailableError, MediaTooLargeError } from '../core/media/storage';
import { probeStoredVideo } from '../core/media/probe';
import { contactableLookup, refuseUnsafeUrl } from '../core/net/address-policy';
import { openCredentials } from '../core/upstream/credentials';
import { uploadVideoFile } from '../core/upstream/shop/content';
import { videoFormat } from '../core/media/formats';
import type { ErrorCode } from '../core/errors';
import { identityOf, rangeAnswer, rangeHeaders, resumeOf, type FetchHeartbeat } from './source-resume';
import { startVideoLifetime } from '../core/temporal/client';
import type { VideoExpiryRepairRound } from '../workflows/shared';

/** Redirects followed at most; each target is checked like the first URL. */
export const MAX_REDIRECTS = 5;
/** Failure type of a source the service will not take; the message is the record's failure reason. */
export const VIDEO_REJECTED = 'video.rejected';
/** Failure type of a source that may answer later (5xx, network); retried by the workflow's policy. */
export const VIDEO_SOURCE_UNAVAILABLE = 'video.source_unavailable';
/** Failure type of our own media store in trouble while a fetch wrote to it; retried like a source's. */
export const MEDIA_STORE_UNAVAILABLE = 'media.store_unavailable';
/** Heartbeats go out at least this often while a transfer runs, even when no bytes arrive. */
const HEARTBEAT_EVERY_MS = 5_000;
/** A 100 MB hand-off to the shop over a slow link. */
const SHOP_UPLOAD_TIMEOUT_MS = 10 * 60_000;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Records one repair query takes per round: a round stays well inside its activity timeout. */
const REPAIR_BATCH = 100;

/** The caller's source is at fault: 2001, as any refused input. */
const rejected = (reason: string) =>
  ApplicationFailure.create({ message: reason, type: VIDEO_REJECTED, nonRetryable: true, details: [{ code: 2001 satisfies ErrorCode }] });
/**
 * The source is in trouble, not the request: answered like an official API in trouble (the
 * source is the upstream of this call), 3002 when it did not deliver in time, 3001 otherwise.
 */
const unavailable = (reason: string, code: 3001 | 3002 = 3001) =>
  ApplicationFailure.create({
    message: reason,
    type: VIDEO_SOURCE_UNAVAILABLE,
    nonRetryable: false,
    details: [{ code: code satisfies ErrorCode }],
  });

export function createVideoActivities(deps: ActivityDeps) {
  // One agent per worker. Unless insecure sources are allowed (local development), every
  // connection's resolved address is checked at connect time, so DNS re-pointed to a private
  // address after the URL was checked is still refused.
  const agent = new Agent({ connect: { lookup: contactableLookup(deps.allowInsecureSourceUrls) } });

  /** The response of the URL after following redirects by hand, each hop checked again; `headers` go to every hop. */
  async function follow(
    url: string,
    signal: AbortSignal,
    timeoutMs: number,
    headers: Record<string, string> = {},
  ): Promise<Dispatcher.ResponseData> {
    let current = url;
    for (let hop = 0; ; hop++) {
      const refusal = await refuseUnsafeUrl(current, { allowInsecure: deps.allowInsecureSourceUrls });
      if (refusal) throw rejected(`sourceUrl ${hop === 0 ? '' : 'redirect '}refused: ${refusal}`);
      let res: Dispatcher.ResponseData;
      try {
        res = await request(current, {
          method: 'GET',
          dispatcher: agent,
          signal,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
          headers: { 'user-agent': 'vps-media-fetch/1', ...headers },
        });
      } catch (err) {
        throw networkFailure(err);
      }
      const location = res.headers.location;
      if (!REDIRECTS.has(res.statusCode) || typeof location !== 'string') return res;
      await res.body.dump();
      if (hop >= MAX_REDIRECTS) throw rejected(`more than ${MAX_REDIRECTS} redirects`);
      current = new URL(location, current).href;
    }
  }

  return {
    /** Where an upload starts: a remote record still needs its bytes; a direct upload has them. */
    async prepareVideoUpload(input: { videoId: string }): Promise<{ track: 'video' | 'shop'; needsFetch: boolean; active: boolean }> {
      const row = await findVideo(deps.db, input.videoId);
      if (!row) throw rejected(`video ${input.videoId} does not exist`);
      return { track: row.track, needsFetch: row.source === 'remote' && row.storageKey === null, active: row.status === 'processing' };
    },

    /**
     * Streams the record's sourceUrl into the media store and checks it is a video. The store keeps
     * what arrived in pieces a later attempt can use, and each heartbeat names them: an attempt
     * that follows one cut short (a worker killed, the connection lost) asks the source for the
     * rest with a range request, and starts over when the source cannot give it (source-resume.ts).
     */
    async fetchVideoSource(input: { videoId: string; maxBytes: number; timeoutMs: number }): Promise<{ stored: boolean }> {
      const ctx = Context.current();
      const previous = resumeOf(ctx.info.heartbeatDetails);
      const key = storageKeyOf(input.videoId);
      const row = await findVideo(deps.db, input.videoId);
      if (!row?.sourceUrl || row.status !== 'processing') {
        // Deleted while an earlier attempt had stored part of it: that part goes too.
        if (previous) await deps.media.discardResumable(key);
        return { stored: false };
      }
      const log = deps.logger.child({ videoId: row.id });
      const signal = AbortSignal.any([ctx.cancellationSignal, AbortSignal.timeout(input.timeoutMs)]);
      // Until this attempt stores more, its heartbeats keep naming what the last one stored: a retry
      // after this attempt failed early still finds it.
      const progress: FetchHeartbeat = previous ? { bytes: previous.point.offset, resume: previous } : { bytes: 0 };
      // Well inside the heartbeat timeout whatever it is set to, so a live fetch is never taken for a dead one.
      const beatEveryMs = Math.min(HEARTBEAT_EVERY_MS, (ctx.info.heartbeatTimeoutMs || Infinity) / 3);
      const beat = setInterval(() => ctx.heartbeat({ ...progress }), beatEveryMs);
      try {
        let writing;
        try {
          writing = await deps.media.resumableWrite(key, previous?.point);
        } catch (err) {
          throw networkFailure(err, signal);
        }
        if (writing.lostResume)
          log.warn({ offset: previous?.point.offset, reason: writing.lostResume }, `${writing.lostResume}; the fetch starts over`);
        const startOver = () => {
          writing.restart();
          progress.bytes = 0;
          delete progress.resume;
        };
        if (writing.offset === 0) startOver();
        let source = writing.offset > 0 ? previous!.source : undefined;
        let res = await follow(row.sourceUrl, signal, input.timeoutMs, source ? rangeHeaders(writing.offset, source) : {});
        let length: number | undefined;
        if (source) {
          const answer = rangeAnswer(res.statusCode, res.headers, writing.offset, source);
          if (answer?.resumes) {
            log.info({ offset: writing.offset }, 'the fetch goes on from where the interrupted attempt stopped');
            length = answer.length;
          } else if (answer) {
            log.warn({ offset: writing.offset, status: res.statusCode, reason: answer.reason }, `${answer.reason}; the fetch starts over`);
            startOver();
            source = undefined;
            if (!answer.whole) {
              await res.body.dump();
              res = await follow(row.sourceUrl, signal, input.timeoutMs);
            }
          }
        }
        if (res.statusCode < 200 || res.statusCode > 299) {
          await res.body.dump();
          const reason = `sourceUrl answered HTTP ${res.statusCode}`;
          // The source may recover from its own failure; a 4xx says the request is wrong.
          throw res.statusCode >= 500 || res.statusCode === 429 ? unavailable(reason) : rejected(reason);
        }
        if (!source) {
          source = identityOf(res.headers);
          length = source.length;
        }
        if (length !== undefined && length > input.maxBytes) {
          // Reads nothing more: the connection is dropped rather than drained.
          await res.body.dump({ limit: 0 });
          throw rejected(`file: larger than the limit of ${input.maxBytes} bytes (the source declares ${length})`);
        }
        const identity = source;
        let stored;
        try {
          stored = await writing.complete(res.body, {
            maxBytes: input.maxBytes,
            signal,
            onProgress: (bytes) => {
              progress.bytes = bytes;
            },
            onCheckpoint: (point) => {
              progress.resume = { point, source: identity };
              ctx.heartbeat({ ...progress });
            },
          });
        } catch (err) {
          if (err instanceof MediaTooLargeError) throw rejected(`file: larger than the limit of ${input.maxBytes} bytes`);
          throw networkFailure(err, signal);
        }
        const container = await videoFormat(stored.head);
        if (!container) {
          await deps.media.remove(key);
          throw rejected('file: is not a recognised video container (MP4, MOV, WEBM, …)');
        }
        const probe = await probeStoredVideo(deps.media, key, container, stored.sizeBytes);
        const updated = await transitionVideo(deps.db, row.id, ['processing'], {
          storageKey: key,
          sizeBytes: stored.sizeBytes,
          sha256: stored.sha256,
          container,
          ...(probe ? { details: { ...row.details, probe } } : {}),
        });
        // Deleted while the bytes arrived: keep nothing.
        if (!updated) await deps.media.remove(key);
        return { stored: updated !== undefined };
      } finally {
        clearInterval(beat);
      }
    },

    /** Uploads the stored file to the shop for a file id; the shop then holds the bytes, so ours go. */
    async handOffToShop(input: { videoId: string }): Promise<{ fileId?: string }> {
      const row = await findVideo(deps.db, input.videoId);
      if (!row || row.status !== 'processing') {
        // A retry of a hand-off that wrote its file id and stopped before its event: it logs it now.
        await recordVideoOutcome(deps.events, row);
        return row?.status === 'available' && row.fileId ? { fileId: row.fileId } : {};
      }
      if (!row.storageKey) throw rejected('the stored file is missing');
      const seat = await findSeat(deps.db, row.seatId);
      if (!seat?.accountId || !seat.credentialsSealed) throw rejected(`seat ${row.seatId} is no longer bound to an account`);
      const { accessToken } = openCredentials(deps.sealedBox, seat.id, seat.credentialsSealed);
      const data = await uploadVideoFile(
        deps.upstream.shop,
        accessToken,
        {
          fileName: row.fileName ?? `${row.id}.${(row.container ?? 'mp4').toLowerCase()}`,
          contentType: VIDEO_CONTENT_TYPES[row.container ?? ''] ?? 'application/octet-stream',
          stream: await deps.media.open(row.storageKey),
          ...(row.sizeBytes !== null ? { size: row.sizeBytes } : {}),
        },
        { totalMs: SHOP_UPLOAD_TIMEOUT_MS },
      );
      const fileId = data.video_file.id;
      // Removed before the record says available, so a reader never finds both.
      await deps.media.remove(row.storageKey);
      const updated = await transitionVideo(deps.db, row.id, ['processing'], { status: 'available', fileId, storageKey: null });
      if (!updated) await clearStorageKey(deps.db, row.id);
      else await recordVideoOutcome(deps.events, updated);
      return { fileId };
    },

    /** Video track: the URL is issued now and lives urlTtlMs; undefined when the record was deleted meanwhile. */
    async makeVideoAvailable(input: { videoId: string; urlTtlMs: number }): Promise<{ expiresAtMs?: number }> {
      const now = new Date();
      // A retry of a step that made the record available and stopped before its event finds it so.
      const row =
        (await transitionVideo(deps.db, input.videoId, ['processing'], {
          status: 'available',
          urlIssuedAt: now,
          expiresAt: new Date(now.getTime() + input.urlTtlMs),
        })) ?? (await findVideo(deps.db, input.videoId));
      if (row?.status !== 'available' || !row.expiresAt) return {};
      await recordVideoOutcome(deps.events, row);
      return { expiresAtMs: row.expiresAt.getTime() };
    },

    /** The upload failed: the reason lands on the record, and no partial bytes stay behind. */
    async failVideoUpload(input: { videoId: string; reason: string }): Promise<void> {
      // The record first: when the failure is the store's own outage, the bytes cannot go until it
      // is back (this activity is retried until then), and the caller must not wait for that.
      const failed =
        (await transitionVideo(deps.db, input.videoId, ['uploading', 'processing'], {
          status: 'failed',
          failureReason: input.reason,
          storageKey: null,
        })) ?? (await findVideo(deps.db, input.videoId));
      if (failed?.status === 'failed') await recordVideoOutcome(deps.events, failed);
      // What a fetch stored for its next attempt too: there is none now.
      await deps.media.discardResumable(storageKeyOf(input.videoId));
      await deps.media.remove(storageKeyOf(input.videoId));
    },

    /**
     * One round of the expiry repair: every available record with no confirmed lifetime gets one
     * (its start failed at upload, or the process died before it), and every record a working
     * timer would have expired by now gets its lifetime started again, which expires it at once.
     * Starts are idempotent by workflow id: a lifetime already running is found, not doubled. A
     * start Temporal refuses is logged and tried again next round; the others go ahead.
     */
    async repairVideoLifetimes(input: { graceMs: number }): Promise<VideoExpiryRepairRound> {
      // The repair's own queue: the worker that runs the repair also runs the lifetimes.
      const { taskQueue } = Context.current().info;
      const missing = await videosWithoutLifetime(deps.db, { graceMs: input.graceMs, limit: REPAIR_BATCH });
      const overdue = await overdueVideos(deps.db, { graceMs: input.graceMs, limit: REPAIR_BATCH });
      const client = await deps.events.temporalClient();
      let confirmed = 0;
      let failed = 0;
      for (const row of [...missing, ...overdue]) {
        try {
          await startVideoLifetime(client, taskQueue, row);
        } catch (err) {
          failed += 1;
          deps.logger.error({ err, videoId: row.id }, 'could not start the lifetime of a video; the next repair round tries again');
          continue;
        }
        await markLifetimeStarted(deps.db, row.id);
        confirmed += 1;
      }
      if (confirmed + failed > 0)
        deps.logger.info({ missing: missing.length, overdue: overdue.length, confirmed, failed }, 'video expiry repair round');
      // A full batch of records without a lifetime means more wait; overdue ones whose lifetime
      // runs but is stuck would come back every round, so they never make the repair hurry.
      return { confirmed, failed, more: missing.length === REPAIR_BATCH && failed === 0 };
    },

    /** The lifetime ended (or a delete ended it early): expired, and the bytes removed. */
    async expireVideoFile(input: { videoId: string }): Promise<void> {
      // The bytes go first, so whoever reads the record expired finds them gone; meanwhile the
      // media route answers a missing file as not found.
      await deps.media.remove(storageKeyOf(input.videoId));
      await expireVideo(deps.db, input.videoId);
      await clearStorageKey(deps.db, input.videoId);
    },
  };
}

/** A transfer that broke: refused addresses are final, everything else may work on a retry. */
function networkFailure(err: unknown, signal?: AbortSignal): unknown {
  if (err instanceof ApplicationFailure) return err;
  // Our store, not the source: the record must not blame the caller's URL for it.
  if (err instanceof MediaStoreUnavailableError) {
    return ApplicationFailure.create({
      message: err.message,
      type: MEDIA_STORE_UNAVAILABLE,
      nonRetryable: false,
      details: [{ code: 5000 satisfies ErrorCode }],
    });
  }
  const code = (err as NodeJS.ErrnoException).code ?? (err as { cause?: NodeJS.ErrnoException }).cause?.code;
  if (code === 'EADDRNOTPUBLIC') return rejected(`sourceUrl refused: ${(err as Error).message}`);
  if (signal?.aborted && signal.reason instanceof DOMException && signal.reason.name === 'TimeoutError') {
    return unavailable('sourceUrl did not deliver the file in time', 3002);
  }
  return unavailable(`sourceUrl could not be fetched: ${(err as Error).message}`);
}
