/**
 * The SDK's pure parts: path filling, the multipart body (read back by the parser the gateway's
 * multipart plugin uses), and Retry-After.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Busboy from '@fastify/busboy';
import { fillPath } from '../../sdk/client';
import type { UploadFile } from '../../sdk/endpoint';
import { parseRetryAfter } from '../../sdk/errors';
import { multipartBody } from '../../sdk/multipart';

describe('fillPath', () => {
  it('fills each :name segment, percent-encoding the value', () => {
    expect(fillPath('/v1/videos/:id', { id: 'vid_1' })).toBe('/v1/videos/vid_1');
    expect(fillPath('/v1/events/:id/deliveries', { id: 'a/b?c#d e' })).toBe('/v1/events/a%2Fb%3Fc%23d%20e/deliveries');
    expect(fillPath('/v1/publish/tts/precheck/:taskId', { taskId: 'pre_ü' })).toBe('/v1/publish/tts/precheck/pre_%C3%BC');
  });

  it('leaves a path without parameters as it is, dots and all', () => {
    expect(fillPath('/v1/vplat/v1.3/business/video/list', undefined)).toBe('/v1/vplat/v1.3/business/video/list');
  });

  it('refuses a missing or empty parameter, naming it', () => {
    expect(() => fillPath('/v1/videos/:id', undefined)).toThrow(/the path parameter id is required/);
    expect(() => fillPath('/v1/videos/:id', {})).toThrow(/id is required/);
    expect(() => fillPath('/v1/publish/tts/precheck/:taskId', { taskId: '' })).toThrow(/taskId is required/);
  });
});

interface ParsedForm {
  /** Part names in the order they arrived. */
  order: string[];
  fields: Record<string, string>;
  file?: { field: string; name: string; type: string; bytes: Buffer };
}

async function parse(contentType: string, body: AsyncIterable<Uint8Array>): Promise<ParsedForm> {
  const form: ParsedForm = { order: [], fields: {} };
  const parser = Busboy({ headers: { 'content-type': contentType } });
  const finished = new Promise<void>((resolve, reject) => {
    parser.on('field', (name, value) => {
      form.order.push(name);
      form.fields[name] = value;
    });
    parser.on('file', (field, stream, name, _encoding, type) => {
      form.order.push(field);
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => (form.file = { field, name, type, bytes: Buffer.concat(chunks) }));
    });
    parser.on('finish', resolve);
    parser.on('error', reject);
  });
  for await (const chunk of body) parser.write(chunk);
  parser.end();
  await finished;
  return form;
}

describe('multipartBody', () => {
  const bytes = Buffer.from(Array.from({ length: 600 * 1024 }, (_, i) => i % 251));

  it("sends the text fields first, then the file, as a form the gateway's parser reads back", async () => {
    const body = multipartBody({ seatId: 'seat_1', account: undefined, count: 3 }, { bytes, name: 'clip.mp4', contentType: 'video/mp4' });
    const form = await parse(body.contentType, body.body);
    expect(form.order).toEqual(['seatId', 'count', 'file']);
    expect(form.fields).toEqual({ seatId: 'seat_1', count: '3' });
    expect(form.file).toMatchObject({ field: 'file', name: 'clip.mp4', type: 'video/mp4' });
    expect(form.file!.bytes.equals(bytes)).toBe(true);
    expect(body).toMatchObject({ fileBytes: bytes.byteLength, replayable: true });
  });

  it('reads a file from disk in chunks, names it after the path, and reports progress up to its size', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sdk-multipart-'));
    try {
      const file = path.join(dir, 'photo.png');
      fs.writeFileSync(file, bytes);
      const progress: Array<[number, number | undefined]> = [];
      const body = multipartBody({ accountId: 'creator' }, { path: file }, (sent, total) => progress.push([sent, total]));
      const form = await parse(body.contentType, body.body);
      expect(form.file).toMatchObject({ name: 'photo.png', type: 'application/octet-stream' });
      expect(form.file!.bytes.equals(bytes)).toBe(true);
      expect(progress[0]).toEqual([0, bytes.byteLength]);
      expect(progress.at(-1)).toEqual([bytes.byteLength, bytes.byteLength]);
      expect(progress.length).toBeGreaterThan(2);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps a file name with quotes and line breaks inside its parameter', async () => {
    const body = multipartBody({}, { bytes: Buffer.from('x'), name: 'my "best"\r\nclip.mp4' });
    const form = await parse(body.contentType, body.body);
    expect(form.order).toEqual(['file']);
    expect(form.file!.name).toBe('my "best"  clip.mp4');
  });

  it('marks a stream as not replayable: a retry cannot send it again', async () => {
    async function* stream() {
      yield Buffer.from('abc');
    }
    const file: UploadFile = { stream: stream(), name: 'live.webm' };
    const body = multipartBody({ seatId: 's' }, file);
    expect(body).toMatchObject({ replayable: false, fileBytes: undefined });
    expect((await parse(body.contentType, body.body)).file!.bytes.toString()).toBe('abc');
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-22T08:00:00Z');

  it('reads delta-seconds', () => {
    expect(parseRetryAfter('1', now)).toBe(1);
    expect(parseRetryAfter(' 30 ', now)).toBe(30);
    expect(parseRetryAfter('0', now)).toBe(0);
  });

  it('reads an HTTP date as the seconds until then, rounded up, never negative', () => {
    expect(parseRetryAfter('Sun, 22 Nov 2026 08:00:02 GMT', now)).toBe(2);
    expect(parseRetryAfter(new Date(now + 1_500).toUTCString(), now - 500)).toBe(2);
    expect(parseRetryAfter('Sun, 22 Nov 2026 07:59:00 GMT', now)).toBe(0);
  });

  it('gives undefined for an absent or unreadable value', () => {
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter('', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
  });
});
