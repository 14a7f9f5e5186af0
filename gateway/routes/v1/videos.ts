/**
 * The video library over HTTP. Reads and deletes are plain RPC rows. POST /v1/videos takes either
 * JSON (a sourceUrl the service fetches, in a workflow) or multipart/form-data (a direct upload):
 * with the target named before the file, core authorizes and opens the record (BeginUpload) before
 * a byte is stored; with it named after the file (or not at all), core judges the caller first and
 * the file is staged, then bound to the record once the fields are known. The file part is
 * streamed to the media store with constant memory under a size cap, its container is recognised
 * from its first bytes, and core registers it (CompleteUpload, with the ticket). Core also chooses
 * the target when seatId and account are both left out.
 */
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import multipart, { type MultipartFile } from '@fastify/multipart';
import { ConnectError, type Transport } from '@connectrpc/connect';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Access } from '../../../gen/vps/options/v1/options_pb';
import { VideoService, type Video } from '../../../gen/vps/video/v1/video_pb';
import { ApiError, CODE_HEADER } from '../../../core/errors';
import { IDEMPOTENT_REPLAYED_HEADER } from '../../../core/interceptors/idempotency.interceptor';
import { MediaStoreUnavailableError, MediaTooLargeError, stagingKey, type MediaStore, type StoredMedia } from '../../../core/media/storage';
import { videoFormat } from '../../../core/media/formats';
import { uploadedVideoJson, videoJson } from '../../presenters/videos';
import { FIELD_LIMIT_BYTES, readForm, refuseInput, settleBody, type UploadForm } from '../../multipart';
import { checkWriter, defineRoute, forwardedHeaders, forwardResponseHeaders, nulField } from '../../rpc-route';
import { okEnvelope } from '../../schemas/common';
import {
  ListVideosQuery,
  MultipartUploadFields,
  RemoteUploadBody,
  UploadedVideoJson,
  VideoIdParams,
  VideoJson,
  VideoPageJson,
} from '../../schemas/videos';

export const videoRoutes = [
  defineRoute({
    method: 'GET',
    url: '/videos',
    summary: 'List the video library, newest first; deleted and expired records included (status expired)',
    rpc: VideoService.method.listVideos,
    schema: { querystring: ListVideosQuery, response: { 200: okEnvelope(VideoPageJson) } },
    toRequest: (req) => {
      const q = req.query;
      return { cursor: q.cursor ?? '', limit: q.limit ?? 0, status: q.status ?? '', seatId: q.seatId ?? '' };
    },
    toData: (res) => ({ items: res.videos.map(videoJson), nextCursor: res.nextCursor || null }),
  }),
  defineRoute({
    method: 'GET',
    url: '/videos/:id',
    summary: 'One video library record',
    rpc: VideoService.method.getVideo,
    schema: { params: VideoIdParams, response: { 200: okEnvelope(VideoJson) } },
    toRequest: (req) => ({ id: req.params.id }),
    toData: (res) => videoJson(res.video!),
  }),
  defineRoute({
    method: 'DELETE',
    url: '/videos/:id',
    summary: 'Soft-delete a video: expired at once, its file removed, the record kept',
    rpc: VideoService.method.deleteVideo,
    schema: { params: VideoIdParams, response: { 200: okEnvelope(VideoJson) } },
    toRequest: (req) => ({ id: req.params.id }),
    toData: (res) => videoJson(res.video!),
  }),
];

/**
 * What the multipart parser may hold ahead of the store. busboy's default, 16 KiB, let one socket
 * chunk through at a time, so parsing and storing took turns, as the folder store's writes did
 * before its WRITE_BUFFER_BYTES.
 */
const PARSER_BUFFER_BYTES = 1024 * 1024;

interface UploadRouteOptions {
  transport: Transport;
  media: MediaStore;
  /** Largest file any library accepts; core gives the cap of each upload, never above this. */
  maxUploadBytes: number;
  /** Refused bodies up to this size are read before the answer (settleBody). */
  drainBytes: number;
}

