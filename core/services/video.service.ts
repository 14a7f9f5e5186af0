/**
 * The video library: records of uploaded videos per seat. A direct upload is split in two calls
 * around the gateway's streaming of the file (BeginUpload authorizes and opens the record,
 * CompleteUpload registers what was stored); a remote upload is a workflow, which the request
 * waits for up to `fetchWaitMs` so that most answers carry the result. The video track yields a
 * signed media URL valid for `urlTtlMs`, the shop track a file id from the shop's upload API.
 */
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type {
  BeginUploadRequest,
  CompleteUploadRequest,
  CreateRemoteUploadRequest,
  DeleteVideoRequest,
  GetVideoRequest,
  ListVideosRequest,
  OpenMediaRequest,
  VideoService,
} from '../../gen/vps/video/v1/video_pb';
import { customerOf } from '../context';
import type { Db } from '../db/client';
import { findCustomerSeatByAccount, findSeat, listSeatsOfCustomer, type SeatRow } from '../db/repositories/seats';
import {
  clearStorageKey,
  findVideo,
  findVideoOfCustomer,
  insertVideo,
  listVideosOfCustomer,
  markLifetimeStarted,
  softDeleteVideo,
  transitionVideo,
  type VideoRow,
} from '../db/repositories/videos';
import { VIDEO_STATUSES, type VideoStatus } from '../db/schema';
import { ApiError, invalidField, isErrorCode } from '../errors';
import { recordVideoOutcome } from '../events/library-events';
import type { EventRecorder } from '../events/recorder';
import type { Logger } from '../logger';
import { newId } from '../ids';
import { servingStatusOf, storageKeyOf, toVideo, VIDEO_CONTENT_TYPES } from '../mappers/videos';
import { MediaStoreUnavailableError, type MediaStore } from '../media/storage';
import { probeStoredVideo } from '../media/probe';
import type { TokenSigner } from '../media/signed-tokens';
import { MAX_URL_LENGTH, refuseUnsafeUrl, type Resolver } from '../net/address-policy';
import type { VideoUploadInput, VideoUploadResult } from '../../workflows/shared';
import { endVideoLifetime, startVideoLifetime, startVideoUpload } from '../temporal/client';

export interface VideoSettings {
  /** Largest video accepted, in bytes. */
  maxBytes: number;
  /** Validity of a video track URL; the record expires with it. */
  urlTtlMs: number;
  /** How long a direct upload waits for the shop hand-off before answering processing. */
  uploadWaitMs: number;
  /** How long a remote upload waits for its workflow (fetch, and shop hand-off) before answering processing. */
  fetchWaitMs: number;
  /** Time allowed to fetch a remote source. */
  remoteTimeoutMs: number;
  /**
   * How long a fetch's heartbeats may stop before its attempt counts as dead and the next one
   * resumes it: how soon a fetch a crashed worker held goes on elsewhere. The workflow's 30 s when
   * not given.
   */
  fetchHeartbeatTimeoutMs?: number;
}

/** The shop's own limit for a video file (its upload API refuses larger ones). */
export const SHOP_VIDEO_MAX_BYTES = 100 * 1024 * 1024;
/** An upload ticket outlives the slowest upload we accept: 1 GiB at about 100 kbit/s. */
export const UPLOAD_TICKET_TTL_MS = 24 * 3_600_000;
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;
const MAX_FILE_NAME = 255;
const MAX_ACCOUNT = 255;
const VIDEO_ID = /^vid_[0-9a-z]{26}$/;
/** Seats named in the message that asks which one: enough to choose from; GET /v1/seats has them all. */
const MAX_SEATS_NAMED = 10;
/** Where each upload takes its target fields, for the messages that ask for them. */
const TARGET_FIELDS_GO = { multipart: 'as a field of the form', remote: 'in the JSON body' } as const;

export class VideoHandlers implements ServiceImpl<typeof VideoService> {
  constructor(
    readonly deps: {
      db: Db;
      media: MediaStore;
      signer: TokenSigner;
      publicUrl: string;
      temporalClient: () => Promise<Client>;
      taskQueue: string;
      settings: VideoSettings;
      allowInsecureSourceUrls: boolean;
      logger: Logger;
      /** Where a record's outcome is logged (vplat.video.available / failed), as the upload workflow's steps log theirs. */
      events: EventRecorder;
      resolve?: Resolver;
    },
  ) {}

