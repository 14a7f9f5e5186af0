/**
 * The video library over HTTP. Reads and deletes are plain RPC rows. POST /v1/videos takes either
 * JSON (a sourceUrl the service fetches, in a workflow) or multipart/form-data (a direct upload):
 * core authorizes and opens the record (BeginUpload) before a byte is stored, the file part is
 * streamed to the media store with constant memory under core's size cap, its container is
 * recognised from its first bytes, and core registers it (CompleteUpload, with the ticket). Core
 * also chooses the target when seatId and account are both left out.
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
import { MediaStoreUnavailableError, MediaTooLargeError, type MediaStore } from '../../../core/media/storage';
import { videoFormat } from '../../../core/media/formats';
import { uploadedVideoJson, videoJson } from '../../presenters/videos';
import { discardRest, FIELD_LIMIT_BYTES, fieldsThenFile, refuseInput, type PartAfterFile } from '../../multipart';
import { defineRoute, forwardedHeaders, forwardResponseHeaders, nulField } from '../../rpc-route';
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
          'Upload a video: multipart/form-data with seatId or account then the file part, or JSON with sourceUrl; seatId and account may be left out when you have exactly one bound seat',
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
    const { fields, file, afterFile } = await fieldsThenFile(req, transport, { allowed: ['seatId', 'account'], what: 'the video' });
    const video = await storeFile(req, reply, opts, file, fields, afterFile);
    return { code: 0, message: 'ok', data: uploadedVideoJson(video) };
  } catch (err) {
    discardRest(req, reply);
    throw err;
  }
}

async function storeFile(
  req: FastifyRequest,
  reply: FastifyReply,
  opts: UploadRouteOptions,
  part: MultipartFile,
  fields: Record<string, string>,
  afterFile: () => Promise<PartAfterFile | undefined>,
): Promise<Video> {
  const { transport, media } = opts;
  // Authenticates, meters and checks the seat before any byte is stored.
  const begun = await transport.unary(VideoService.method.beginUpload, undefined, undefined, forwardedHeaders(req), {
    seatId: fields.seatId ?? '',
    account: fields.account ?? '',
    fileName: part.filename ?? '',
  });
  forwardResponseHeaders(begun.header, reply);
  const { ticket, storageKey } = begun.message;
  const maxBytes = Number(begun.message.maxBytes);
  if (begun.header.get(IDEMPOTENT_REPLAYED_HEADER) === 'true') {
    // A repeat of an upload already begun: its bytes are not stored twice; the record as it is now.
    await pipeline(part.file, new Writable({ write: (_chunk, _enc, done) => done() }));
    const current = await transport.unary(VideoService.method.getVideo, undefined, undefined, forwardedHeaders(req), {
      id: begun.message.video!.id,
    });
    return current.message.video!;
  }
  const complete = (facts: { sizeBytes?: number; sha256?: string; container?: string; failureReason?: string }) =>
    transport.unary(VideoService.method.completeUpload, undefined, undefined, new Headers({ 'x-request-id': req.id }), {
      ticket,
      sizeBytes: BigInt(facts.sizeBytes ?? 0),
      sha256: facts.sha256 ?? '',
      container: facts.container ?? '',
      failureReason: facts.failureReason ?? '',
    });
  let stored;
  try {
    stored = await media.write(storageKey, part.file, { maxBytes });
  } catch (err) {
    if (err instanceof MediaStoreUnavailableError) {
      // Not the caller's doing: the record fails with the reason (core's 2001 refusal of the
      // upload is expected), and the answer is the store's retryable 5000.
      await complete({ failureReason: 'file: the media store was unavailable; upload again' }).catch((refusal: unknown) => {
        if (!(refusal instanceof ConnectError && refusal.metadata.get(CODE_HEADER) === '2001'))
          req.log.error({ err: refusal }, 'could not fail the record of an upload the store lost');
      });
      throw err;
    }
    const tooLarge = err instanceof MediaTooLargeError;
    const reason = tooLarge ? `file: larger than the limit of ${maxBytes} bytes` : 'file: the upload was interrupted before the file ended';
    // A client that left or sent a broken body is worth a line in the log; an oversized file is not.
    if (!tooLarge) req.log.warn({ err }, 'direct video upload interrupted');
    // Core fails the record (the media store removed the partial file) and answers 2001 with the reason.
    await complete({ failureReason: reason });
    throw new ApiError(2001, reason, { data: { field: 'file' } });
  }
  if (fields.seatId === undefined && fields.account === undefined) {
    // Core chose the target before the file arrived; a part after it may have been meant to name
    // another seat (curl sends -F parts in the order given), so it fails rather than being ignored.
    const late = await afterFile();
    if (late) {
      const why = late.field === 'body' ? '' : ' (without seatId or account before it, the upload went to your only bound seat)';
      const reason = `${late.field}: ${late.reason}${why}`;
      await complete({ failureReason: reason });
      throw new ApiError(2001, reason, { data: { field: late.field } });
    }
  }
  const res = await complete({ sizeBytes: stored.sizeBytes, sha256: stored.sha256, container: (await videoFormat(stored.head)) ?? '' });
  return res.message.video!;
}