export async function registerVideoUploadRoute(app: FastifyInstance, opts: UploadRouteOptions): Promise<void> {
  // In a scope of its own, so multipart bodies are parsed for this route only.
  await app.register(async (scope) => {
    await scope.register(multipart, {
      highWaterMark: PARSER_BUFFER_BYTES,
      fileHwm: PARSER_BUFFER_BYTES,
      limits: {
        // Our own cap (from core) trips first; busboy's is only a backstop one byte beyond any cap.
        fileSize: opts.maxUploadBytes + 1,
        files: 1,
        fields: 4,
        parts: 6,
        fieldSize: FIELD_LIMIT_BYTES,
        headerPairs: 20,
      },
    });
    // The JSON body is typed for the remote path; a multipart body is parsed part by part instead.
    scope.route<{ Body: RemoteUploadBody | null | undefined }>({
      method: 'POST',
      url: '/videos',
      config: { access: Access.WRITE, upload: true },
      attachValidation: true,
      schema: {
        summary:
          'Upload a video: multipart/form-data with seatId or account and the file part (the field before or after it), or JSON with sourceUrl; seatId and account may be left out when you have exactly one bound seat',
        // The multipart schema documents the form; its parts are streamed and checked one by one.
        body: { content: { 'application/json': { schema: RemoteUploadBody }, 'multipart/form-data': { schema: MultipartUploadFields } } },
        response: { 200: okEnvelope(UploadedVideoJson) },
      },
      handler: async (req, reply) => (req.isMultipart() ? directUpload(req, reply, opts) : remoteUpload(req, reply, opts.transport)),
    });
  });
}

async function remoteUpload(req: FastifyRequest<{ Body: RemoteUploadBody | null | undefined }>, reply: FastifyReply, transport: Transport) {
  const body = req.body;
  if (body === undefined || body === null)
    return refuseInput(transport, req, 'body: send JSON with sourceUrl, or multipart/form-data with a file', 'body');
  const invalid = req.validationError?.message ?? nulField(req);
  if (invalid) await refuseInput(transport, req, invalid, invalid.split(':')[0] ?? 'body');
  const res = await transport.unary(VideoService.method.createRemoteUpload, undefined, undefined, forwardedHeaders(req), {
    sourceUrl: body.sourceUrl,
    seatId: body.seatId ?? '',
    account: body.account ?? '',
  });
  forwardResponseHeaders(res.header, reply);
  return { code: 0, message: 'ok', data: uploadedVideoJson(res.message.video!) };
}

async function directUpload(req: FastifyRequest, reply: FastifyReply, opts: UploadRouteOptions) {
  const { transport } = opts;
  try {
    const form = await readForm(req, transport, { allowed: TARGET_FIELDS, what: 'the video' });
    const video = TARGET_FIELDS.some((name) => form.fields[name] !== undefined)
      ? await storeForTarget(req, reply, opts, form)
      : await storeThenBind(req, reply, opts, form);
    return { code: 0, message: 'ok', data: uploadedVideoJson(video) };
  } catch (err) {
    await settleBody(req, opts.drainBytes);
    throw err;
  }
}

const TARGET_FIELDS = ['seatId', 'account'] as const;

/** What the gateway reports to core for an upload it could not store, or a file core must refuse. */
interface UploadFacts {
  sizeBytes?: number;
  sha256?: string;
  container?: string;
  failureReason?: string;
}

/** BeginUpload: authenticates, meters and checks the target before any byte is stored under the record. */
async function beginUpload(
  req: FastifyRequest,
  reply: FastifyReply,
  transport: Transport,
  fields: Record<string, string>,
  fileName: string,
) {
  const begun = await transport.unary(VideoService.method.beginUpload, undefined, undefined, forwardedHeaders(req), {
    seatId: fields.seatId ?? '',
    account: fields.account ?? '',
    fileName,
  });
  forwardResponseHeaders(begun.header, reply);
  const replayed = begun.header.get(IDEMPOTENT_REPLAYED_HEADER) === 'true';
  const complete = (facts: UploadFacts) =>
    transport.unary(VideoService.method.completeUpload, undefined, undefined, new Headers({ 'x-request-id': req.id }), {
      ticket: begun.message.ticket,
      sizeBytes: BigInt(facts.sizeBytes ?? 0),
      sha256: facts.sha256 ?? '',
      container: facts.container ?? '',
      failureReason: facts.failureReason ?? '',
    });
  /** The record as it is now, for a repeat of an upload already begun: its bytes are not stored twice. */
  const current = async () =>
    (await transport.unary(VideoService.method.getVideo, undefined, undefined, forwardedHeaders(req), { id: begun.message.video!.id }))
      .message.video!;
  return { message: begun.message, maxBytes: Number(begun.message.maxBytes), replayed, complete, current };
}

type Begun = Awaited<ReturnType<typeof beginUpload>>;

/**
 * The target came before the file: the record is opened first, and the file streamed to its key,
 * with constant memory under core's cap for the seat's track.
 */
async function storeForTarget(req: FastifyRequest, reply: FastifyReply, opts: UploadRouteOptions, form: UploadForm): Promise<Video> {
  const part = form.file;
  const begun = await beginUpload(req, reply, opts.transport, form.fields, part.filename ?? '');
  if (begun.replayed) {
    await pipeline(part.file, new Writable({ write: (_chunk, _enc, done) => done() }));
    return begun.current();
  }
  const stored = await writeOrFail(req, opts.media, begun, begun.message.storageKey, part);
  const late = await lateFields(form, begun);
  const named = TARGET_FIELDS.find((name) => late[name] !== undefined);
  if (named) {
    // The upload went to the target named before the file; another after it is a contradiction.
    const reason = `${named}: the target was already named before the file part; send seatId or account once`;
    await begun.complete({ failureReason: reason });
    throw new ApiError(2001, reason, { data: { field: named } });
  }
  return (await begun.complete(await factsOf(stored))).message.video!;
}