  private message(row: VideoRow) {
    return toVideo(row, this.deps);
  }

  /** The largest file the seat's library takes. */
  private maxBytesFor(track: SeatRow['track']): number {
    return track === 'shop' ? Math.min(this.deps.settings.maxBytes, SHOP_VIDEO_MAX_BYTES) : this.deps.settings.maxBytes;
  }

  /**
   * The seat an upload targets, named by id or by its bound account, or else the caller's only
   * bound seat. An id that is unknown or another customer's is 1005; an account none of the
   * caller's seats holds, or an unbound seat, 1007.
   */
  private async targetSeat(
    customerId: string,
    req: { seatId: string; account: string },
    upload: keyof typeof TARGET_FIELDS_GO,
  ): Promise<SeatRow> {
    if (req.seatId && req.account) throw invalidField('seatId', 'give either seatId or account, not both');
    if (!req.seatId && !req.account) return this.onlyBoundSeat(customerId, TARGET_FIELDS_GO[upload]);
    if (req.account) {
      // Errors name the account in the message only: `data` travels as a header, which cannot carry every character.
      if (req.account.length > MAX_ACCOUNT) throw invalidField('account', `must be at most ${MAX_ACCOUNT} characters`);
      const seat = await findCustomerSeatByAccount(this.deps.db, customerId, req.account);
      if (!seat) throw new ApiError(1007, `account ${req.account} is not bound to any of your seats`);
      return seat;
    }
    const seat = await findSeat(this.deps.db, req.seatId);
    if (!seat || seat.customerId !== customerId) throw new ApiError(1005, `seat ${req.seatId} does not exist`);
    if (!seat.accountId)
      throw new ApiError(1007, `seat ${seat.id} is not bound to an account; bind it first`, { data: { seatId: seat.id } });
    return seat;
  }

  /**
   * With no seatId or account, the upload goes to the one library it can go to: the caller's only
   * bound seat. Several are ambiguous (2001, naming them and the fields to send); none is the
   * binding rule's 1007, since no field the caller could send would do.
   */
  private async onlyBoundSeat(customerId: string, fieldsGo: string): Promise<SeatRow> {
    const seats = await listSeatsOfCustomer(this.deps.db, customerId);
    const bound = seats.filter((s) => s.accountId !== null);
    if (bound.length === 1) return bound[0]!;
    if (bound.length === 0) {
      const yours =
        seats.length === 0
          ? 'you have no seats'
          : seats.length === 1
            ? 'your seat is not bound to an account'
            : `none of your ${seats.length} seats is bound to an account`;
      throw new ApiError(1007, `no seat to upload to: ${yours}; bind one first (GET /v1/seats lists yours), then upload`);
    }
    const named = bound.slice(0, MAX_SEATS_NAMED).map((s) => `${s.id} (${s.track}, account ${s.accountId})`);
    const more = bound.length > named.length ? `, and ${bound.length - named.length} more: GET /v1/seats` : '';
    // Accounts in the message only: `data` travels as a header (see ApiError); seat ids are ours and plain.
    throw new ApiError(
      2001,
      `seatId: is required when you have more than one bound seat; send seatId (one of: ${named.join(', ')}${more}) or account, ${fieldsGo}`,
      {
        data: { field: 'seatId', seatIds: bound.slice(0, MAX_SEATS_NAMED).map((s) => s.id) },
      },
    );
  }

  async beginUpload(req: BeginUploadRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    const seat = await this.targetSeat(customerId, req, 'multipart');
    if (req.fileName.length > MAX_FILE_NAME) throw invalidField('file', `file name must be at most ${MAX_FILE_NAME} characters`);
    if (req.fileName.includes('\u0000')) throw invalidField('file', 'file name must not contain the NUL character');
    const id = newId('vid');
    const row = await insertVideo(this.deps.db, {
      id,
      customerId,
      seatId: seat.id,
      track: seat.track,
      status: 'uploading',
      source: 'multipart',
      fileName: req.fileName || null,
    });
    const expires = Math.floor((Date.now() + UPLOAD_TICKET_TTL_MS) / 1000);
    return {
      video: this.message(row),
      storageKey: storageKeyOf(id),
      maxBytes: BigInt(this.maxBytesFor(seat.track)),
      ticket: this.deps.signer.ticket('upload', id, expires),
    };
  }

