/**
 * How a remote fetch goes on after an interrupted attempt: what its heartbeats carry to the next
 * attempt, the range request that attempt sends, and whether the source's answer continues the same
 * file or the fetch starts over (and why, for the log).
 *
 * The file is recognised by the validator of the response that began it: a strong ETag, else
 * Last-Modified, sent back as If-Range so that a source whose file changed answers 200 with the new
 * file instead of a range of it. Its declared length is checked against the range's as well, which
 * is all a source without a validator leaves to check.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { ResumePoint } from '../core/media/resumable-write';

/** What the response that began the file said about it. */
export interface SourceIdentity {
  /** A strong ETag: If-Range takes no weak one. */
  etag?: string;
  lastModified?: string;
  /** The whole file's length, when declared. */
  length?: number;
}

/** The details of a fetch's heartbeats: its progress and, once something is stored for good, where to go on from. */
export interface FetchHeartbeat {
  bytes: number;
  resume?: { point: ResumePoint; source: SourceIdentity };
}

/** The last heartbeat's resume, when the details are of this shape (older workers sent `{ bytes }` only). */
export function resumeOf(details: unknown): FetchHeartbeat['resume'] {
  const resume = (details as Partial<FetchHeartbeat> | undefined)?.resume;
  const point = resume?.point;
  if (!point || !Number.isSafeInteger(point.offset) || point.offset <= 0) return undefined;
  if (point.uploadId !== undefined && typeof point.uploadId !== 'string') return undefined;
  if (point.parts !== undefined && !Number.isSafeInteger(point.parts)) return undefined;
  if (point.bootId !== undefined && typeof point.bootId !== 'string') return undefined;
  const source = resume.source ?? {};
  return {
    point: {
      offset: point.offset,
      ...(point.uploadId ? { uploadId: point.uploadId } : {}),
      ...(point.parts ? { parts: point.parts } : {}),
      ...(point.bootId ? { bootId: point.bootId } : {}),
    },
    source: {
      ...(typeof source.etag === 'string' ? { etag: source.etag } : {}),
      ...(typeof source.lastModified === 'string' ? { lastModified: source.lastModified } : {}),
      ...(Number.isSafeInteger(source.length) ? { length: source.length } : {}),
    },
  };
}

export function identityOf(headers: IncomingHttpHeaders): SourceIdentity {
  const etag = header(headers, 'etag');
  const lastModified = header(headers, 'last-modified');
  const length = Number(header(headers, 'content-length'));
  return {
    ...(etag && !etag.startsWith('W/') ? { etag } : {}),
    ...(lastModified ? { lastModified } : {}),
    ...(header(headers, 'content-length') !== undefined && Number.isSafeInteger(length) ? { length } : {}),
  };
}

export function rangeHeaders(offset: number, source: SourceIdentity): Record<string, string> {
  const validator = source.etag ?? source.lastModified;
  return { range: `bytes=${offset}-`, ...(validator ? { 'if-range': validator } : {}) };
}

/** What the answer to a range request means for the fetch. */
export type RangeAnswer =
  /** The rest of the same file, from the offset asked for. */
  | { resumes: true; length?: number }
  /**
   * Not a continuation: the fetch starts over. `whole` when the answer is the file from its start
   * (a 200), which the fetch then stores; otherwise it asks again without a range.
   */
  | { resumes: false; reason: string; whole: boolean };

/** The meaning of a 200, 206 or 416 answer to `rangeHeaders(offset, source)`; undefined for any other status. */
export function rangeAnswer(
  statusCode: number,
  headers: IncomingHttpHeaders,
  offset: number,
  source: SourceIdentity,
): RangeAnswer | undefined {
  if (statusCode === 200) {
    const etag = header(headers, 'etag');
    const lastModified = header(headers, 'last-modified');
    const changed =
      (source.etag !== undefined && etag !== undefined && etag !== source.etag) ||
      (source.etag === undefined &&
        source.lastModified !== undefined &&
        lastModified !== undefined &&
        lastModified !== source.lastModified);
    return {
      resumes: false,
      whole: true,
      reason: changed ? 'the source file changed since the interrupted attempt' : 'the source does not support range requests',
    };
  }
  if (statusCode === 416) return { resumes: false, whole: false, reason: 'the source file is now shorter than the part already stored' };
  if (statusCode !== 206) return undefined;
  const range = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(header(headers, 'content-range') ?? '');
  if (!range || Number(range[1]) !== offset)
    return {
      resumes: false,
      whole: false,
      reason: `the source answered another range (${header(headers, 'content-range') ?? 'none'}) than bytes ${offset}-`,
    };
  const etag = header(headers, 'etag');
  // A source that honours Range but not If-Range sends a range of whatever file it has now.
  if (source.etag !== undefined && etag !== undefined && etag !== source.etag)
    return { resumes: false, whole: false, reason: 'the source file changed since the interrupted attempt' };
  const length = range[3] === '*' ? undefined : Number(range[3]);
  if (length !== undefined && source.length !== undefined && length !== source.length) {
    return { resumes: false, whole: false, reason: `the source file's length changed from ${source.length} to ${length} bytes` };
  }
  return { resumes: true, ...(length !== undefined ? { length } : {}) };
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
