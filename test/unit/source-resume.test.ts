/**
 * How a remote fetch decides, from the source's answer to its range request, whether it goes on
 * with the same file or starts over; and what of an earlier attempt's heartbeat it trusts.
 */
import { identityOf, rangeAnswer, rangeHeaders, resumeOf } from '../../activities/source-resume';

const ETAG = '"abc123"';
const LAST_MODIFIED = 'Wed, 25 Nov 2026 10:00:00 GMT';

describe('the source of a resumed fetch', () => {
  it('remembers a strong ETag, Last-Modified and the length of the response that began the file', () => {
    expect(identityOf({ etag: ETAG, 'last-modified': LAST_MODIFIED, 'content-length': '1000' })).toEqual({
      etag: ETAG,
      lastModified: LAST_MODIFIED,
      length: 1000,
    });
    // If-Range takes no weak validator; a source without either leaves the length to check.
    expect(identityOf({ etag: 'W/"weak"', 'content-length': '1000' })).toEqual({ length: 1000 });
    expect(identityOf({})).toEqual({});
  });

  it('asks for the rest, on condition that the file is the one it began with', () => {
    expect(rangeHeaders(500, { etag: ETAG, lastModified: LAST_MODIFIED })).toEqual({ range: 'bytes=500-', 'if-range': ETAG });
    expect(rangeHeaders(500, { lastModified: LAST_MODIFIED })).toEqual({ range: 'bytes=500-', 'if-range': LAST_MODIFIED });
    expect(rangeHeaders(500, { length: 1000 })).toEqual({ range: 'bytes=500-' });
  });

  it('goes on with a 206 from the offset asked for, of the same length', () => {
    const source = { etag: ETAG, length: 1000 };
    expect(rangeAnswer(206, { 'content-range': 'bytes 500-999/1000', etag: ETAG }, 500, source)).toEqual({ resumes: true, length: 1000 });
    expect(rangeAnswer(206, { 'content-range': 'bytes 500-999/*' }, 500, source)).toEqual({ resumes: true });
  });

  it('starts over, saying why, when the answer is not the rest of the same file', () => {
    const source = { etag: ETAG, length: 1000 };
    expect(rangeAnswer(200, { etag: ETAG }, 500, source)).toEqual({
      resumes: false,
      whole: true,
      reason: 'the source does not support range requests',
    });
    expect(rangeAnswer(200, { etag: '"other"' }, 500, source)).toEqual({
      resumes: false,
      whole: true,
      reason: 'the source file changed since the interrupted attempt',
    });
    expect(rangeAnswer(200, { 'last-modified': 'Thu, 26 Nov 2026 10:00:00 GMT' }, 500, { lastModified: LAST_MODIFIED })).toMatchObject({
      reason: 'the source file changed since the interrupted attempt',
    });
    expect(rangeAnswer(206, { 'content-range': 'bytes 0-999/1000' }, 500, source)).toMatchObject({
      resumes: false,
      whole: false,
      reason: expect.stringContaining('another range'),
    });
    expect(rangeAnswer(206, { 'content-range': 'bytes 500-1999/2000' }, 500, source)).toMatchObject({
      resumes: false,
      whole: false,
      reason: "the source file's length changed from 1000 to 2000 bytes",
    });
    // Range honoured but not If-Range: a range of whatever file it has now.
    expect(rangeAnswer(206, { 'content-range': 'bytes 500-999/1000', etag: '"other"' }, 500, source)).toMatchObject({
      resumes: false,
      whole: false,
    });
    expect(rangeAnswer(416, {}, 500, source)).toEqual({
      resumes: false,
      whole: false,
      reason: 'the source file is now shorter than the part already stored',
    });
  });

  it('leaves any other status to the usual answer handling', () => {
    expect(rangeAnswer(503, {}, 500, {})).toBeUndefined();
    expect(rangeAnswer(404, {}, 500, {})).toBeUndefined();
  });

  it('resumes only from a heartbeat of the shape it writes', () => {
    const point = { offset: 5_242_880, uploadId: 'u-1', parts: 1 };
    expect(resumeOf({ bytes: 6_000_000, resume: { point, source: { etag: ETAG, length: 9 } } })).toEqual({
      point,
      source: { etag: ETAG, length: 9 },
    });
    // The folder store's point names the boot its bytes were written in.
    const folderPoint = { offset: 1_048_576, bootId: '5f1e3c2a-0b7d-4e58-9a61-2c4d8e0f7b13' };
    expect(resumeOf({ bytes: 1_048_576, resume: { point: folderPoint, source: {} } })).toEqual({ point: folderPoint, source: {} });
    // Heartbeats of workers before resumable fetches, none, and anything malformed.
    for (const details of [
      { bytes: 100 },
      undefined,
      null,
      'x',
      { resume: { point: { offset: -1 } } },
      { resume: { point: { offset: 10, uploadId: 7 } } },
      { resume: { point: { offset: 10, bootId: 7 } } },
    ]) {
      expect(resumeOf(details)).toBeUndefined();
    }
  });
});