  async completeUpload(req: CompleteUploadRequest) {
    const id = this.deps.signer.openTicket('upload', req.ticket);
    if (!id) throw new ApiError(1001, 'upload ticket invalid or expired');
    const row = await findVideo(this.deps.db, id);
    if (!row) throw new ApiError(1005, `video ${id} does not exist`);
    const key = storageKeyOf(id);
    if (row.status !== 'uploading') {
      // Deleted while the bytes were arriving: nothing may keep them.
      if (row.deletedAt) await this.deps.media.remove(key);
      throw invalidField('ticket', `the upload of video ${id} is already complete (status ${row.status})`);
    }
    const refusal = req.failureReason || (req.container ? undefined : 'file: is not a recognised video container (MP4, MOV, WEBM, …)');
    const stored = refusal ? undefined : await this.deps.media.size(key);
    const reason = refusal ?? (stored === Number(req.sizeBytes) ? undefined : 'file: the stored file does not match the upload');
    if (reason) {
      // The record fails first, so a store that is down now cannot leave it `uploading`.
      const failed = await transitionVideo(this.deps.db, id, ['uploading'], { status: 'failed', failureReason: reason, ...fileFacts(req) });
      await this.announce(failed);
      await this.deps.media.remove(key).catch((err: unknown) => {
        // The caller's answer is the refusal either way; a store that is down now keeps an object
        // no record points at (a failed write leaves none: only a file refused after it was stored).
        if (!(err instanceof MediaStoreUnavailableError)) throw err;
        this.deps.logger.warn({ err, videoId: id }, 'could not remove the file of a refused upload');
      });
      throw new ApiError(2001, reason, { data: { field: 'file', videoId: id } });
    }
    const probe = await probeStoredVideo(this.deps.media, key, req.container, Number(req.sizeBytes));
    const file = { storageKey: key, ...fileFacts(req), ...(probe ? { details: { ...row.details, probe } } : {}) };
    if (row.track === 'video') {
      const now = new Date();
      const available = await transitionVideo(this.deps.db, id, ['uploading'], {
        ...file,
        status: 'available',
        urlIssuedAt: now,
        expiresAt: new Date(now.getTime() + this.deps.settings.urlTtlMs),
      });
      if (!available) return { video: this.message((await findVideo(this.deps.db, id))!) };
      await this.announce(available);
      await this.startLifetime(available);
      return { video: this.message(available) };
    }
    const processing = await transitionVideo(this.deps.db, id, ['uploading'], { ...file, status: 'processing' });
    if (!processing) return { video: this.message((await findVideo(this.deps.db, id))!) };
    const handle = await this.failUnless(processing, () => this.startUpload(processing));
    refuseFailed(await this.outcomeWithin(handle, this.deps.settings.uploadWaitMs), id);
    return { video: this.message((await findVideo(this.deps.db, id))!) };
  }

  async createRemoteUpload(req: CreateRemoteUploadRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    if (!req.sourceUrl) throw invalidField('sourceUrl', 'is required');
    if (req.sourceUrl.length > MAX_URL_LENGTH) throw invalidField('sourceUrl', `must be at most ${MAX_URL_LENGTH} characters`);
    // The seat first, as on every path (an account error says the account reference is wrong);
    // it also spares a DNS lookup for a request that cannot go ahead.
    const seat = await this.targetSeat(customerId, req, 'remote');
    const refusal = await refuseUnsafeUrl(req.sourceUrl, { allowInsecure: this.deps.allowInsecureSourceUrls, resolve: this.deps.resolve });
    if (refusal) throw invalidField('sourceUrl', refusal);
    const url = new URL(req.sourceUrl);
    const row = await insertVideo(this.deps.db, {
      id: newId('vid'),
      customerId,
      seatId: seat.id,
      track: seat.track,
      status: 'processing',
      source: 'remote',
      sourceUrl: url.href,
      fileName: fileNameOf(url),
    });
    const handle = await this.failUnless(row, () => this.startUpload(row));
    // The spec's answer carries videoUrl or fileId, so the request waits for them a while.
    refuseFailed(await this.outcomeWithin(handle, this.deps.settings.fetchWaitMs), row.id, 'sourceUrl');
    return { video: this.message((await findVideo(this.deps.db, row.id))!) };
  }

