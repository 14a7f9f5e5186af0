/**
 * The suite's multi-process mode: the roles as separate `vps serve` processes (one emulator, one
 * core, two gateways, two workers) against one Temporal dev server and a private Postgres cluster
 * (drills/topology.ts), checked from outside, across processes: what one gateway accepts another
 * reports, a stream survives the loss of its gateway, pushes arrive once per event, and the rate
 * limit is one bucket whichever gateway a request reaches. Every process has a data folder of its
 * own and media live in MinIO: nothing is shared through the file system.
 */
import { startTopology, type SeatHandle, type TenantHandle, type Topology } from '../../drills/topology';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { mp4File } from '../helpers/mp4';
import { sha256, uploadMultipart } from '../helpers/videos';
import {
  api,
  createEndpoint,
  emitPlatformEvent,
  isSettled,
  listEvents,
  listRecords,
  publishOnce,
  Receiver,
  SseFollower,
  type PublishRecord,
} from '../../drills/traffic';

/** Four times the usual limit, so the tests' own polling stays inside it; the burst below has its own key. */
const RATE_LIMIT = 240;

/** Polls `read` until `done` holds or the deadline passes, then returns the last value. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

describe('the roles as separate processes', () => {
  let topology: Topology;
  let tenant: TenantHandle;
  let seat: SeatHandle;
  let gw1: string;
  let gw2: string;

  beforeAll(async () => {
    topology = await startTopology({ rateLimitPerMinute: RATE_LIMIT });
    [gw1, gw2] = topology.urls.gateways;
    tenant = await topology.createTenant();
    seat = await topology.bindVideoSeat(tenant);
  }, 240_000);
  afterAll(async () => {
    await topology?.close();
  }, 60_000);

  it('reports through gateway 2 the terminal status of a publish gateway 1 accepted, posted once upstream', async () => {
    const attempt = await publishOnce([gw1], 0, tenant.apiKey, seat, topology.urls.media, 'across gateways', { tries: 1 });
    expect(attempt.error).toBeUndefined();
    const record = await until(
      async () => (await listRecords(gw2, tenant.apiKey)).find((r) => r.id === attempt.recordId),
      (r: PublishRecord | undefined) => r !== undefined && isSettled(r),
      30_000,
    );
    expect(record).toMatchObject({ id: attempt.recordId, status: 'publish_complete', postId: expect.stringMatching(/^\d+$/) });
    const { calls } = await topology.sandbox<{ calls: Array<{ code: number }> }>(
      'GET',
      `/_sandbox/calls?path=${encodeURIComponent('/open_api/v1.3/business/video/publish/')}&openId=${seat.openId}`,
    );
    expect(calls.filter((c) => c.code === 0)).toHaveLength(1);
  }, 60_000);

  it('streams events to a client on gateway 1 that, when gateway 1 dies, resumes on gateway 2 with Last-Event-ID and misses nothing', async () => {
    const t = await topology.createTenant();
    const s = await topology.bindVideoSeat(t);
    // The follower moves to the next gateway when its stream fails, as a client behind a balancer.
    const follower = new SseFollower('sse', () => [gw1, gw2], t.apiKey, 0);
    await follower.start();
    try {
      const before = [];
      for (let i = 0; i < 3; i++) before.push(await emitPlatformEvent(topology, s, 'message', `before ${i}`));
      await until(
        async () => follower.received.length,
        (n) => n >= 3,
        20_000,
      );
      expect(follower.received).toHaveLength(3);

      await topology.kill('gateway1', 'SIGKILL');
      for (let i = 0; i < 3; i++) await emitPlatformEvent(topology, s, 'message', `after ${i}`);
      await until(
        async () => follower.received.length,
        (n) => n >= 6,
        30_000,
      );

      const log = await listEvents(gw2, t.apiKey);
      expect(log).toHaveLength(6);
      expect(follower.received).toEqual(log.map((e) => e.id));
      expect(follower.resumes).toBeGreaterThanOrEqual(1);
    } finally {
      await follower.stop();
      await topology.start('gateway1');
    }
  }, 120_000);

  it('pushes every event to a webhook endpoint once, whichever gateway received it and whichever worker delivered it', async () => {
    const t = await topology.createTenant();
    const s = await topology.bindVideoSeat(t);
    const receiver = new Receiver('endpoint');
    await receiver.start();
    try {
      await createEndpoint(gw2, t.apiKey, receiver.url);
      for (let i = 0; i < 4; i++) await emitPlatformEvent(topology, s, i % 2 ? 'comment' : 'message', `hello ${i}`);
      const log = await until(
        () => listEvents(gw1, t.apiKey),
        (events) => events.length >= 4,
        20_000,
      );
      expect(log).toHaveLength(4);
      await until(
        async () => receiver.delivered.size,
        (n) => n >= 4,
        30_000,
      );
      expect([...receiver.delivered.keys()].sort()).toEqual(log.map((e) => e.id).sort());
      // Nothing failed, so nothing was pushed twice.
      expect([...receiver.delivered.values()].every((n) => n === 1)).toBe(true);
    } finally {
      await receiver.close();
    }
  }, 90_000);

  it('publishes a video uploaded through gateway 2 from the S3 store: no process shares a folder with another', async () => {
    const bytes = mp4File({ durationMs: 6_000 });
    const upload = await uploadMultipart<{ id: string; sha256: string; videoUrl: string }>(gw2, tenant.apiKey, [
      { name: 'account', value: seat.openId },
      { name: 'file', value: { fileName: 'clip.mp4', bytes } },
    ]);
    expect(upload.body).toMatchObject({ code: 0, data: { sha256: sha256(bytes) } });
    const video = upload.body.data;
    // Core signs media URLs on gateway 1's origin: the platform downloads through a gateway that never saw the file.
    expect(video.videoUrl.startsWith(`${gw1}/media/`)).toBe(true);
    const download = await fetch(video.videoUrl);
    expect(sha256(Buffer.from(await download.arrayBuffer()))).toBe(sha256(bytes));

    const published = await api<{ id: string }>(gw1, tenant.apiKey, 'POST', '/v1/vplat/v1.3/business/video/publish', {
      json: { account: seat.openId, videoId: video.id, caption: 'from the bucket', isBrandOrganic: false, isBrandedContent: false },
    });
    expect(published.code).toBe(0);
    const record = await until(
      async () => (await listRecords(gw2, tenant.apiKey)).find((r) => r.id === published.data.id),
      (r: PublishRecord | undefined) => r !== undefined && isSettled(r),
      30_000,
    );
    expect(record).toMatchObject({ status: 'publish_complete', postId: expect.stringMatching(/^\d+$/) });
    // The data folders (one per process, those that write anything) hold no media: the bytes are in the bucket only.
    const dataRoot = path.join(topology.dir, 'data');
    const files = readdirSync(dataRoot, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && /vid_|\.mp4$/.test(e.name));
    expect(files).toEqual([]);
  }, 60_000);

  it('holds one rate-limit bucket per key across both gateways', async () => {
    const key = await topology.createApiKey(tenant, 'burst');
    const started = Date.now();
    let accepted = 0;
    let refused: Awaited<ReturnType<typeof api>> | undefined;
    for (let i = 0; i < RATE_LIMIT * 3 && !refused; i++) {
      const answer = await api(i % 2 ? gw2 : gw1, key, 'GET', '/v1/seats');
      if (answer.code === 0) accepted++;
      else refused = answer;
    }
    const seconds = (Date.now() - started) / 1000;
    expect(refused).toMatchObject({ status: 429, code: 2002 });
    expect(accepted).toBeGreaterThanOrEqual(RATE_LIMIT);
    expect(accepted).toBeLessThanOrEqual(RATE_LIMIT + Math.ceil((seconds * RATE_LIMIT) / 60));
    // The other gateway sees the same empty bucket: it accepts no more than what refilled since the
    // refusal (a token every 250 ms, so a slow machine's next request may find one), then refuses.
    const refusedAt = Date.now();
    let extra = 0;
    let otherRefused: Awaited<ReturnType<typeof api>> | undefined;
    for (let i = 0; i < 10 && !otherRefused; i++) {
      const answer = await api(accepted % 2 ? gw1 : gw2, key, 'GET', '/v1/seats');
      if (answer.code === 0) extra++;
      else otherRefused = answer;
    }
    expect(otherRefused).toMatchObject({ status: 429, code: 2002 });
    expect(extra).toBeLessThanOrEqual(1 + Math.floor(((Date.now() - refusedAt) / 1000) * (RATE_LIMIT / 60)));
  }, 60_000);
});
