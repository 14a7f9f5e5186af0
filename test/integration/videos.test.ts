/**
 * The video library on the video track, end to end over real HTTP: direct multipart uploads whose
 * videoUrl serves the same bytes (with ranges), remote uploads fetched by a workflow from a
 * loopback server with each way they fail, answered once fetched or past the wait with where to
 * poll, the upload's target when no seat is named, the list, the record, soft delete, and the
 * refusals.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { request } from 'undici';
import { Track } from '../../gen/vps/seat/v1/seat_pb';
import { VideoService } from '../../gen/vps/video/v1/video_pb';
import { call } from '../helpers/http';
import { eventually } from '../helpers/receivers';
import { createBoundSeat, createTenant, uniqueAccount, type Stack, type Tenant } from '../helpers/stack';
import { startWorkingStack, type WorkingStack } from '../helpers/working-stack';
import { mp4Bytes, sha256, stagedUploads, startSourceServer, uploadMultipart, webmBytes, type SourceServer } from '../helpers/videos';

interface VideoJson {
  id: string;
  seatId: string;
  track: string;
  status: string;
  source: string;
  sourceUrl: string | null;
  fileName: string | null;
  container: string | null;
  sizeBytes: number | null;
  sha256: string | null;
  videoUrl: string | null;
  fileId: string | null;
  expiresAt: string | null;
  failureReason: string | null;
  createdAt: string;
  deletedAt: string | null;
  workflowId: string | null;
  statusPath?: string;
  next?: string | null;
}

const execFileAsync = promisify(execFile);

describe('video library (video track)', () => {
  let env: WorkingStack;
  let stack: Stack;
  let source: SourceServer;
  let tenant: Tenant;
  let seatId: string;
  let account: string;

  beforeAll(async () => {
    env = await startWorkingStack('videos', { stack: { videos: { maxBytes: 1024 * 1024 } } });
    stack = env.stack;
    source = await startSourceServer();
    tenant = await createTenant(stack);
    account = uniqueAccount('biz');
    seatId = (await createBoundSeat(stack, tenant, Track.VIDEO, account)).id;
  }, 120_000);
  afterAll(async () => {
    await env?.close();
    await source?.close();
  });

  const get = (id: string, key = tenant.apiKey) => call<VideoJson>(stack.baseUrl, 'GET', `/v1/videos/${id}`, { key });
  const remote = (json: unknown, key = tenant.apiKey) => call<VideoJson>(stack.baseUrl, 'POST', '/v1/videos', { key, json });

  it('stores a direct upload, answers available with a videoUrl that serves the same bytes', async () => {
    const bytes = mp4Bytes(300 * 1024);
    const res = await uploadMultipart<VideoJson>(stack.baseUrl, tenant.apiKey, [
      { name: 'seatId', value: seatId },
      { name: 'file', value: { fileName: 'clip.mp4', bytes } },
    ]);
    expect(res.body).toEqual({
      code: 0,
      message: 'ok',
      data: expect.objectContaining({ status: 'available', track: 'video', source: 'multipart', seatId, fileName: 'clip.mp4' }),
    });
    const video = res.body.data;
    expect(video).toMatchObject({
      container: 'MP4',
      sizeBytes: bytes.length,
      sha256: sha256(bytes),
      fileId: null,
      failureReason: null,
      deletedAt: null,
      workflowId: null,
      statusPath: `/v1/videos/${video.id}`,
    });
    // Valid for the configured 7 days from now.
    expect(Date.parse(video.expiresAt!) - Date.now()).toBeGreaterThan(604_800_000 - 60_000);
    expect(video.videoUrl).toMatch(new RegExp(`^${stack.baseUrl}/media/videos/${video.id}\\?expires=\\d+&signature=`));

    const download = await fetch(video.videoUrl!);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('video/mp4');
    expect(download.headers.get('content-length')).toBe(String(bytes.length));
    expect(download.headers.get('accept-ranges')).toBe('bytes');
    expect(download.headers.get('etag')).toBe(`"${sha256(bytes)}"`);
    expect(sha256(Buffer.from(await download.arrayBuffer()))).toBe(sha256(bytes));

    const part = await fetch(video.videoUrl!, { headers: { range: 'bytes=100-199' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 100-199/${bytes.length}`);
    expect(Buffer.from(await part.arrayBuffer())).toEqual(bytes.subarray(100, 200));
    const tail = await fetch(video.videoUrl!, { headers: { range: 'bytes=-10' } });
    expect(Buffer.from(await tail.arrayBuffer())).toEqual(bytes.subarray(bytes.length - 10));
    const beyond = await fetch(video.videoUrl!, { headers: { range: `bytes=${bytes.length}-` } });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe(`bytes */${bytes.length}`);
    const cached = await fetch(video.videoUrl!, { headers: { 'if-none-match': `"${sha256(bytes)}"` } });
    expect(cached.status).toBe(304);
    const head = await fetch(video.videoUrl!, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(bytes.length));

    // The file is where the record says, and the record reads the same through GET.
    expect(await stack.media.size(`videos/${video.id}`)).toBe(bytes.length);
    const { statusPath: _, next, ...record } = video;
    expect(next).toBeNull();
    expect((await get(video.id)).body.data).toEqual(record);
  });

  it('takes the seat by its account (businessId or username) and recognises other containers', async () => {
    const bytes = webmBytes();
    const byId = await uploadMultipart<VideoJson>(stack.baseUrl, tenant.apiKey, [
      { name: 'account', value: account },
      { name: 'file', value: { fileName: 'a.webm', bytes, type: 'video/webm' } },
    ]);
    expect(byId.body.data).toMatchObject({ status: 'available', seatId, container: 'WEBM' });
    const download = await fetch(byId.body.data.videoUrl!);
    expect(download.headers.get('content-type')).toBe('video/webm');
    await download.arrayBuffer();
    const byName = await uploadMultipart<VideoJson>(stack.baseUrl, tenant.apiKey, [
      { name: 'account', value: `user_${account}` },
      { name: 'file', value: { fileName: 'b.mp4', bytes: mp4Bytes() } },
    ]);
    expect(byName.body.data).toMatchObject({ status: 'available', seatId });
  });

  it('fails a file that is not a video with 2001, keeps the failed record and no bytes', async () => {
    const res = await uploadMultipart<{ videoId: string; field: string }>(stack.baseUrl, tenant.apiKey, [
      { name: 'seatId', value: seatId },
      { name: 'file', value: { fileName: 'notes.mp4', bytes: Buffer.from('just some text pretending to be a video'.repeat(100)) } },
    ]);
    expect(res.status).toBe(422);
    expect(res.body.code).toBe(2001);
    expect(res.body.message).toMatch(/^file: is not a recognised video container/);
    const failed = await get(res.body.data.videoId);
    expect(failed.body.data).toMatchObject({ status: 'failed', failureReason: expect.stringMatching(/^file: /), videoUrl: null });
    expect(await stack.media.size(`videos/${res.body.data.videoId}`)).toBeUndefined();
  });

  it('refuses a file over the cap with 2001 naming the limit, as soon as it is passed, and removes the partial file', async () => {
    const res = await uploadMultipart<{ videoId: string }>(stack.baseUrl, tenant.apiKey, [
      { name: 'seatId', value: seatId },
      { name: 'file', value: { fileName: 'big.mp4', bytes: mp4Bytes(3 * 1024 * 1024) } },
    ]);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 2001, message: 'file: larger than the limit of 1048576 bytes' });
    expect((await get(res.body.data.videoId)).body.data).toMatchObject({
      status: 'failed',
      failureReason: 'file: larger than the limit of 1048576 bytes',
    });
    expect(await stack.media.size(`videos/${res.body.data.videoId}`)).toBeUndefined();
    // The connection's end did not disturb the server: the next request is served.
    expect((await call(stack.baseUrl, 'GET', '/v1/videos?limit=1', { key: tenant.apiKey })).body.code).toBe(0);
  });

  it('refuses malformed uploads with 2001 naming the field, and 1001 first for an anonymous caller', async () => {
    const file = { name: 'file', value: { fileName: 'x.mp4', bytes: mp4Bytes(1024) } };
    const cases: Array<[Parameters<typeof uploadMultipart>[2], RegExp]> = [
      [[{ name: 'seatId', value: seatId }, { name: 'account', value: account }, file], /^seatId: give either seatId or account/],
      [[{ name: 'seatId', value: seatId }], /^file: is required/],
      [[{ name: 'seatId', value: seatId }, { name: 'color', value: 'red' }, file], /^color: is not a known field/],
      [
        [
          { name: 'seatId', value: seatId },
          { name: 'video', value: { fileName: 'x.mp4', bytes: mp4Bytes(1024) } },
        ],
        /^video: is not a known field/,
      ],
    ];
    for (const [parts, message] of cases) {
      const res = await uploadMultipart(stack.baseUrl, tenant.apiKey, parts);
      expect({ status: res.status, code: res.body.code, message: res.body.message }).toEqual({
        status: 422,
        code: 2001,
        message: expect.stringMatching(message),
      });
      const anonymous = await uploadMultipart(stack.baseUrl, undefined, parts);
      expect({ status: anonymous.status, code: anonymous.body.code }).toEqual({ status: 401, code: 1001 });
    }
    // Broken bodies: no boundary, a body cut short, nothing at all, plain text.
    const raw = async (contentType: string | undefined, body: string, key: string | null = tenant.apiKey) => {
      const res = await fetch(`${stack.baseUrl}/v1/videos`, {
        method: 'POST',
        body,
        headers: { ...(contentType ? { 'content-type': contentType } : {}), ...(key ? { authorization: `Bearer ${key}` } : {}) },
      });
      return { status: res.status, body: (await res.json()) as { code: number; message: string } };
    };
    for (const [type, body] of [
      ['multipart/form-data', '--x\r\n'],
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="seatId"\r\n\r\nabc'],
      ['multipart/form-data; boundary=x', ''],
      ['text/plain', 'hello'],
      ['application/json', '{"sourceUrl": 5}'],
      ['application/json', '{'],
      [undefined, ''],
    ] as const) {
      const res = await raw(type, body);
      expect({ type, status: res.status, code: res.body.code }).toEqual({ type, status: 422, code: 2001 });
      expect({ type, code: (await raw(type, body, null)).body.code }).toEqual({ type, code: 1001 });
    }
  });

  it('answers 1005 for a seat that is unknown or another customer’s, 1007 for an unbound seat or an account not bound to the caller', async () => {
    const other = await createTenant(stack);
    const otherSeat = await createBoundSeat(stack, other, Track.VIDEO, uniqueAccount('biz'));
    const { seat: unbound } = await stack.admin.createSeat({ customerId: tenant.customerId, track: Track.VIDEO, name: 'unbound' });
    const file = { name: 'file', value: { fileName: 'x.mp4', bytes: mp4Bytes(1024) } };
    const codeFor = async (name: string, value: string) =>
      (await uploadMultipart(stack.baseUrl, tenant.apiKey, [{ name, value }, file])).body.code;
    expect(await codeFor('seatId', 'seat_doesnotexist')).toBe(1005);
    expect(await codeFor('seatId', otherSeat.id)).toBe(1005);
    expect(await codeFor('seatId', unbound!.id)).toBe(1007);
    expect(await codeFor('account', otherSeat.capabilityAccountId)).toBe(1007);
    expect(await codeFor('account', 'nobody-at-all')).toBe(1007);
    // The same rules for remote uploads.
    expect((await remote({ sourceUrl: `${source.url}/video.mp4`, seatId: otherSeat.id })).body.code).toBe(1005);
    expect((await remote({ sourceUrl: `${source.url}/video.mp4`, account: 'nobody-at-all' })).body.code).toBe(1007);
    // No record was opened for any of them.
    const list = await call<{ items: VideoJson[] }>(stack.baseUrl, 'GET', `/v1/videos?seatId=${unbound!.id}`, { key: tenant.apiKey });
    expect(list.body.data.items).toEqual([]);
  });

  it('fetches a remote source in a workflow and answers once it is fetched: available, with a videoUrl serving the same bytes', async () => {
    const res = await remote({ sourceUrl: `${source.url}/redirect`, seatId });
    expect({ status: res.status, code: res.body.code, message: res.body.message }).toEqual({ status: 200, code: 0, message: 'ok' });
    expect(res.body.data).toMatchObject({
      status: 'available',
      source: 'remote',
      sourceUrl: `${source.url}/redirect`,
      fileName: 'redirect',
      container: 'MP4',
      sizeBytes: source.video.length,
      sha256: sha256(source.video),
      videoUrl: expect.stringMatching(new RegExp(`^${stack.baseUrl}/media/videos/${res.body.data.id}\\?`)),
      fileId: null,
      workflowId: `upload-${res.body.data.id}`,
      statusPath: `/v1/videos/${res.body.data.id}`,
      next: null,
    });
    const download = await fetch(res.body.data.videoUrl!);
    expect(sha256(Buffer.from(await download.arrayBuffer()))).toBe(sha256(source.video));
  });

  it.each([
    ['/missing', 'sourceUrl answered HTTP 404'],
    ['/text.txt', 'file: is not a recognised video container (MP4, MOV, WEBM, …)'],
    ['/huge', 'file: larger than the limit of 1048576 bytes'],
    ['/declared-huge', expect.stringMatching(/^file: larger than the limit of 1048576 bytes/)],
    ['/redirects/6', 'more than 5 redirects'],
  ])('answers a remote upload of %s that fails while it waits with 2001 and the reason, which the record keeps', async (path, reason) => {
    const res = await remote({ sourceUrl: `${source.url}${path}`, seatId });
    expect({ status: res.status, code: res.body.code, message: res.body.message }).toEqual({ status: 422, code: 2001, message: reason });
    const { videoId, field } = res.body.data as unknown as { videoId: string; field: string };
    expect(field).toBe('sourceUrl');
    expect((await get(videoId)).body.data).toMatchObject({ status: 'failed', failureReason: reason, videoUrl: null });
    expect(await stack.media.size(`videos/${videoId}`)).toBeUndefined();
  });

  it('retries a source answering 5xx a few times, then answers 3001 with its status', async () => {
    const before = source.hits.get('/flaky') ?? 0;
    const res = await remote({ sourceUrl: `${source.url}/flaky`, seatId });
    expect({ status: res.status, code: res.body.code, message: res.body.message }).toEqual({
      status: 502,
      code: 3001,
      message: 'sourceUrl answered HTTP 503',
    });
    const { videoId } = res.body.data as unknown as { videoId: string };
    expect((await get(videoId)).body.data).toMatchObject({ status: 'failed', failureReason: 'sourceUrl answered HTTP 503' });
    expect((source.hits.get('/flaky') ?? 0) - before).toBe(3);
  });

  it('refuses sourceUrl values that are not absolute http(s) URLs with 2001', async () => {
    for (const sourceUrl of ['not a url', 'ftp://example.com/a.mp4', 'file:///etc/passwd', 'https://user:pw@example.com/a.mp4', '']) {
      const res = await remote({ sourceUrl, seatId });
      expect({ sourceUrl, code: res.body.code, message: res.body.message }).toEqual({
        sourceUrl,
        code: 2001,
        message: expect.stringMatching(/^sourceUrl/),
      });
    }
    expect((await remote({ sourceUrl: `${source.url}/video.mp4`, seatId, extra: 1 })).body).toMatchObject({
      code: 2001,
      message: expect.stringMatching(/^extra/),
    });
    expect((await remote({ sourceUrl: `${source.url}/video.mp4`, seatId: 'a\u0000b' })).body.code).toBe(2001);
  });

  describe('with no seatId or account', () => {
    const file = (name = 'any.mp4') => ({ name: 'file', value: { fileName: name, bytes: mp4Bytes(2048) } });

    it('uploads to the only bound seat, by multipart and by sourceUrl; unbound seats do not count', async () => {
      const own = await createTenant(stack);
      await stack.admin.createSeat({ customerId: own.customerId, track: Track.VIDEO, name: 'not bound yet' });
      const only = await createBoundSeat(stack, own, Track.VIDEO, uniqueAccount('biz'));
      const direct = await uploadMultipart<VideoJson>(stack.baseUrl, own.apiKey, [file('bare.mp4')]);
      expect(direct.body).toMatchObject({
        code: 0,
        data: { seatId: only.id, track: 'video', status: 'available', videoUrl: expect.any(String) },
      });
      const fetched = await remote({ sourceUrl: `${source.url}/video.mp4` }, own.apiKey);
      expect(fetched.body).toMatchObject({
        code: 0,
        data: { seatId: only.id, track: 'video', status: 'available', videoUrl: expect.any(String) },
      });
    });

    it('takes a seat named after the file part, the order any form builder may use, and keeps nothing staged', async () => {
      const own = await createTenant(stack);
      await createBoundSeat(stack, own, Track.VIDEO, uniqueAccount('biz'));
      const otherAccount = uniqueAccount('biz');
      const other = await createBoundSeat(stack, own, Track.VIDEO, otherAccount);
      const bytes = mp4Bytes(200 * 1024);
      const res = await uploadMultipart<VideoJson>(stack.baseUrl, own.apiKey, [
        { name: 'file', value: { fileName: 'late.mp4', bytes } },
        { name: 'account', value: otherAccount },
      ]);
      expect(res.body).toMatchObject({
        code: 0,
        data: { seatId: other.id, status: 'available', sizeBytes: bytes.length, sha256: sha256(bytes), fileName: 'late.mp4' },
      });
      expect(await stack.media.size(`videos/${res.body.data.id}`)).toBe(bytes.length);
      expect(await stagedUploads(stack)).toEqual([]);
    });

    it('refuses a target after the file as it refuses one before it, and keeps no bytes', async () => {
      const own = await createTenant(stack);
      await createBoundSeat(stack, own, Track.VIDEO, uniqueAccount('biz'));
      const before = await uploadMultipart(stack.baseUrl, own.apiKey, [{ name: 'seatId', value: 'seat_elsewhere' }, file()]);
      const after = await uploadMultipart(stack.baseUrl, own.apiKey, [file(), { name: 'seatId', value: 'seat_elsewhere' }]);
      expect({ status: after.status, body: after.body }).toEqual({ status: before.status, body: before.body });
      expect(after.body.code).toBe(1005);
      const unknown = await uploadMultipart(stack.baseUrl, own.apiKey, [file(), { name: 'colour', value: 'blue' }]);
      expect(unknown.body).toMatchObject({ code: 2001, message: expect.stringMatching(/^colour: is not a known field/) });
      const library = await call<{ items: VideoJson[] }>(stack.baseUrl, 'GET', '/v1/videos', { key: own.apiKey });
      expect(library.body.data.items).toEqual([]);
      expect(await stagedUploads(stack)).toEqual([]);
    });

    it('refuses a target named both before and after the file with 2001, and keeps no bytes', async () => {
      const own = await createTenant(stack);
      const bizAccount = uniqueAccount('biz');
      const seat = await createBoundSeat(stack, own, Track.VIDEO, bizAccount);
      const res = await uploadMultipart<{ videoId: string; field: string }>(stack.baseUrl, own.apiKey, [
        { name: 'seatId', value: seat.id },
        file(),
        { name: 'account', value: bizAccount },
      ]);
      expect({ status: res.status, code: res.body.code, message: res.body.message }).toEqual({
        status: 422,
        code: 2001,
        message: expect.stringMatching(/^account: the target was already named before the file part/),
      });
      const library = await call<{ items: VideoJson[] }>(stack.baseUrl, 'GET', '/v1/videos', { key: own.apiKey });
      expect(library.body.data.items).toEqual([expect.objectContaining({ status: 'failed' })]);
      expect(await stack.media.size(`videos/${library.body.data.items[0]!.id}`)).toBeUndefined();
    });

    it('takes seatId after the file from curl -F file=@clip.mp4 -F seatId=…, as it takes it before', async () => {
      const bytes = mp4Bytes(900 * 1024);
      const dir = mkdtempSync(path.join(os.tmpdir(), 'vps-curl-'));
      const clip = path.join(dir, 'clip.mp4');
      writeFileSync(clip, bytes);
      const curl = async (...form: string[]) => {
        const { stdout } = await execFileAsync('curl', [
          '-sS',
          '-H',
          `authorization: Bearer ${tenant.apiKey}`,
          ...form.flatMap((f) => ['-F', f]),
          `${stack.baseUrl}/v1/videos`,
        ]);
        return { body: JSON.parse(stdout) as { code: number; data: VideoJson } };
      };
      try {
        const after = await curl(`file=@${clip};type=video/mp4`, `seatId=${seatId}`);
        expect(after.body).toMatchObject({ code: 0, data: { seatId, status: 'available', sha256: sha256(bytes), fileName: 'clip.mp4' } });
        const before = await curl(`seatId=${seatId}`, `file=@${clip};type=video/mp4`);
        expect(before.body).toMatchObject({ code: 0, data: { seatId, sha256: sha256(bytes) } });
        const served = await fetch(after.body.data.videoUrl!);
        expect(sha256(Buffer.from(await served.arrayBuffer()))).toBe(sha256(bytes));
        expect(await stagedUploads(stack)).toEqual([]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('answers 2001 naming every bound seat, its track and account, and the fields to send, when there are several; a named seat still wins', async () => {
      const own = await createTenant(stack);
      const accounts = { video: uniqueAccount('biz'), shop: uniqueAccount('creator') };
      const videoSeat = await createBoundSeat(stack, own, Track.VIDEO, accounts.video);
      const shopSeat = await createBoundSeat(stack, own, Track.SHOP, accounts.shop);
      const seats = [
        { id: videoSeat.id, text: `${videoSeat.id} (video, account ${accounts.video})` },
        { id: shopSeat.id, text: `${shopSeat.id} (shop, account ${accounts.shop})` },
      ].sort((a, b) => a.id.localeCompare(b.id));
      const choose = `seatId: is required when you have more than one bound seat; send seatId (one of: ${seats.map((x) => x.text).join(', ')}) or account`;

      const direct = await uploadMultipart(stack.baseUrl, own.apiKey, [file()]);
      expect({ status: direct.status, body: direct.body }).toEqual({
        status: 422,
        body: {
          code: 2001,
          message: `${choose}, as a field of the form`,
          data: { field: 'seatId', seatIds: seats.map((x) => x.id) },
        },
      });
      const fetched = await remote({ sourceUrl: `${source.url}/video.mp4` }, own.apiKey);
      expect({ status: fetched.status, code: fetched.body.code, message: fetched.body.message }).toEqual({
        status: 422,
        code: 2001,
        message: `${choose}, in the JSON body`,
      });
      // Nothing was opened for either.
      expect((await call<{ items: VideoJson[] }>(stack.baseUrl, 'GET', '/v1/videos', { key: own.apiKey })).body.data.items).toEqual([]);

      const bySeat = await uploadMultipart<VideoJson>(stack.baseUrl, own.apiKey, [{ name: 'seatId', value: videoSeat.id }, file()]);
      expect(bySeat.body).toMatchObject({ code: 0, data: { seatId: videoSeat.id, status: 'available' } });
      const byAccount = await remote({ sourceUrl: `${source.url}/video.mp4`, account: accounts.video }, own.apiKey);
      expect(byAccount.body).toMatchObject({ code: 0, data: { seatId: videoSeat.id, status: 'available' } });
    });

    it('answers 1007 when no seat is bound, saying to bind one first', async () => {
      const unbound = await createTenant(stack);
      await stack.admin.createSeat({ customerId: unbound.customerId, track: Track.VIDEO, name: 'not bound yet' });
      const res = await uploadMultipart(stack.baseUrl, unbound.apiKey, [file()]);
      expect({ status: res.status, code: res.body.code, message: res.body.message }).toEqual({
        status: 409,
        code: 1007,
        message: 'no seat to upload to: your seat is not bound to an account; bind one first (GET /v1/seats lists yours), then upload',
      });
      const seatless = await createTenant(stack);
      expect((await remote({ sourceUrl: `${source.url}/video.mp4` }, seatless.apiKey)).body).toMatchObject({
        code: 1007,
        message: 'no seat to upload to: you have no seats; bind one first (GET /v1/seats lists yours), then upload',
      });
    });
  });

  it('lists the library newest first with cursor pages and filters, and gets single records', async () => {
    const own = await createTenant(stack);
    const seat = await createBoundSeat(stack, own, Track.VIDEO, uniqueAccount('biz'));
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await uploadMultipart<VideoJson>(stack.baseUrl, own.apiKey, [
        { name: 'seatId', value: seat.id },
        { name: 'file', value: { fileName: `${i}.mp4`, bytes: mp4Bytes(2048) } },
      ]);
      ids.push(res.body.data.id);
    }
    const failed = await uploadMultipart<{ videoId: string }>(stack.baseUrl, own.apiKey, [
      { name: 'seatId', value: seat.id },
      { name: 'file', value: { fileName: 'bad.mp4', bytes: Buffer.from('nope') } },
    ]);
    const newestFirst = [failed.body.data.videoId, ...[...ids].reverse()];

    const seen: string[] = [];
    let cursor: string | null = '';
    let pages = 0;
    while (cursor !== null) {
      const page: Awaited<ReturnType<typeof call<{ items: VideoJson[]; nextCursor: string | null }>>> = await call(
        stack.baseUrl,
        'GET',
        `/v1/videos?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        { key: own.apiKey },
      );
      expect(page.body.code).toBe(0);
      seen.push(...page.body.data.items.map((v) => v.id));
      cursor = page.body.data.nextCursor;
      pages++;
    }
    expect(seen).toEqual(newestFirst);
    expect(pages).toBe(3);
    const onlyFailed = await call<{ items: VideoJson[] }>(stack.baseUrl, 'GET', '/v1/videos?status=failed', { key: own.apiKey });
    expect(onlyFailed.body.data.items.map((v) => v.id)).toEqual([failed.body.data.videoId]);
    const defaultPage = await call<{ items: VideoJson[]; nextCursor: string | null }>(
      stack.baseUrl,
      'GET',
      `/v1/videos?seatId=${seat.id}`,
      { key: own.apiKey },
    );
    expect(defaultPage.body.data).toEqual({ items: expect.any(Array), nextCursor: null });
    expect(defaultPage.body.data.items).toHaveLength(6);

    // Another customer sees none of it.
    expect(
      (await call<{ items: unknown[] }>(stack.baseUrl, 'GET', '/v1/videos', { key: (await createTenant(stack)).apiKey })).body.data.items,
    ).toEqual([]);
    expect((await get(ids[0]!)).body.code).toBe(1005);
    for (const query of ['limit=0', 'limit=101', 'limit=x', 'status=gone', 'cursor=nonsense', 'other=1']) {
      const res = await call(stack.baseUrl, 'GET', `/v1/videos?${query}`, { key: own.apiKey });
      expect({ query, code: res.body.code }).toEqual({ query, code: 2001 });
    }
    expect((await get('vid_unknown', own.apiKey)).body.code).toBe(1005);
  });

  it('soft-deletes: expired at once, still listed, the file removed and the URL refused; deleting again answers the same', async () => {
    const res = await uploadMultipart<VideoJson>(stack.baseUrl, tenant.apiKey, [
      { name: 'seatId', value: seatId },
      { name: 'file', value: { fileName: 'gone.mp4', bytes: mp4Bytes(4096) } },
    ]);
    const { id, videoUrl } = res.body.data;
    expect((await fetch(videoUrl!)).status).toBe(200);

    const deleted = await call<VideoJson>(stack.baseUrl, 'DELETE', `/v1/videos/${id}`, { key: tenant.apiKey });
    expect(deleted.body.code).toBe(0);
    expect(deleted.body.data).toMatchObject({ id, status: 'expired', videoUrl: null, deletedAt: expect.any(String) });
    expect(await stack.media.size(`videos/${id}`)).toBeUndefined();
    const media = await fetch(videoUrl!);
    expect(media.status).toBe(404);
    expect(await media.json()).toMatchObject({ code: 1005 });

    const again = await call<VideoJson>(stack.baseUrl, 'DELETE', `/v1/videos/${id}`, { key: tenant.apiKey });
    expect(again.body).toEqual(deleted.body);
    expect((await get(id)).body.data).toEqual(deleted.body.data);
    const listed = await call<{ items: VideoJson[] }>(stack.baseUrl, 'GET', '/v1/videos?status=expired&limit=100', { key: tenant.apiKey });
    expect(listed.body.data.items.map((v) => v.id)).toContain(id);
    expect((await call(stack.baseUrl, 'DELETE', '/v1/videos/vid_00000000000000000000000000', { key: tenant.apiKey })).body.code).toBe(1005);
  });

  it('refuses tampered, expired or malformed media URLs with 404 and code 1005', async () => {
    const res = await uploadMultipart<VideoJson>(stack.baseUrl, tenant.apiKey, [
      { name: 'seatId', value: seatId },
      { name: 'file', value: { fileName: 'a.mp4', bytes: mp4Bytes(2048) } },
    ]);
    const url = new URL(res.body.data.videoUrl!);
    const signature = url.searchParams.get('signature')!;
    // A different first character, whatever the signature starts with (1 in 64 start with "A").
    const tampered = `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`;
    const variants = [
      url.href.replace(`signature=${signature}`, `signature=${tampered}`),
      url.href.replace(/expires=\d+/, `expires=${Number(url.searchParams.get('expires')) + 1}`),
      url.href.replace(/expires=\d+/, 'expires=1000'),
      `${url.origin}${url.pathname}`,
      `${url.origin}/media/videos/vid_x?expires=1&signature=x`,
      `${url.href}&extra=1`,
      `${url.origin}${url.pathname}?expires=abc&signature=x`,
    ];
    for (const href of variants) {
      const media = await fetch(href);
      expect({ href, status: media.status, code: ((await media.json()) as { code: number }).code }).toEqual({
        href,
        status: 404,
        code: 1005,
      });
    }
  });

  it('answers a repeated upload with the same Idempotency-Key with the same record, storing the bytes once', async () => {
    const bytes = mp4Bytes(8192);
    const parts = [
      { name: 'seatId', value: seatId },
      { name: 'file', value: { fileName: 'once.mp4', bytes } },
    ];
    const headers = { 'idempotency-key': `upload-${Date.now()}` };
    const first = await uploadMultipart<VideoJson>(stack.baseUrl, tenant.apiKey, parts, headers);
    const again = await uploadMultipart<VideoJson>(stack.baseUrl, tenant.apiKey, parts, headers);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const { statusPath: _a, videoUrl: _u1, ...firstRecord } = first.body.data;
    const { statusPath: _b, videoUrl: _u2, ...againRecord } = again.body.data;
    expect(againRecord).toEqual(firstRecord);
    const remoteHeaders = { 'idempotency-key': `remote-${Date.now()}` };
    const r1 = await call<VideoJson>(stack.baseUrl, 'POST', '/v1/videos', {
      key: tenant.apiKey,
      json: { sourceUrl: `${source.url}/video.mp4`, seatId },
      headers: remoteHeaders,
    });
    const r2 = await call<VideoJson>(stack.baseUrl, 'POST', '/v1/videos', {
      key: tenant.apiKey,
      json: { sourceUrl: `${source.url}/video.mp4`, seatId },
      headers: remoteHeaders,
    });
    expect(r2.body.data.id).toBe(r1.body.data.id);
  });

  it('fails the record when the client abandons an upload midway, and keeps serving', async () => {
    const own = await createTenant(stack);
    const seat = await createBoundSeat(stack, own, Track.VIDEO, uniqueAccount('biz'));
    const boundary = 'cut-short';
    let sent = 0;
    const body = new Readable({
      read() {
        if (sent === 0)
          this.push(
            `--${boundary}\r\nContent-Disposition: form-data; name="seatId"\r\n\r\n${seat.id}\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.mp4"\r\n\r\n`,
          );
        if (sent >= 256 * 1024) {
          this.destroy(new Error('client gave up'));
          return;
        }
        sent += 64 * 1024;
        this.push(mp4Bytes(64 * 1024));
      },
    });
    await expect(
      request(`${stack.baseUrl}/v1/videos`, {
        method: 'POST',
        body,
        headers: { authorization: `Bearer ${own.apiKey}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      }),
    ).rejects.toThrow();
    const list = await eventually(
      () => call<{ items: VideoJson[] }>(stack.baseUrl, 'GET', '/v1/videos', { key: own.apiKey }),
      (r) => r.body.data.items[0]?.status === 'failed',
      10_000,
      100,
    );
    expect(list.body.data.items).toEqual([
      expect.objectContaining({ status: 'failed', failureReason: 'file: the upload was interrupted before the file ended' }),
    ]);
    expect(await stack.media.size(`videos/${list.body.data.items[0]!.id}`)).toBeUndefined();
  });

  it('completes an upload only with a valid ticket, and only once (core, over Connect)', async () => {
    const transport = createConnectTransport({ baseUrl: stack.coreUrl, httpVersion: '1.1' });
    const videos = createClient(VideoService, transport);
    const codeOf = async (p: Promise<unknown>) =>
      p.then(
        () => 0,
        (err: unknown) => Number((err as ConnectError).metadata.get('vps-code')),
      );
    expect(await codeOf(videos.completeUpload({ ticket: 'vid_x.1.abc', sizeBytes: 1n, sha256: 'x', container: 'MP4' }))).toBe(1001);
    const begun = await videos.beginUpload({ seatId }, { headers: { authorization: `Bearer ${tenant.apiKey}` } });
    expect(begun).toMatchObject({ storageKey: `videos/${begun.video!.id}`, maxBytes: 1024n * 1024n });
    const bytes = mp4Bytes(1024);
    const stored = await stack.media.write(begun.storageKey, Readable.from([bytes]), { maxBytes: 2048 });
    const complete = { ticket: begun.ticket, sizeBytes: BigInt(stored.sizeBytes), sha256: stored.sha256, container: 'MP4' };
    expect((await videos.completeUpload(complete)).video!.status).toBe('available');
    expect(await codeOf(videos.completeUpload(complete))).toBe(2001);
    // Without a key, BeginUpload is refused like any write.
    expect(await codeOf(videos.beginUpload({ seatId }))).toBe(1001);
  });

  it('refuses uploads and deletes with 1003 once the plan has expired, before storing anything; reads still work', async () => {
    const lapsed = await createTenant(stack, { planExpiresAt: new Date(Date.now() - 60_000) });
    const seat = await createBoundSeat(stack, lapsed, Track.VIDEO, uniqueAccount('biz'));
    const res = await uploadMultipart(stack.baseUrl, lapsed.apiKey, [
      { name: 'seatId', value: seat.id },
      { name: 'file', value: { fileName: 'x.mp4', bytes: mp4Bytes(64 * 1024) } },
    ]);
    expect({ status: res.status, code: res.body.code }).toEqual({ status: 403, code: 1003 });
    expect((await remote({ sourceUrl: `${source.url}/video.mp4`, seatId: seat.id }, lapsed.apiKey)).body.code).toBe(1003);
    expect((await call(stack.baseUrl, 'DELETE', '/v1/videos/vid_00000000000000000000000000', { key: lapsed.apiKey })).body.code).toBe(1003);
    const list = await call<{ items: unknown[] }>(stack.baseUrl, 'GET', '/v1/videos', { key: lapsed.apiKey });
    expect(list.body).toMatchObject({ code: 0, data: { items: [] } });
  });
});

describe('a remote upload that outlasts the wait (VIDEO_FETCH_WAIT_MS)', () => {
  const WAIT_MS = 1_000;
  let env: WorkingStack;
  let source: SourceServer;
  let tenant: Tenant;
  let seatId: string;

  beforeAll(async () => {
    env = await startWorkingStack('videos-slow', { stack: { videos: { maxBytes: 1024 * 1024, fetchWaitMs: WAIT_MS } } });
    source = await startSourceServer();
    tenant = await createTenant(env.stack);
    seatId = (await createBoundSeat(env.stack, tenant, Track.VIDEO, uniqueAccount('biz'))).id;
  }, 120_000);
  afterAll(async () => {
    await env?.close();
    await source?.close();
  });

  it('answers processing after the wait, saying where to poll, and the record completes later', async () => {
    const started = Date.now();
    const res = await call<VideoJson>(env.stack.baseUrl, 'POST', '/v1/videos', {
      key: tenant.apiKey,
      json: { sourceUrl: `${source.url}/slow?ms=4000`, seatId },
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(WAIT_MS);
    expect({ code: res.body.code, message: res.body.message }).toEqual({ code: 0, message: 'ok' });
    const { id } = res.body.data;
    expect(res.body.data).toMatchObject({
      status: 'processing',
      videoUrl: null,
      statusPath: `/v1/videos/${id}`,
      next: `the upload is still running: GET /v1/videos/${id} every 5 to 10 seconds until status is available (with videoUrl) or failed (with failureReason), or subscribe to vplat.video.available and vplat.video.failed, which announce it`,
    });
    const done = await eventually(
      () => call<VideoJson>(env.stack.baseUrl, 'GET', res.body.data.statusPath!, { key: tenant.apiKey }),
      (r) => r.body.data.status !== 'processing',
      20_000,
      100,
    );
    expect(done.body.data).toMatchObject({ status: 'available', sha256: sha256(source.video), videoUrl: expect.any(String) });
    const download = await fetch(done.body.data.videoUrl!);
    expect(sha256(Buffer.from(await download.arrayBuffer()))).toBe(sha256(source.video));
  });
});