  async listVideos(req: ListVideosRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    const limit = req.limit === 0 ? DEFAULT_PAGE_SIZE : req.limit;
    if (limit < 1 || limit > MAX_PAGE_SIZE) throw invalidField('limit', `must be 1 to ${MAX_PAGE_SIZE}`);
    if (req.cursor && !VIDEO_ID.test(req.cursor)) throw invalidField('cursor', 'is not a cursor this list returned');
    if (req.status && !(VIDEO_STATUSES as readonly string[]).includes(req.status)) {
      throw invalidField('status', `must be one of ${VIDEO_STATUSES.join(', ')}`);
    }
    const rows = await listVideosOfCustomer(this.deps.db, {
      customerId,
      limit: limit + 1,
      ...(req.cursor ? { beforeId: req.cursor } : {}),
      ...(req.status ? { status: req.status as VideoStatus } : {}),
      ...(req.seatId ? { seatId: req.seatId } : {}),
    });
    const page = rows.slice(0, limit);
    return { videos: page.map((r) => this.message(r)), nextCursor: rows.length > limit ? page[page.length - 1]!.id : '' };
  }

  async getVideo(req: GetVideoRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    return { video: this.message(await this.ownVideo(customerId, req.id)) };
  }

  async deleteVideo(req: DeleteVideoRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    const row = await this.ownVideo(customerId, req.id);
    // Deleting again answers the same record: the delete is done.
    if (row.deletedAt) return { video: this.message(row) };
    const deleted = (await softDeleteVideo(this.deps.db, customerId, row.id)) ?? (await this.ownVideo(customerId, req.id));
    // The URL stops working at once (the record is expired); the bytes go now rather than at the
    // lifetime's end, and the lifetime workflow, if one runs, ends early.
    await this.deps.media.remove(storageKeyOf(row.id));
    await clearStorageKey(this.deps.db, row.id);
    if (row.urlIssuedAt) await this.endLifetime(row.id);
    return { video: this.message({ ...deleted, storageKey: null }) };
  }

  async openMedia(req: OpenMediaRequest) {
    const expires = Number(req.expires);
    const notFound = () => new ApiError(1005, 'media URL invalid, expired, or the video is no longer available');
    if (!VIDEO_ID.test(req.videoId) || !this.deps.signer.verify('media', req.videoId, expires, req.signature)) throw notFound();
    const row = await findVideo(this.deps.db, req.videoId);
    // By its expiry time too, not only its status: a record whose timer has not run yet is expired all the same.
    if (!row || row.track !== 'video' || servingStatusOf(row) !== 'available' || !row.storageKey || row.sizeBytes === null)
      throw notFound();
    return {
      storageKey: row.storageKey,
      sizeBytes: BigInt(row.sizeBytes),
      contentType: VIDEO_CONTENT_TYPES[row.container ?? ''] ?? 'application/octet-stream',
      sha256: row.sha256 ?? '',
    };
  }

  private async ownVideo(customerId: string, id: string): Promise<VideoRow> {
    const row = VIDEO_ID.test(id) ? await findVideoOfCustomer(this.deps.db, customerId, id) : undefined;
    // No echo of the id in `data`: it travels as a header, which cannot carry every character a client may send.
    if (!row) throw new ApiError(1005, `video ${id} does not exist`);
    return row;
  }

  /**
   * Runs the start of a record's upload workflow; if Temporal cannot take it, the record fails and
   * its bytes go, rather than staying processing with nothing to move it on.
   */
  private async failUnless<T>(row: VideoRow, start: () => Promise<T>): Promise<T> {
    try {
      return await start();
    } catch (err) {
      const failed = await transitionVideo(this.deps.db, row.id, [row.status], {
        status: 'failed',
        failureReason: 'the upload could not be registered; upload again',
        storageKey: null,
      });
      await this.announce(failed);
      await this.deps.media.remove(storageKeyOf(row.id));
      throw err;
    }
  }

  private async startUpload(row: VideoRow) {
    const input: VideoUploadInput = {
      videoId: row.id,
      maxBytes: this.maxBytesFor(row.track),
      fetchTimeoutMs: this.deps.settings.remoteTimeoutMs,
      urlTtlMs: this.deps.settings.urlTtlMs,
      ...(this.deps.settings.fetchHeartbeatTimeoutMs ? { fetchHeartbeatTimeoutMs: this.deps.settings.fetchHeartbeatTimeoutMs } : {}),
    };
    return startVideoUpload(await this.deps.temporalClient(), this.deps.taskQueue, row, input);
  }

