/**
 * Direct uploads on the S3 store when things go wrong past the first parts: a client that gives up
 * midway leaves no object and no unfinished multipart upload in the bucket, and a store that goes
 * away midway is a retryable 5000 in the envelope, not the caller's fault (what parts it kept are
 * the workers' orphan sweep's). Either way the record ends failed with the reason, never stuck
 * `uploading`.
 */
import { ListMultipartUploadsCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { Track } from '../../gen/vps/seat/v1/seat_pb';
import { S3MediaStore } from '../../core/media/s3-store';
import { call } from '../helpers/http';
import { adminS3Client, s3Env, startMinio, testStoreSettings, type S3Server } from '../helpers/minio-server';
import { eventually } from '../helpers/receivers';
import { startRangeSource } from '../helpers/range-source';
import {
  createBoundSeat,
  createTenant,
  startStack,
  startStackWorker,
  uniqueAccount,
  unreachableUpstream,
  type Stack,
} from '../helpers/stack';
import type { RunningWorker } from '../../worker/worker';
import { mp4Bytes } from '../helpers/videos';

/** testStoreSettings' part size. */
const PART = 5 * 1024 * 1024;
const PREFIX = 'failures/';

interface VideoJson {
  id: string;
  status: string;
  failureReason: string | null;
}

/**
 * A multipart body that sends `before` bytes of file, calls `midway`, then sends until `total` or
 * fails when `cutAt` is reached; the seat comes before the file, or after it with `seatLast`.
 */
function uploadBody(
  seatId: string,
  boundary: string,
  opts: { total: number; cutAt?: number; midway?: () => void; midwayAt?: number; seatLast?: boolean },
): Readable {
  let sent = 0;
  let started = false;
  let called = false;
  const chunk = mp4Bytes(256 * 1024);
  return new Readable({
    read() {
      if (!started) {
        started = true;
        const seat = `--${boundary}\r\nContent-Disposition: form-data; name="seatId"\r\n\r\n${seatId}\r\n`;
        this.push(`${opts.seatLast ? '' : seat}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.mp4"\r\n\r\n`);
      }
      if (opts.cutAt !== undefined && sent >= opts.cutAt) return this.destroy(new Error('client gave up'));
      if (!called && opts.midway && sent >= (opts.midwayAt ?? Infinity)) {
        called = true;
        opts.midway();
      }
      if (sent >= opts.total) {
        this.push(
          `\r\n${opts.seatLast ? `--${boundary}\r\nContent-Disposition: form-data; name="seatId"\r\n\r\n${seatId}\r\n` : ''}--${boundary}--\r\n`,
        );
        this.push(null);
        return;
      }
      sent += chunk.length;
      this.push(chunk);
    },
  });
}

describe('direct uploads on the S3 store that fail midway', () => {
  let minio: S3Server;
  let store: S3MediaStore;
  let admin: S3Client;
  let stack: Stack;
  let worker: RunningWorker;
  const taskQueue = `vps-s3-failures-${process.pid}-${Date.now()}`;

  beforeAll(async () => {
    // A MinIO of this file's own, so the outage below touches no other suite.
    minio = await startMinio();
    store = new S3MediaStore(testStoreSettings(minio, minio.bucket, PREFIX, { requestTimeoutMs: 3_000 }));
    admin = adminS3Client(minio);
    stack = await startStack({
      taskQueue,
      mediaStore: { store, env: s3Env(minio, minio.bucket, PREFIX) },
      videos: { maxBytes: 64 * 1024 * 1024, fetchWaitMs: 500 },
    });
    worker = await startStackWorker(stack, taskQueue, unreachableUpstream());
  }, 60_000);
  afterAll(async () => {
    await worker?.stop();
    await stack?.close();
    store?.close();
    admin?.destroy();
    await minio?.stop();
  });

  const bucketContents = async () => {
    const objects = (await admin.send(new ListObjectsV2Command({ Bucket: minio.bucket, Prefix: PREFIX }))).Contents ?? [];
    const uploads = ((await admin.send(new ListMultipartUploadsCommand({ Bucket: minio.bucket }))).Uploads ?? []).filter((u) =>
      u.Key!.startsWith(PREFIX),
    );
    return { objects: objects.map((o) => o.Key), uploads: uploads.map((u) => u.Key) };
  };
  const recordsOf = (key: string) => call<{ items: VideoJson[] }>(stack.baseUrl, 'GET', '/v1/videos', { key });

  it('leaves no object and no parts when the client gives up after two parts, and fails the record', async () => {
    const tenant = await createTenant(stack);
    const seat = await createBoundSeat(stack, tenant, Track.VIDEO, uniqueAccount('biz'));
    const boundary = 'cut-after-parts';
    const body = uploadBody(seat.id, boundary, { total: 40 * 1024 * 1024, cutAt: 2 * PART + 1024 * 1024 });
    await expect(
      request(`${stack.baseUrl}/v1/videos`, {
        method: 'POST',
        body,
        headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      }),
    ).rejects.toThrow();
    const list = await eventually(
      () => recordsOf(tenant.apiKey),
      (r) => r.body.data.items[0]?.status === 'failed',
      10_000,
      100,
    );
    expect(list.body.data.items).toEqual([
      expect.objectContaining({ status: 'failed', failureReason: 'file: the upload was interrupted before the file ended' }),
    ]);
    expect(await bucketContents()).toEqual({ objects: [], uploads: [] });
  });

  it('leaves nothing staged and opens no record when a client sending its file before its seat gives up, and binds a whole one', async () => {
    const tenant = await createTenant(stack);
    const seat = await createBoundSeat(stack, tenant, Track.VIDEO, uniqueAccount('biz'));
    const send = (boundary: string, opts: { total: number; cutAt?: number }) =>
      request(`${stack.baseUrl}/v1/videos`, {
        method: 'POST',
        body: uploadBody(seat.id, boundary, { ...opts, seatLast: true }),
        headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      });
    await expect(send('cut-before-seat', { total: 40 * 1024 * 1024, cutAt: 2 * PART + 1024 * 1024 })).rejects.toThrow();
    await eventually(
      () => bucketContents(),
      (contents) => contents.uploads.length === 0,
      10_000,
      100,
    );
    expect(await bucketContents()).toEqual({ objects: [], uploads: [] });
    expect((await recordsOf(tenant.apiKey)).body.data.items).toEqual([]);
    // A whole one is moved to its record's key: a copy inside the bucket, nothing left staged.
    const whole = await send('whole-before-seat', { total: 3 * PART });
    const answer = (await whole.body.json()) as { code: number; data: { id: string; status: string; sizeBytes: number } };
    expect(answer).toMatchObject({ code: 0, data: { status: 'available' } });
    expect(await bucketContents()).toEqual({ objects: [`${PREFIX}videos/${answer.data.id}`], uploads: [] });
  }, 60_000);

  it("answers a retryable 5000 (HTTP 500 by the spec's table) when the store goes away midway, and fails the record rather than leaving it uploading", async () => {
    const tenant = await createTenant(stack);
    const seat = await createBoundSeat(stack, tenant, Track.VIDEO, uniqueAccount('biz'));
    const boundary = 'store-gone';
    let stopping: Promise<void> | undefined;
    const body = uploadBody(seat.id, boundary, {
      total: 30 * 1024 * 1024,
      midwayAt: PART + 1024 * 1024,
      midway: () => (stopping = minio.stop()),
    });
    const res = await request(`${stack.baseUrl}/v1/videos`, {
      method: 'POST',
      body,
      headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    const answer = (await res.body.json()) as { code: number; message: string; data: Record<string, unknown> };
    await stopping;
    expect(res.statusCode).toBe(500);
    expect(res.headers['retry-after']).toBe('1');
    expect(answer).toEqual({
      code: 5000,
      message: expect.stringMatching(/^media store unavailable \(write\): .*; retry after the Retry-After seconds$/),
      data: { retryable: true },
    });
    const list = await recordsOf(tenant.apiKey);
    expect(list.body.data.items).toEqual([
      expect.objectContaining({ status: 'failed', failureReason: 'file: the media store was unavailable; upload again' }),
    ]);
  }, 60_000);

  it('fails a remote fetch the store cannot take with the store named as the reason, not the source', async () => {
    await minio.stop();
    const tenant = await createTenant(stack);
    const seat = await createBoundSeat(stack, tenant, Track.VIDEO, uniqueAccount('biz'));
    const source = await startRangeSource({ bytes: 2 * 1024 * 1024, bytesPerSecond: 64 * 1024 * 1024, ranges: true });
    try {
      const started = await call<VideoJson>(stack.baseUrl, 'POST', '/v1/videos', {
        key: tenant.apiKey,
        json: { sourceUrl: source.url, seatId: seat.id },
      });
      expect(started.body).toMatchObject({ code: 0, data: { status: 'processing' } });
      // Three attempts a second or two apart, each failing once the SDK's own retries give up; polled
      // each second, inside the stack's rate limit.
      const video = await eventually(
        async () => (await call<VideoJson>(stack.baseUrl, 'GET', `/v1/videos/${started.body.data.id}`, { key: tenant.apiKey })).body.data,
        (v) => v.status !== 'processing',
        60_000,
        1_000,
      );
      expect(video).toMatchObject({ status: 'failed', failureReason: expect.stringMatching(/^media store unavailable \(write\): /) });
    } finally {
      await source.close();
    }
  }, 90_000);
});