/**
 * No target before the file (it may follow, as curl sends -F parts in the order given, or there
 * may be none: the caller's only bound seat). The caller is judged first, so an unknown caller's
 * file is never stored; the file streams to a staging key under the largest cap of any library;
 * once the body has ended and the fields are known, core opens the record as it would have before
 * the file, and the staged file is moved to the record's key. Whatever refuses it meanwhile
 * removes the staged file, so no object outlives a refused upload.
 */
async function storeThenBind(req: FastifyRequest, reply: FastifyReply, opts: UploadRouteOptions, form: UploadForm): Promise<Video> {
  const { transport, media } = opts;
  const part = form.file;
  await checkWriter(transport, req);
  const staged = stagingKey();
  let stored: StoredMedia;
  try {
    stored = await media.write(staged, part.file, { maxBytes: opts.maxUploadBytes });
  } catch (err) {
    // No record yet: nothing to fail in core; the store left nothing under the staging key.
    if (err instanceof MediaStoreUnavailableError) throw err;
    throw new ApiError(2001, writeFailure(req, err, opts.maxUploadBytes), { data: { field: 'file' } });
  }
  let begun: Begun | undefined;
  try {
    const fields = { ...form.fields, ...(await form.fieldsAfterFile()) };
    begun = await beginUpload(req, reply, transport, fields, part.filename ?? '');
    if (begun.replayed) {
      await media.remove(staged);
      return await begun.current();
    }
    if (stored.sizeBytes > begun.maxBytes) {
      const reason = `file: larger than the limit of ${begun.maxBytes} bytes`;
      await begun.complete({ failureReason: reason });
      throw new ApiError(2001, reason, { data: { field: 'file' } });
    }
    await media.move(staged, begun.message.storageKey);
  } catch (err) {
    await media.remove(staged).catch((removal: unknown) => req.log.warn({ err: removal, staged }, 'could not remove a staged upload'));
    if (begun && err instanceof MediaStoreUnavailableError) await failForStore(req, begun);
    throw err;
  }
  return (await begun.complete(await factsOf(stored))).message.video!;
}

/** Streams the file to `key` under the record's cap; a failure fails the record and is answered. */
async function writeOrFail(req: FastifyRequest, media: MediaStore, begun: Begun, key: string, part: MultipartFile): Promise<StoredMedia> {
  try {
    return await media.write(key, part.file, { maxBytes: begun.maxBytes });
  } catch (err) {
    if (err instanceof MediaStoreUnavailableError) {
      await failForStore(req, begun);
      throw err;
    }
    const reason = writeFailure(req, err, begun.maxBytes);
    // Core fails the record (the media store removed the partial file) and answers 2001 with the reason.
    await begun.complete({ failureReason: reason });
    throw new ApiError(2001, reason, { data: { field: 'file' } });
  }
}

/** Why a write that was not the store's fault failed, as the record and the answer say it. */
function writeFailure(req: FastifyRequest, err: unknown, maxBytes: number): string {
  if (err instanceof MediaTooLargeError) return `file: larger than the limit of ${maxBytes} bytes`;
  // A client that left or sent a broken body is worth a line in the log; an oversized file is not.
  req.log.warn({ err }, 'direct video upload interrupted');
  return 'file: the upload was interrupted before the file ended';
}

/**
 * Not the caller's doing: the record fails with the reason (core's 2001 refusal of the upload is
 * expected), and the answer is the store's retryable 5000.
 */
async function failForStore(req: FastifyRequest, begun: Begun): Promise<void> {
  await begun.complete({ failureReason: 'file: the media store was unavailable; upload again' }).catch((refusal: unknown) => {
    if (!(refusal instanceof ConnectError && refusal.metadata.get(CODE_HEADER) === '2001'))
      req.log.error({ err: refusal }, 'could not fail the record of an upload the store lost');
  });
}

/** The fields after a file already stored under the record: a refusal of them fails the record too. */
async function lateFields(form: UploadForm, begun: Begun): Promise<Record<string, string>> {
  try {
    return await form.fieldsAfterFile();
  } catch (err) {
    if (err instanceof ApiError) await begun.complete({ failureReason: err.message });
    throw err;
  }
}

async function factsOf(stored: StoredMedia): Promise<UploadFacts> {
  return { sizeBytes: stored.sizeBytes, sha256: stored.sha256, container: (await videoFormat(stored.head)) ?? '' };
}