  /**
   * Starts the lifetime of a record just made available, and records that it runs. A start that
   * fails does not fail the upload: the file is stored and the record usable, the media URL and
   * publishing judge it by its expiry time as well as its status (servingStatusOf), and the
   * workers' expiry repair starts the missing timer within VIDEO_EXPIRY_REPAIR_INTERVAL_MS plus
   * its grace. Refusing the upload instead would throw away a good file over a timer the service
   * can start later by itself.
   */
  /**
   * Logs the outcome of a record this request ended. The row is written first and the event is not
   * in its transaction, so an event store that refuses now must not turn the caller's upload into
   * an error, nor skip what follows (the lifetime, the removal of refused bytes): the workers'
   * repair round logs any outcome still missing after VIDEO_EXPIRY_REPAIR_GRACE_MS.
   */
  private async announce(row: VideoRow | undefined): Promise<void> {
    try {
      await recordVideoOutcome(this.deps.events, row);
    } catch (err) {
      this.deps.logger.error({ err, videoId: row?.id }, 'could not log the outcome event of a video; the repair round logs it');
    }
  }

  private async startLifetime(row: VideoRow): Promise<void> {
    try {
      await startVideoLifetime(await this.deps.temporalClient(), this.deps.taskQueue, row);
    } catch (err) {
      this.deps.logger.warn({ err, videoId: row.id }, 'could not start the lifetime of a video; the expiry repair will');
      return;
    }
    await markLifetimeStarted(this.deps.db, row.id);
  }

  private async endLifetime(videoId: string): Promise<void> {
    // Its lifetime may have ended already (or never started): the record and file are dealt with above.
    await endVideoLifetime(await this.deps.temporalClient(), videoId);
  }

  /**
   * How the upload's workflow ended, if it ends within `waitMs`; undefined past that, and the
   * caller reads the record as it is. Only a courtesy, as the publish intake's wait for its share
   * id: the upload is under way whatever happens here, so a wait that fails (Temporal
   * unreachable) ends with the record as it is rather than failing a request whose work goes on.
   */
  private async outcomeWithin(handle: WorkflowHandle, waitMs: number): Promise<VideoUploadResult | undefined> {
    const bound = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => {
        // Ends the long poll behind result() too, rather than leaving it open until the upload ends.
        bound.abort();
        resolve(undefined);
      }, waitMs);
    });
    const client = await this.deps.temporalClient();
    const result = client
      .withAbortSignal(bound.signal, () => handle.result() as Promise<VideoUploadResult>)
      .catch((err: unknown) => {
        if (!bound.signal.aborted)
          this.deps.logger.warn(
            { err, workflowId: handle.workflowId },
            'could not wait for an upload workflow; answering with the record as it is',
          );
        return undefined;
      });
    try {
      return await Promise.race([result, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * An upload that failed while its request waited is that request's failure, answered with the
 * code the failing activity gave it (5000 without one); the record keeps the reason too. A 2001
 * names the caller's input that caused it, where there is one.
 */
function refuseFailed(outcome: VideoUploadResult | undefined, videoId: string, input?: string): void {
  if (outcome?.status !== 'failed') return;
  const code = outcome.failureCode !== undefined && isErrorCode(outcome.failureCode) ? outcome.failureCode : 5000;
  throw new ApiError(code, outcome.failureReason ?? 'the upload failed', {
    data: { videoId, ...(code === 2001 && input ? { field: input } : {}) },
  });
}

function fileFacts(req: CompleteUploadRequest) {
  return {
    sizeBytes: Number(req.sizeBytes),
    sha256: req.sha256 || null,
    container: req.container || null,
  };
}

/** The last path segment, for display: `https://x/a/clip.mp4?sig=…` → `clip.mp4`. */
function fileNameOf(url: URL): string | null {
  const last = url.pathname.split('/').pop() ?? '';
  let name: string;
  try {
    name = decodeURIComponent(last);
  } catch {
    name = last;
  }
  name = name.replace(/[\u0000-\u001f]/g, '');
  return name ? name.slice(0, MAX_FILE_NAME) : null;
}
