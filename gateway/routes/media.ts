/**
 * GET and HEAD /media/videos/:id?expires=&signature=: the file behind a video track videoUrl,
 * fetched by the platform, which holds no API key of ours. Outside /v1: no key, no rate limit; the
 * signature is the credential, checked by core (OpenMedia) together with the record's state, so a
 * deleted or expired video stops being served at once. Every refusal is 404 with code 1005.
 */
import type { Readable } from 'node:stream';
import type { Transport } from '@connectrpc/connect';
import type { FastifyInstance } from 'fastify';
import { VideoService } from '../../gen/vps/video/v1/video_pb';
import { ApiError } from '../../core/errors';
import { MEDIA_PATH_PREFIX } from '../../core/media/signed-tokens';
import { MediaNotFoundError, type MediaStore } from '../../core/media/storage';
import { MediaQuery, VideoIdParams } from '../schemas/videos';

const notFound = () => new ApiError(1005, 'media URL invalid, expired, or the video is no longer available');

export function registerMediaRoutes(app: FastifyInstance, opts: { transport: Transport; media: MediaStore }): void {
  app.route<{ Params: VideoIdParams; Querystring: MediaQuery }>({
    method: ['GET', 'HEAD'],
    url: `${MEDIA_PATH_PREFIX}:id`,
    attachValidation: true,
    schema: {
      summary: 'The file of a video track videoUrl (signed, expiring); single byte ranges supported',
      params: VideoIdParams,
      querystring: MediaQuery,
    },
    handler: async (req, reply) => {
      // A URL that is not one we signed is simply not found, whatever is wrong with it.
      if (req.validationError) throw notFound();
      const { id } = req.params;
      const q = req.query;
      const res = await opts.transport.unary(VideoService.method.openMedia, undefined, undefined, new Headers({ 'x-request-id': req.id }), {
        videoId: id,
        expires: BigInt(q.expires),
        signature: q.signature,
      });
      const { storageKey, contentType, sha256 } = res.message;
      const size = Number(res.message.sizeBytes);
      const etag = `"${sha256}"`;
      void reply.header('content-type', contentType).header('accept-ranges', 'bytes').header('etag', etag);
      if (req.headers['if-none-match'] === etag) return reply.code(304).send();
      const range = parseRange(req.headers.range, size, req.headers['if-range'], etag);
      if (range === 'unsatisfiable') {
        return reply.code(416).header('content-range', `bytes */${size}`).send();
      }
      const length = range ? range.end - range.start + 1 : size;
      void reply.header('content-length', String(length));
      if (range) void reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${size}`);
      if (req.method === 'HEAD' || length === 0) return reply.send();
      // Opened before the answer is committed: a file removed by a delete a moment ago is a 404,
      // not a response cut off after its headers.
      const stream = await openReady(opts.media, storageKey, range ?? undefined);
      return reply.send(stream);
    },
  });
}

async function openReady(media: MediaStore, key: string, range: { start: number; end: number } | undefined): Promise<Readable> {
  try {
    return await media.open(key, range);
  } catch (err) {
    if (err instanceof MediaNotFoundError) throw notFound();
    throw err;
  }
}

/**
 * One range of `bytes=a-b`, `bytes=a-` or `bytes=-n`. A missing, malformed or multi-range header
 * (or an If-Range that no longer matches) is served whole, as RFC 9110 allows; a range wholly past
 * the end is unsatisfiable (416).
 */
export function parseRange(
  header: string | undefined,
  size: number,
  ifRange?: string | string[],
  etag?: string,
): { start: number; end: number } | 'unsatisfiable' | null {
  if (!header) return null;
  if (ifRange !== undefined && ifRange !== etag) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match) return null;
  const [, a, b] = match;
  if (a === '' && b === '') return null;
  if (a === '') {
    const suffix = Number(b);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(a);
  const end = b === '' ? size - 1 : Math.min(Number(b), size - 1);
  if (b !== '' && Number(b) < start) return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}
