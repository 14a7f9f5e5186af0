/**
 * No video outlives its expiry, even when its timer could not be started at upload: core here
 * starts its workflows in a namespace the Temporal server does not have, so every start fails at
 * the server as in an outage. The upload is still answered (the file is stored and usable), the
 * workers' expiry repair starts the missing timer on a shortened interval, and until it has, every
 * read that serves the video judges it by its expiry time as well as by its status.
 */
import { sql } from 'drizzle-orm';
import { queryRows } from '../../core/db/client';
import { Track } from '../../gen/vps/seat/v1/seat_pb';
import { findVideo } from '../../core/db/repositories/videos';
import { connectTemporalClient } from '../../core/temporal/connection';
import { startVideoLifetime } from '../../core/temporal/client';
import { call } from '../helpers/http';
import { eventually } from '../helpers/receivers';
import {
  createBoundSeat,
  createTenant,
  requiredEnv,
  startStack,
  startStackWorker,
  uniqueAccount,
  type Stack,
  type Tenant,
} from '../helpers/stack';
import { startWorkingStack, type WorkingStack } from '../helpers/working-stack';
import { mp4Bytes, uploadMultipart } from '../helpers/videos';

interface VideoJson {
  id: string;
  status: string;
  videoUrl: string | null;
  expiresAt: string | null;
}

const MISSING_NAMESPACE = `no-such-namespace-${process.pid}`;

describe('video expiry repair', () => {
  const TTL_MS = 5_000;
  const REPAIR = { intervalMs: 500, graceMs: 500 };
  let env: WorkingStack;
  let stack: Stack;
  let tenant: Tenant;
  let seatId: string;
  let temporal: Awaited<ReturnType<typeof connectTemporalClient>>;

  beforeAll(async () => {
    env = await startWorkingStack('videos-expiry-repair', {
      stack: { videos: { urlTtlMs: TTL_MS }, coreTemporalNamespace: MISSING_NAMESPACE },
      worker: { videoExpiryRepair: REPAIR },
    });
    stack = env.stack;
    tenant = await createTenant(stack);
    seatId = (await createBoundSeat(stack, tenant, Track.VIDEO, uniqueAccount('biz'))).id;
    temporal = await connectTemporalClient({
      address: requiredEnv('TEMPORAL_ADDRESS'),
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TLS: false,
    });
  }, 120_000);
  afterAll(async () => {
    await temporal?.close();
    await env?.close();
  });

  const upload = async () => {
    const res = await uploadMultipart<VideoJson>(stack.baseUrl, tenant.apiKey, [
      { name: 'seatId', value: seatId },
      { name: 'file', value: { fileName: 'a.mp4', bytes: mp4Bytes(4096) } },
    ]);
    expect(res.body.code).toBe(0);
    return res.body.data;
  };
  const get = (id: string) => call<VideoJson>(stack.baseUrl, 'GET', `/v1/videos/${id}`, { key: tenant.apiKey });
  const lifetime = (id: string) => temporal.client.workflow.getHandle(`video-expiry-${id}`);
  const runsOf = async (id: string) => {
    const runs = [];
    for await (const run of temporal.client.workflow.list({ query: `WorkflowId = 'video-expiry-${id}'` })) runs.push(run);
    return runs;
  };

  it('answers an upload whose timer could not be started, then the repair starts it with the time left and the video expires when due', async () => {
    const video = await upload();
    expect(video.status).toBe('available');
    expect((await fetch(video.videoUrl!)).status).toBe(200);
    // Core's start failed: nothing runs for the video until the repair comes.
    expect((await findVideo(stack.database.db, video.id))!.lifetimeStartedAt).toBeNull();

    const marked = await eventually(
      () => findVideo(stack.database.db, video.id),
      (row) => row!.lifetimeStartedAt !== null,
      10_000,
      100,
    );
    expect(marked!.status).toBe('available');
    const described = await lifetime(video.id).describe();
    expect(described.status.name).toBe('RUNNING');
    expect(described.taskQueue).toBe(env.taskQueue);
    // Started before the video was due, so it is the timer, not the overdue path, that expires it.
    expect(described.startTime.getTime()).toBeLessThan(Date.parse(video.expiresAt!));

    const expired = await eventually(
      () => get(video.id),
      (r) => r.body.data.status === 'expired',
      15_000,
      100,
    );
    expect(expired.body.data.videoUrl).toBeNull();
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(video.expiresAt!));
    await lifetime(video.id).result();
    expect((await findVideo(stack.database.db, video.id))!.status).toBe('expired');
    expect(await stack.media.size(`videos/${video.id}`)).toBeUndefined();
    expect((await fetch(video.videoUrl!)).status).toBe(404);
  }, 30_000);

  it('expires at once a video already past its expiry when the repair finds it', async () => {
    // No worker while the video lives out its time: its timer is missing and nothing repairs it.
    await env.worker.stop();
    const video = await upload();
    await new Promise((resolve) => setTimeout(resolve, Date.parse(video.expiresAt!) - Date.now() + 200));
    expect((await findVideo(stack.database.db, video.id))!.status).toBe('available');

    env.worker = await startStackWorker(stack, env.taskQueue, env.sb.upstream);
    // From the moment the worker polls: its start (bundling the workflows) takes seconds of CPU,
    // and longer while other suites start workers of their own beside this one.
    const workerStarted = Date.now();
    await eventually(
      () => findVideo(stack.database.db, video.id),
      (row) => row!.status === 'expired',
      10_000,
      100,
    );
    expect(Date.now() - workerStarted).toBeLessThan(REPAIR.intervalMs + 5_000);
    expect(await stack.media.size(`videos/${video.id}`)).toBeUndefined();
    await lifetime(video.id).result();
  }, 30_000);

  it('starts one timer when the repair meets a start that did happen but was not recorded', async () => {
    const video = await upload();
    const row = (await findVideo(stack.database.db, video.id))!;
    // As an upload whose start reached Temporal just before its process died, before recording it.
    await startVideoLifetime(temporal.client, env.taskQueue, row);
    const { runId } = await lifetime(video.id).describe();

    await eventually(
      () => findVideo(stack.database.db, video.id),
      (r) => r!.lifetimeStartedAt !== null,
      10_000,
      100,
    );
    expect((await lifetime(video.id).describe()).runId).toBe(runId);
    const runs = await eventually(
      () => runsOf(video.id),
      (r) => r.length > 0,
      10_000,
      200,
    );
    expect(runs).toHaveLength(1);
    await eventually(
      () => get(video.id),
      (r) => r.body.data.status === 'expired',
      15_000,
      100,
    );
  }, 30_000);

  it('logs the outcome event of a record that ended without it, once', async () => {
    const video = await upload();
    const outcomeEvents = () =>
      queryRows<{ id: string; type: string }>(
        stack.database.db,
        sql`select id, type from events where customer_id = ${tenant.customerId} and data->>'video_id' = ${video.id}`,
      );
    expect((await outcomeEvents()).map((e) => e.type)).toEqual(['vplat.video.available']);
    // As a request whose process died after writing the row and before logging its event.
    await stack.database.db.execute(sql`delete from events where customer_id = ${tenant.customerId} and data->>'video_id' = ${video.id}`);

    const logged = await eventually(outcomeEvents, (rows) => rows.length > 0, 10_000, 100);
    expect(logged.map((e) => e.type)).toEqual(['vplat.video.available']);
  }, 30_000);

  it('runs the repair as one long-running workflow of the task queue, visible to an operator', async () => {
    const described = await temporal.client.workflow.getHandle(`video-expiry-repair-${env.taskQueue}`).describe();
    expect(described).toMatchObject({ type: 'videoExpiryRepairWorkflow', taskQueue: env.taskQueue, status: { name: 'RUNNING' } });
  });
});

