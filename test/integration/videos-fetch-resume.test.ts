/**
 * A remote upload whose worker process is killed mid-fetch, on both media stores: the next worker
 * goes on from the last heartbeated checkpoint with a range request, so the source sends well
 * under one and a half times the file in all, and the stored file is whole (its SHA-256 and size).
 * A source that ignores Range sends the file again from its start, and the log says why. Either
 * way, the store keeps nothing but the file.
 */
import { ListMultipartUploadsCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { Track } from '../../gen/vps/seat/v1/seat_pb';
import { call } from '../helpers/http';
import { adminS3Client } from '../helpers/minio-server';
import { spawnVps, type ChildHandle } from '../helpers/processes';
import { childWorkerEnv } from '../helpers/working-stack';
import { startRangeSource, type RangeSource } from '../helpers/range-source';
import { eventually } from '../helpers/receivers';
import {
  createBoundSeat,
  createTenant,
  requiredEnv,
  startStack,
  startStackWorker,
  uniqueAccount,
  unreachableUpstream,
  type MediaStoreKind,
  type Stack,
  type Tenant,
} from '../helpers/stack';
import type { RunningWorker } from '../../worker/worker';

const MiB = 1024 * 1024;
/** Five parts of the S3 store's smallest size (the last one short), a few checkpoints of the folder's. */
const FILE_BYTES = 24 * MiB;
/**
 * About 8 s a fetch: by the time half is sent, Temporal has had two throttled heartbeats (one each
 * 1.6 s under a 2 s timeout) carrying checkpoints, so the retry does not go back to the start.
 */
const SOURCE_BYTES_PER_SECOND = 3 * MiB;

interface VideoJson {
  id: string;
  status: string;
  sizeBytes: number | null;
  sha256: string | null;
  failureReason: string | null;
}

/**
 * A stack on the store with no worker of its own: the test starts them, the first in a process of
 * its own so it can be killed.
 */
function fetchStack(store: MediaStoreKind) {
  const env = {} as { stack: Stack; tenant: Tenant; seatId: string; taskQueue: string };
  const children: ChildHandle[] = [];
  let inProcess: RunningWorker | undefined;
  beforeAll(async () => {
    env.taskQueue = `vps-fetch-resume-${store}-${process.pid}-${Date.now()}`;
    env.stack = await startStack({
      mediaStore: store,
      taskQueue: env.taskQueue,
      // A dead worker's fetch is retried 2 s after its last heartbeat; the answer does not wait for the fetch.
      videos: { fetchHeartbeatTimeoutMs: 2_000, remoteTimeoutMs: 60_000, fetchWaitMs: 500 },
    });
    env.tenant = await createTenant(env.stack);
    env.seatId = (await createBoundSeat(env.stack, env.tenant, Track.VIDEO, uniqueAccount('biz'))).id;
  }, 60_000);
  // Each test's workers go with it: a worker left polling would take the next test's fetch.
  afterEach(async () => {
    await Promise.all(children.splice(0).map((c) => c.stop('SIGKILL')));
    await inProcess?.stop();
    inProcess = undefined;
  });
  afterAll(() => env.stack?.close());

  /** A worker in a process of its own on the stack's queue, database and store. */
  async function childWorker(): Promise<ChildHandle> {
    const child = spawnVps(
      ['serve', '--role', 'worker'],
      childWorkerEnv(env, {
        VPS_ALLOW_INSECURE_SOURCE_URLS: 'true',
        // The smallest part S3 allows: a checkpoint every 5 MiB.
        ...(store === 's3' ? { MEDIA_S3_PART_SIZE_BYTES: String(5 * MiB) } : {}),
        // Every worker runs the expiry repair, which acts on any row of the database other suites
        // share: with this grace it finds none of theirs.
        VIDEO_EXPIRY_REPAIR_GRACE_MS: String(365 * 86_400_000),
      }),
    );
    children.push(child);
    await child.waitFor(/worker polling/, 60_000);
    return child;
  }

  /**
   * Starts a remote upload of the source with a worker process that is killed once the source has
   * sent half the file, then lets `next` (another process, or one in this process, which is
   * lighter on a busy machine) finish it.
   */
  async function fetchThroughACrash(
    source: RangeSource,
    next: 'process' | 'in-process',
  ): Promise<{ video: VideoJson; second?: ChildHandle }> {
    const first = await childWorker();
    const started = await call<VideoJson>(env.stack.baseUrl, 'POST', '/v1/videos', {
      key: env.tenant.apiKey,
      json: { sourceUrl: source.url, seatId: env.seatId },
    });
    expect(started.body).toMatchObject({ code: 0, data: { status: 'processing' } });
    await eventually(
      async () => source.sent(),
      (n) => n >= FILE_BYTES / 2,
      30_000,
    );
    await first.stop('SIGKILL');
    let second: ChildHandle | undefined;
    if (next === 'process') second = await childWorker();
    else inProcess = await startStackWorker(env.stack, env.taskQueue, unreachableUpstream());
    const video = await eventually(
      async () =>
        (await call<VideoJson>(env.stack.baseUrl, 'GET', `/v1/videos/${started.body.data.id}`, { key: env.tenant.apiKey })).body.data,
      (v) => v.status !== 'processing',
      90_000,
      250,
    );
    return { video, ...(second ? { second } : {}) };
  }

  return { env, fetchThroughACrash };
}

describe.each<MediaStoreKind>(['folder', 's3'])('a remote fetch interrupted by a worker crash (%s store)', (store) => {
  const { env, fetchThroughACrash } = fetchStack(store);

  it('goes on from the last checkpoint with a range request: well under 1.5 times the file sent, the stored file whole', async () => {
    const source = await startRangeSource({ bytes: FILE_BYTES, bytesPerSecond: SOURCE_BYTES_PER_SECOND, ranges: true });
    try {
      const { video } = await fetchThroughACrash(source, 'in-process');
      expect(video).toMatchObject({ status: 'available', sizeBytes: FILE_BYTES, sha256: source.sha256, failureReason: null });
      expect(await storedSha256(env.stack, video.id)).toBe(source.sha256);
      process.stdout.write(
        `${store} store: the source sent ${(source.sent() / FILE_BYTES).toFixed(2)} times the file through one worker crash\n`,
      );
      expect(source.sent()).toBeLessThan(1.5 * FILE_BYTES);
      // The first request took the whole file; the retry asked for the rest of the same one.
      expect(source.requests[0]).toEqual({ status: 200 });
      expect(source.requests.at(-1)).toEqual({
        range: expect.stringMatching(/^bytes=[1-9]\d*-$/),
        ifRange: expect.stringMatching(/^"/),
        status: 206,
      });
      expect(await unfinished(env.stack, store)).toEqual([]);
    } finally {
      await source.close();
    }
  }, 180_000);
});

// The S3 store has the more to undo when a resume turns into a fresh start (the upload completed
// aside for it, a new upload); the folder's start over is in the store contract.
describe('a remote fetch interrupted by a worker crash, from a source that ignores Range (s3 store)', () => {
  const { env, fetchThroughACrash } = fetchStack('s3');

  it('starts over, says why in the log, and still stores the file whole', async () => {
    const source = await startRangeSource({ bytes: FILE_BYTES, bytesPerSecond: SOURCE_BYTES_PER_SECOND, ranges: false });
    try {
      const { video, second } = await fetchThroughACrash(source, 'process');
      expect(video).toMatchObject({ status: 'available', sizeBytes: FILE_BYTES, sha256: source.sha256 });
      expect(await storedSha256(env.stack, video.id)).toBe(source.sha256);
      // Half before the crash, then all of it again.
      expect(source.sent()).toBeGreaterThanOrEqual(1.5 * FILE_BYTES);
      expect(source.requests.at(-1)).toMatchObject({ range: expect.stringMatching(/^bytes=[1-9]\d*-$/), status: 200 });
      expect(second!.output()).toContain('the source does not support range requests; the fetch starts over');
      expect(await unfinished(env.stack, 's3')).toEqual([]);
    } finally {
      await source.close();
    }
  }, 180_000);
});

async function storedSha256(stack: Stack, videoId: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of await stack.media.open(`videos/${videoId}`)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** What the stack's store holds besides finished videos: partial files, side objects, unfinished uploads. */
async function unfinished(stack: Stack, store: MediaStoreKind): Promise<string[]> {
  return (await everythingIn(stack, store)).filter((key) => !/^videos\/vid_[A-Za-z0-9]+$/.test(key));
}

/** Everything the stack's store holds: files under the folder, or objects and unfinished uploads under the prefix. */
async function everythingIn(stack: Stack, store: MediaStoreKind): Promise<string[]> {
  if (store === 'folder') {
    const root = stack.mediaEnv.VPS_MEDIA_DIR!;
    return readdirSync(root, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => `${e.parentPath.slice(root.length + 1)}/${e.name}`)
      .sort();
  }
  const { MEDIA_S3_BUCKET: Bucket, MEDIA_S3_PREFIX: prefix } = stack.mediaEnv;
  const admin = adminS3Client({
    endpoint: requiredEnv('TEST_S3_ENDPOINT'),
    accessKeyId: requiredEnv('TEST_S3_ACCESS_KEY_ID'),
    secretAccessKey: requiredEnv('TEST_S3_SECRET_ACCESS_KEY'),
  });
  try {
    const objects = (await admin.send(new ListObjectsV2Command({ Bucket, Prefix: prefix }))).Contents ?? [];
    // MinIO lists uploads by exact key only: all of them, filtered here.
    const uploads = ((await admin.send(new ListMultipartUploadsCommand({ Bucket }))).Uploads ?? []).filter((u) =>
      u.Key!.startsWith(prefix!),
    );
    return [...objects.map((o) => o.Key!.slice(prefix!.length)), ...uploads.map((u) => `upload:${u.Key!.slice(prefix!.length)}`)].sort();
  } finally {
    admin.destroy();
  }
}