describe('a video past its expiry before any repair', () => {
  const TTL_MS = 1_500;
  let stack: Stack;
  let tenant: Tenant;
  let account: string;
  let video: VideoJson;

  beforeAll(async () => {
    // No worker at all: the timer core could not start stays missing for the whole test.
    stack = await startStack({ videos: { urlTtlMs: TTL_MS }, coreTemporalNamespace: MISSING_NAMESPACE });
    tenant = await createTenant(stack);
    account = uniqueAccount('biz');
    const seatId = (await createBoundSeat(stack, tenant, Track.VIDEO, account)).id;
    const res = await uploadMultipart<VideoJson>(stack.baseUrl, tenant.apiKey, [
      { name: 'seatId', value: seatId },
      { name: 'file', value: { fileName: 'a.mp4', bytes: mp4Bytes(4096) } },
    ]);
    expect(res.body.data.status).toBe('available');
    video = res.body.data;
    await new Promise((resolve) => setTimeout(resolve, Date.parse(video.expiresAt!) - Date.now() + 100));
    // The row still says available: only its expiry time tells.
    expect((await findVideo(stack.database.db, video.id))!).toMatchObject({ status: 'available', lifetimeStartedAt: null });
  }, 120_000);
  afterAll(() => stack?.close());

  it('gives no videoUrl for it any more; its status stays as stored until the repair moves it', async () => {
    const res = await call<VideoJson>(stack.baseUrl, 'GET', `/v1/videos/${video.id}`, { key: tenant.apiKey });
    expect(res.body.data).toMatchObject({ status: 'available', videoUrl: null });
  });

  it('refuses its media URL', async () => {
    expect((await fetch(video.videoUrl!)).status).toBe(404);
  });

  it('refuses a publish of it with 2005, by id and by URL', async () => {
    for (const ref of [{ videoId: video.id }, { videoUrl: video.videoUrl }]) {
      const res = await call(stack.baseUrl, 'POST', '/v1/vplat/v1.3/business/video/publish', {
        key: tenant.apiKey,
        json: { account, isBrandOrganic: false, isBrandedContent: false, ...ref },
      });
      expect({ status: res.status, code: res.body.code }).toEqual({ status: 422, code: 2005 });
      expect(res.body.message).toMatch(/expired; upload it again/);
    }
  });
});
