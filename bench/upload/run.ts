/**
 * bench/upload: how fast the service takes a large video in, against a bare Node process moving the
 * same bytes into the same store, measured in one run on this machine, for the media folder and for
 * an S3 bucket (a MinIO started by the benchmark). Two ways in, each with its own baseline:
 *
 * - a direct upload: `POST /v1/videos` as multipart/form-data (seatId, then the file part) through
 *   the real gateway and core, answered once the file is stored, hashed, recognised and the record
 *   available; baseline, a bare `node:http` server piping the raw request body to a file in the
 *   same media folder, or into an `@aws-sdk/lib-storage` Upload to the same bucket with the
 *   service's part size and parts in flight;
 * - a remote fetch: `POST /v1/videos` with a JSON sourceUrl on a loopback origin, timed until the
 *   record is available: the POST's answer, which waits for the fetch up to VIDEO_FETCH_WAIT_MS
 *   (10 s, the default), or else GET /v1/videos/:id polled every 50 ms from then on (polling from
 *   the start would add a request every 50 ms to the load measured); baseline, a bare undici GET
 *   of the same URL piped into the same store the same way.
 *
 * For the folder, the bare receiver writes through a write buffer as large as the service's
 * folder store (WRITE_BUFFER_BYTES). Two references run beside it: the same receiver with Node's
 * default 16 KiB buffer, the plain `pipeline(req, createWriteStream(file))` of the issue's first
 * measurement; and the same receiver writing the raw body through the service's own folder store
 * (sizing, head, SHA-256 on its thread), which tells how much of the gap is the store's work.
 *
 * The service is `vps serve --role all` as a child process (a Postgres database of its own, the
 * embedded Temporal dev server, a fresh VPS_DATA_DIR), started once per store; the baselines run in
 * a bare child process of their own (bare.ts). The client is the same for all: this process sends a
 * video-shaped body generated on the fly (body.ts) and serves the remote source. Each round runs
 * every transfer of a store once, the order of the sides reversed every other round; figures are
 * medians over the rounds. Around each transfer: the resident memory (VmRSS) of the receiving
 * process, read from /proc every 50 ms (before, peak, growth; the worst round is judged), its CPU
 * time and this process's (the client's), and how busy the machine's cores were. Every stored copy
 * is checked (size, and the service's SHA-256) and removed after its transfer, outside the timing.
 * Before the rounds: one small transfer of each kind (warm-up), then BENCH_ROUNDS transfers of
 * 1 MiB each, whose median is the fixed cost of a transfer (requests, records, workflow steps).
 *
 *   npm run bench:upload   (BENCH_UPLOAD_BYTES=1073741824 per transfer, BENCH_ROUNDS=5,
 *                            BENCH_STORES=folder,s3, BENCH_WARMUP_BYTES=67108864,
 *                            BENCH_LOG_LEVEL=info (the service's), BENCH_CPU_PROF=0 (1: run the
 *                            service under --cpu-prof and print where its main thread spent the
 *                            last round's transfers), BENCH_SERVICE_NODE_ARGS (more node flags for
 *                            the service, e.g. --trace-gc; its output goes to its serve.log),
 *                            BENCH_FOLDER_WRITES=direct (page-cache: the service and the store
 *                            reference write the folder through the page cache, as
 *                            MEDIA_FOLDER_WRITES=page-cache does),
 *                            BENCH_UPLOAD_FIELDS=before (after: the service's upload sends
 *                            seatId after the file part, as curl -F file=@… -F seatId=… does),
 *                            BENCH_DATABASE=postgres (embedded: the service on the PGlite of
 *                            its data folder, as plain `npm start` runs),
 *                            BENCH_THREADS=0 (1: after each round's line, the CPU seconds of
 *                            each other thread of the receiving process: the hashing thread,
 *                            libuv's pool, V8's helpers), BENCH_KEEP=0 (1 keeps the data
 *                            folders, logs and profiles),
 *                            BENCH_TIMEOUT_SECONDS=900 (hard stop))
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { DeleteObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { request } from 'undici';
import { loadConfig, VARIABLES } from '../../config/config';
import { WRITE_BUFFER_BYTES } from '../../core/media/folder-sink';
import { startMinio, s3Env, type S3Server } from '../../test/helpers/minio-server';
import { readProfile, summarizeProfile, windowTicks } from '../events-embedded/profile';
import { machineJiffies } from '../events-embedded/service';
import { envInt, formatTable, loadAverage, machineLine } from '../harness';
import { multipartUpload, startSourceServer, videoBytes, type VideoBytes } from './body';
import { cpuSeconds, RssSampler, startService, threadCpuSeconds, type ServiceChild } from './service';

// The AWS SDK's notice that its releases after January 2027 need Node 22, printed by this process
// and the bare one (which inherits this) at their first client: noise in the output.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const MiB = 1024 ** 2;
const BYTES = envInt('BENCH_UPLOAD_BYTES', 1024 * MiB);
const ROUNDS = envInt('BENCH_ROUNDS', 5);
const WARMUP_BYTES = envInt('BENCH_WARMUP_BYTES', 64 * MiB);
const FIXED_COST_BYTES = MiB;
const STORES = (process.env.BENCH_STORES ?? 'folder,s3').split(',').map((s) => s.trim()) as Store[];
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';
const CPU_PROF = process.env.BENCH_CPU_PROF === '1';
const KEEP = process.env.BENCH_KEEP === '1';
const EMBEDDED = process.env.BENCH_DATABASE === 'embedded';
const SERVICE_NODE_ARGS = (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean);
const THREADS = process.env.BENCH_THREADS === '1';
const FOLDER_WRITES = VARIABLES.MEDIA_FOLDER_WRITES.parse(process.env.BENCH_FOLDER_WRITES ?? 'direct');
/** Where the service's upload names its seat: before the file (bound at once) or after it (staged, then moved). */
const FIELDS = process.env.BENCH_UPLOAD_FIELDS ?? 'before';
if (FIELDS !== 'before' && FIELDS !== 'after') throw new Error(`BENCH_UPLOAD_FIELDS: ${FIELDS} is neither before nor after`);
/** Threads that spent less than this in a transfer are left out of its BENCH_THREADS line. */
const THREAD_MIN_SECONDS = 0.05;
const TIMEOUT_SECONDS = envInt('BENCH_TIMEOUT_SECONDS', 900);
/** The issue's targets: service ÷ baseline throughput, and the service's RSS growth during a transfer. */
const TARGET_RATIO = 0.8;
const RSS_BOUND_MIB = 64;
const SAMPLE_MS = 50;
const POLL_MS = 50;
/** One transfer slower than this fails the run: 1 GiB at under 4 MB/s means something is wrong. */
const TRANSFER_TIMEOUT_MS = 300_000;

type Store = 'folder' | 's3';
type Kind = 'upload' | 'fetch';
/**
 * References beside the baseline, folder only: `nodeDefaults`, the bare receiver with Node's default
 * write buffer; `store`, the bare receiver writing through the service's own folder store (sizing,
 * head, hashing thread) with no parsing, framework or workflow around it, which splits the gap
 * between the baseline and the service into the store's part and the rest.
 */
type Side = 'baseline' | 'nodeDefaults' | 'store' | 'service';
const KINDS: Kind[] = ['upload', 'fetch'];
const sidesOf = (store: Store): Side[] => (store === 'folder' ? ['baseline', 'nodeDefaults', 'store', 'service'] : ['baseline', 'service']);

const LABELS: Record<Kind, Record<Side, Record<Store, string>>> = {
  upload: {
    baseline: {
      folder: `baseline: bare node:http, raw body -> file (${WRITE_BUFFER_BYTES / MiB} MiB buffer)`,
      s3: 'baseline: bare node:http -> lib-storage Upload',
    },
    nodeDefaults: { folder: 'reference: the same, Node default 16 KiB buffer', s3: '' },
    store: { folder: "reference: the same, through the service's folder store", s3: '' },
    service: { folder: 'service: POST /v1/videos multipart', s3: 'service: POST /v1/videos multipart' },
  },
  fetch: {
    baseline: {
      folder: `baseline: bare undici GET -> file (${WRITE_BUFFER_BYTES / MiB} MiB buffer)`,
      s3: 'baseline: bare undici GET -> lib-storage Upload',
    },
    nodeDefaults: { folder: 'reference: the same, Node default 16 KiB buffer', s3: '' },
    store: { folder: "reference: the same, through the service's folder store", s3: '' },
    service: { folder: 'service: POST /v1/videos sourceUrl, to available', s3: 'service: POST /v1/videos sourceUrl, to available' },
  },
};

interface Transfer {
  seconds: number;
  rssBefore: number;
  rssPeak: number;
  /** CPU seconds of the receiving process (the service's or the bare one's, not its children). */
  cpu: number;
  /** The part of it spent by its main thread (the event loop). */
  cpuMain: number;
  /** With BENCH_THREADS=1: the rest, by thread id, largest first (THREAD_MIN_SECONDS and over). */
  threads: Array<{ tid: number; seconds: number }>;
  /** CPU seconds of this process: the client, and the source of a remote fetch. */
  clientCpu: number;
  /** Share of the machine's CPU time that was busy, everyone's work included. */
  busy: number;
  startedAt: number;
  endedAt: number;
}

interface VideoAnswer {
  id: string;
  status: string;
  sizeBytes: number | null;
  sha256: string | null;
  failureReason: string | null;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const mid = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mib = (bytes: number) => (bytes / MiB).toFixed(0);
const mbps = (seconds: number) => BYTES / 1e6 / seconds;

/** Cleanup of everything started, newest first; run once, on success, failure, the hard stop or a signal. */
const closers: Array<{ what: string; close: () => Promise<unknown> }> = [];
let closing: Promise<void> | undefined;
const closeAll = () =>
  (closing ??= (async () => {
    for (const { what, close } of closers.splice(0).reverse()) {
      await close().catch((err: unknown) => console.error(`bench: stopping ${what} failed:`, err));
    }
  })());

/** A call of the service's API; the envelope's data, or an error naming the answer. */
async function call<T>(method: 'GET' | 'POST' | 'DELETE', url: string, apiKey: string, body?: unknown): Promise<T> {
  const res = await request(url, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    headersTimeout: TRANSFER_TIMEOUT_MS,
    bodyTimeout: TRANSFER_TIMEOUT_MS,
  });
  const text = await res.body.text();
  let answer: { code?: number; data?: T } = {};
  try {
    answer = JSON.parse(text) as typeof answer;
  } catch {
    // Not an envelope: reported with the status below.
  }
  if (res.statusCode !== 200 || answer.code !== 0) throw new Error(`${method} ${url}: HTTP ${res.statusCode} ${text.slice(0, 300)}`);
  return answer.data as T;
}

/** A POST of a streamed body (or none); the answer's text, or an error naming it. */
async function send(url: string, headers: Record<string, string>, body: ReturnType<typeof multipartUpload> | undefined): Promise<string> {
  const res = await request(url, {
    method: 'POST',
    headers: { ...headers, ...(body ? { 'content-type': body.contentType, 'content-length': String(body.contentLength) } : {}) },
    body: body?.body(),
    headersTimeout: TRANSFER_TIMEOUT_MS,
    bodyTimeout: TRANSFER_TIMEOUT_MS,
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`POST ${url}: HTTP ${res.statusCode} ${text.slice(0, 300)}`);
  return text;
}

/** The bare process of bench/upload/bare.ts for one store, listening on loopback. */
async function startBare(env: Record<string, string>): Promise<{ pid: number; url: string; stop(): Promise<void> }> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'bare.ts')], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
  };
  const lines = readline.createInterface({ input: child.stdout! });
  try {
    const port = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the bare receiver did not start within 30 s')), 30_000);
      lines.on('line', (line) => {
        const m = /^listening (\d+)$/.exec(line);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      child.once('exit', (code) => reject(new Error(`the bare receiver exited with ${code}`)));
    });
    return { pid: child.pid!, url: `http://127.0.0.1:${port}`, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Times `run` and reads the receiving process, this process and the machine around it. */
async function timed(pid: number, sampler: RssSampler, run: () => Promise<void>): Promise<Transfer> {
  const window = sampler.window();
  const threadsBefore = THREADS ? threadCpuSeconds(pid) : new Map<number, number>();
  const cpuBefore = cpuSeconds(pid);
  const clientBefore = process.cpuUsage();
  const machineBefore = machineJiffies();
  const startedAt = Date.now();
  const t0 = performance.now();
  await run();
  const seconds = (performance.now() - t0) / 1000;
  const endedAt = Date.now();
  const machine = machineJiffies();
  const client = process.cpuUsage(clientBefore);
  const { before, peak } = window.end();
  const cpu = cpuSeconds(pid);
  const threads = THREADS
    ? [...threadCpuSeconds(pid)]
        .map(([tid, seconds]) => ({ tid, seconds: seconds - (threadsBefore.get(tid) ?? 0) }))
        .filter((t) => t.seconds >= THREAD_MIN_SECONDS)
        .sort((a, b) => b.seconds - a.seconds)
    : [];
  return {
    threads,
    seconds,
    rssBefore: before,
    rssPeak: peak,
    cpu: cpu.all - cpuBefore.all,
    cpuMain: cpu.main - cpuBefore.main,
    clientCpu: (client.user + client.system) / 1e6,
    busy: (machine.busy - machineBefore.busy) / Math.max(1, machine.total - machineBefore.total),
    startedAt,
    endedAt,
  };
}

/** One transfer: `run` is what is timed; `check` then verifies what was stored and removes it. */
interface Planned {
  run(): Promise<void>;
  check(): Promise<void>;
}

interface StoreRun {
  store: Store;
  description: string;
  loadBefore: string;
  results: Map<`${Kind} ${Side}`, Transfer[]>;
  /** Seconds of each 1 MiB transfer. */
  fixedCost: Map<`${Kind} ${Side}`, number[]>;
  /** Where the service's main thread spent the last round's transfers, when BENCH_CPU_PROF=1. */
  profile: string[];
}

async function runStore(
  store: Store,
  video: VideoBytes,
  warmup: VideoBytes,
  small: VideoBytes,
  minio: S3Server | undefined,
): Promise<StoreRun> {
  const loadBefore = loadAverage();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `vps-bench-upload-${store}-`));
  const mine: Array<{ what: string; close: () => Promise<unknown> }> = [];
  const own = (what: string, close: () => Promise<unknown>) => {
    const entry = { what, close };
    closers.push(entry);
    mine.push(entry);
  };
  own('the data folder', async () => (KEEP ? console.log(`kept ${dataDir}`) : fs.rmSync(dataDir, { recursive: true, force: true })));
  try {
    const mediaDir = path.join(dataDir, 'media');
    const storeEnv: Record<string, string> =
      store === 'folder'
        ? { MEDIA_STORE: 'folder', VPS_MEDIA_DIR: mediaDir, MEDIA_FOLDER_WRITES: FOLDER_WRITES }
        : s3Env(minio!, minio!.bucket);
    const serviceEnv: Record<string, string> = { ...storeEnv, LOG_LEVEL };
    // The cap is the service's default (1 GiB); a larger file raises it just enough.
    if (BYTES > VARIABLES.VIDEO_MAX_BYTES.fallback) serviceEnv.VIDEO_MAX_BYTES = String(BYTES);
    // What the service's configuration makes of this environment: the baseline's Upload gets the
    // service's own part size and parts in flight.
    const settings = loadConfig({ ...serviceEnv, VPS_DATA_DIR: dataDir }).env;
    const profDir = path.join(dataDir, 'cpu-profiles');
    const service: ServiceChild = await startService({
      name: store,
      dataDir,
      env: serviceEnv,
      nodeArgs: [...(CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', profDir] : []), ...SERVICE_NODE_ARGS],
      startTimeoutMs: 120_000,
      embedded: EMBEDDED,
    });
    own('the service', () => service.stop(30_000));
    const bare = await startBare(
      store === 'folder'
        ? { BARE_STORE: 'folder', BARE_DIR: mediaDir, BARE_FOLDER_WRITES: FOLDER_WRITES }
        : {
            BARE_STORE: 's3',
            BARE_S3_ENDPOINT: minio!.endpoint,
            BARE_S3_REGION: settings.MEDIA_S3_REGION,
            BARE_S3_BUCKET: minio!.bucket,
            BARE_S3_ACCESS_KEY_ID: minio!.accessKeyId,
            BARE_S3_SECRET_ACCESS_KEY: minio!.secretAccessKey,
            BARE_S3_PART_SIZE_BYTES: String(settings.MEDIA_S3_PART_SIZE_BYTES),
            BARE_S3_PARTS_IN_FLIGHT: String(settings.MEDIA_S3_PARTS_IN_FLIGHT),
          },
    );
    own('the bare receiver', () => bare.stop());
    const s3 = minio
      ? new S3Client({
          endpoint: minio.endpoint,
          region: settings.MEDIA_S3_REGION,
          forcePathStyle: true,
          credentials: { accessKeyId: minio.accessKeyId, secretAccessKey: minio.secretAccessKey },
        })
      : undefined;
    if (s3) own('the S3 client', async () => s3.destroy());
    const files = { 'video.mp4': video, 'warmup.mp4': warmup, 'small.mp4': small };
    const source = await startSourceServer(files);
    own('the source server', () => source.close());
    const serviceSampler = new RssSampler(service.pid, SAMPLE_MS);
    const bareSampler = new RssSampler(bare.pid, SAMPLE_MS);
    own('the memory samplers', async () => [serviceSampler, bareSampler].forEach((s) => s.stop()));
    const receiver = (side: Side) =>
      side === 'service' ? { pid: service.pid, sampler: serviceSampler } : { pid: bare.pid, sampler: bareSampler };

    /** The size of a baseline's object; the object is removed. */
    const takeBareObject = async (name: string): Promise<number | undefined> => {
      if (store === 'folder') {
        const file = path.join(mediaDir, 'bare', name);
        const size = fs.statSync(file).size;
        fs.rmSync(file);
        return size;
      }
      const Key = `bare/${name}`;
      const head = await s3!.send(new HeadObjectCommand({ Bucket: minio!.bucket, Key }));
      await s3!.send(new DeleteObjectCommand({ Bucket: minio!.bucket, Key }));
      return head.ContentLength;
    };
    const bareObject = (name: string, expected: number) => async () => {
      const size = await takeBareObject(name);
      if (size !== expected) throw new Error(`the bare receiver stored ${size} bytes of ${expected} under bare/${name}`);
    };
    const serviceVideo = (answer: () => VideoAnswer | undefined, bytes: VideoBytes) => async () => {
      const video = answer();
      if (video?.status !== 'available' || video.sizeBytes !== bytes.size || video.sha256 !== bytes.sha256()) {
        throw new Error(
          `the service did not store the file: ${JSON.stringify(video)}; expected ${bytes.size} bytes, SHA-256 ${bytes.sha256()}`,
        );
      }
      // Removes the file as well: the next transfer starts from the same empty store.
      await call('DELETE', `${service.gateway}/v1/videos/${video.id}`, service.apiKey);
    };
    let serial = 0;
    const bareTransfer = (kind: Kind, side: Side, bytes: VideoBytes, file: string): Planned => {
      const name = `${kind}-${++serial}`;
      const buffer = side === 'nodeDefaults' ? 'buffer=node' : side === 'store' ? 'buffer=store' : '';
      if (kind === 'upload') {
        const body = multipartUpload({ seatId: service.seatId }, bytes);
        return {
          run: async () => void (await send(`${bare.url}/upload/${name}?${buffer}`, {}, body)),
          check: bareObject(name, body.contentLength),
        };
      }
      const url = encodeURIComponent(`${source.origin}/${file}`);
      return {
        run: async () => void (await send(`${bare.url}/fetch/${name}?url=${url}&${buffer}`, {}, undefined)),
        check: bareObject(name, bytes.size),
      };
    };
    const serviceTransfer = (kind: Kind, bytes: VideoBytes, file: string): Planned => {
      let answer: VideoAnswer | undefined;
      if (kind === 'upload') {
        const body = multipartUpload({ seatId: service.seatId }, bytes, { fieldsAfterFile: FIELDS === 'after' });
        return {
          run: async () => {
            answer = (
              JSON.parse(await send(`${service.gateway}/v1/videos`, { authorization: `Bearer ${service.apiKey}` }, body)) as {
                data: VideoAnswer;
              }
            ).data;
          },
          check: serviceVideo(() => answer, bytes),
        };
      }
      return {
        run: async () => {
          answer = await call<VideoAnswer>('POST', `${service.gateway}/v1/videos`, service.apiKey, {
            sourceUrl: `${source.origin}/${file}`,
            seatId: service.seatId,
          });
          // Past VIDEO_FETCH_WAIT_MS the answer says processing: the record is polled.
          while (answer.status === 'processing') {
            await sleep(POLL_MS);
            answer = await call<VideoAnswer>('GET', `${service.gateway}/v1/videos/${answer.id}`, service.apiKey);
          }
        },
        check: serviceVideo(() => answer, bytes),
      };
    };
    const transfer = async (kind: Kind, side: Side, bytes: VideoBytes): Promise<Transfer> => {
      const file = Object.entries(files).find(([, v]) => v === bytes)![0];
      const plan = side === 'service' ? serviceTransfer(kind, bytes, file) : bareTransfer(kind, side, bytes, file);
      const { pid, sampler } = receiver(side);
      const measured = await timed(pid, sampler, () => plan.run());
      await plan.check();
      return measured;
    };
    const sides = sidesOf(store);

    console.log(
      `\n${store}: ${store === 'folder' ? `folder ${mediaDir}` : `MinIO bucket ${minio!.bucket} at ${minio!.endpoint}, parts of ${mib(settings.MEDIA_S3_PART_SIZE_BYTES)} MiB, ${settings.MEDIA_S3_PARTS_IN_FLIGHT} in flight`}; service pid ${service.pid}, bare pid ${bare.pid}; load average ${loadBefore}`,
    );
    // JIT, connection pools, the worker's workflow cache, MinIO's first writes: one small transfer of each.
    for (const kind of KINDS) for (const side of sides) await transfer(kind, side, warmup);
    const fixedCost = new Map<`${Kind} ${Side}`, number[]>();
    for (let round = 1; round <= ROUNDS; round++) {
      for (const kind of KINDS)
        for (const side of sides)
          fixedCost.set(`${kind} ${side}`, [...(fixedCost.get(`${kind} ${side}`) ?? []), (await transfer(kind, side, small)).seconds]);
    }
    const results = new Map<`${Kind} ${Side}`, Transfer[]>();
    for (let round = 1; round <= ROUNDS; round++) {
      for (const kind of KINDS) {
        // The order reverses every other round, so no side always meets the leftovers of another (dirty pages, MinIO's work).
        for (const side of round % 2 === 1 ? sides : [...sides].reverse()) {
          const t = await transfer(kind, side, video);
          results.set(`${kind} ${side}`, [...(results.get(`${kind} ${side}`) ?? []), t]);
          console.log(
            `  round ${round} ${kind.padEnd(6)} ${side.padEnd(12)} ${t.seconds.toFixed(2).padStart(6)} s ${mbps(t.seconds).toFixed(1).padStart(7)} MB/s` +
              `  CPU ${t.cpu.toFixed(2)} s (main thread ${t.cpuMain.toFixed(2)}), client ${t.clientCpu.toFixed(2)} s, machine ${(t.busy * 100).toFixed(0)}% busy  RSS ${mib(t.rssBefore)} -> ${mib(t.rssPeak)} MiB  load ${loadAverage()}` +
              (THREADS
                ? `\n    other threads, CPU s by thread id: ${t.threads.map((x) => `${x.tid} ${x.seconds.toFixed(2)}`).join(', ')}`
                : ''),
          );
        }
      }
    }

    const profile: string[] = [];
    if (CPU_PROF) {
      await service.stop(30_000);
      profile.push(...summarizeServiceProfile(profDir, service, results));
    }
    const description = store === 'folder' ? `folder ${mediaDir}` : `MinIO bucket ${minio!.bucket} at ${minio!.endpoint}`;
    return { store, description, loadBefore, results, fixedCost, profile };
  } finally {
    // This store's parts, newest first, taken off the run's list.
    for (const entry of mine.reverse()) {
      const at = closers.indexOf(entry);
      // Already closed by closeAll (the hard stop or a signal).
      if (at < 0) continue;
      closers.splice(at, 1);
      await entry.close().catch((err: unknown) => console.error(`bench: stopping ${entry.what} failed:`, err));
    }
  }
}

/** Where the service's main thread spent the last round's two service transfers. */
function summarizeServiceProfile(dir: string, service: ServiceChild, results: StoreRun['results']): string[] {
  const exitAt = service.exitedAt();
  // The main thread's file: CPU.<date>.<time>.<pid>.0.<seq>.cpuprofile.
  const file = fs.existsSync(dir) ? fs.readdirSync(dir).find((f) => f.includes(`.${service.pid}.0.`)) : undefined;
  if (!file || exitAt === undefined) return ["(no CPU profile of the service's main thread was written)"];
  const main = readProfile(path.join(dir, file));
  const lines: string[] = [];
  for (const kind of KINDS) {
    const last = results.get(`${kind} service`)?.at(-1);
    if (!last) continue;
    const w = windowTicks(main, exitAt, last.startedAt, last.endedAt);
    const summary = summarizeProfile(main, w.from, w.to);
    lines.push(
      `  ${kind}, last round: ${(summary.windowMs / 1000).toFixed(2)} s window, main thread sampled ${(summary.sampledMs / 1000).toFixed(2)} s`,
    );
    lines.push(
      formatTable(
        ['category', 'self ms', 'inclusive ms'],
        summary.rows.filter((r) => r.inclusiveMs >= 10).map((r) => [r.name, r.selfMs.toFixed(0), r.inclusiveMs.toFixed(0)]),
      ).replace(/^/gm, '    '),
    );
    lines.push('    functions by self time:');
    for (const f of summary.topSelf) lines.push(`      ${f.selfMs.toFixed(0).padStart(6)} ms  ${f.name}`);
  }
  return lines;
}

function report(run: StoreRun): string[] {
  console.log(`\n${run.store}: ${run.description} (load average before: ${run.loadBefore})`);
  const rows: string[][] = [];
  const verdicts: string[] = [];
  const sides = sidesOf(run.store);
  const median = (kind: Kind, side: Side) => mid((run.results.get(`${kind} ${side}`) ?? []).map((t) => t.seconds));
  for (const kind of KINDS) {
    for (const side of sides) {
      const transfers = run.results.get(`${kind} ${side}`) ?? [];
      const seconds = median(kind, side);
      const worst = transfers.reduce((w, t) => (t.rssPeak - t.rssBefore > w.rssPeak - w.rssBefore ? t : w), transfers[0]!);
      rows.push([
        LABELS[kind][side][run.store],
        seconds.toFixed(2),
        mbps(seconds).toFixed(1),
        (median(kind, 'baseline') / seconds).toFixed(2),
        transfers.map((t) => t.seconds.toFixed(2)).join(' '),
        mid(transfers.map((t) => t.cpu)).toFixed(2),
        mid(transfers.map((t) => t.cpuMain)).toFixed(2),
        mid(transfers.map((t) => t.clientCpu)).toFixed(2),
        (mid(transfers.map((t) => t.busy)) * 100).toFixed(0),
        mib(worst.rssBefore),
        mib(worst.rssPeak),
        mib(worst.rssPeak - worst.rssBefore),
      ]);
    }
    const ratio = median(kind, 'baseline') / median(kind, 'service');
    const growth = Math.max(...(run.results.get(`${kind} service`) ?? []).map((t) => t.rssPeak - t.rssBefore)) / MiB;
    const reference = sides.includes('nodeDefaults')
      ? `; against Node's default buffer ${(median(kind, 'nodeDefaults') / median(kind, 'service')).toFixed(2)}` +
        `; the folder store alone ${(median(kind, 'baseline') / median(kind, 'store')).toFixed(2)}, the service against it ${(median(kind, 'store') / median(kind, 'service')).toFixed(2)}`
      : '';
    verdicts.push(
      `  ${run.store.padEnd(6)} ${(kind === 'upload' ? 'multipart upload' : 'remote fetch').padEnd(16)}  ratio ${ratio.toFixed(2)} ${ratio >= TARGET_RATIO ? 'PASS' : 'MISS'}${reference}` +
        `   service RSS growth ${growth.toFixed(0)} MiB ${growth < RSS_BOUND_MIB ? 'PASS' : 'MISS'}`,
    );
  }
  console.log(
    formatTable(
      [
        'variant',
        'median s',
        'MB/s',
        'ratio',
        'rounds (s)',
        'CPU s',
        'main thread',
        'client CPU s',
        'busy %',
        'RSS before',
        'peak',
        'growth MiB',
      ],
      rows,
    ),
  );
  const fixed = (kind: Kind, side: Side) => `${(mid(run.fixedCost.get(`${kind} ${side}`) ?? []) * 1000).toFixed(0)} ms`;
  console.log(
    `fixed cost (median of ${ROUNDS} transfers of ${mib(FIXED_COST_BYTES)} MiB): upload ${fixed('upload', 'baseline')} baseline, ${fixed('upload', 'service')} service; fetch ${fixed('fetch', 'baseline')} baseline, ${fixed('fetch', 'service')} service`,
  );
  if (run.profile.length > 0)
    console.log(`\nwhere the service's main thread spent its time (BENCH_CPU_PROF=1):\n${run.profile.join('\n')}`);
  return verdicts;
}

async function main() {
  const hardStop = setTimeout(() => {
    console.error(`bench: the run passed its hard stop of ${TIMEOUT_SECONDS} s; cleaning up`);
    void closeAll().finally(() => process.exit(1));
  }, TIMEOUT_SECONDS * 1000);
  hardStop.unref();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`bench: ${signal}; cleaning up`);
      void closeAll().finally(() => process.exit(130));
    });
  }
  const started = Date.now();
  try {
    for (const store of STORES)
      if (store !== 'folder' && store !== 's3') throw new Error(`BENCH_STORES: ${String(store)} is neither folder nor s3`);
    console.log(
      `bench/upload: ${mib(BYTES)} MiB per transfer, ${ROUNDS} interleaved rounds (medians), stores ${STORES.join(', ')}${EMBEDDED ? ', embedded PGlite' : ''}; ${machineLine()}`,
    );
    const video = videoBytes(BYTES);
    const warmup = videoBytes(Math.min(WARMUP_BYTES, BYTES));
    const small = videoBytes(FIXED_COST_BYTES);
    // Once, before anything is measured: every stored copy is checked against these.
    for (const v of [video, warmup, small]) v.sha256();
    let minio: S3Server | undefined;
    const runs: StoreRun[] = [];
    for (const store of STORES) {
      // Started when its turn comes, so it does not idle beside the folder's transfers.
      if (store === 's3' && !minio) {
        const server = await startMinio();
        minio = server;
        closers.push({ what: 'MinIO', close: () => server.stop() });
      }
      runs.push(await runStore(store, video, warmup, small, minio));
    }
    const verdicts = runs.flatMap((run) => report(run));
    console.log(
      `\nMB = 10^6 bytes, MiB = 2^20; ratio = the baseline's median time / this variant's; CPU = the receiving process's median CPU seconds per transfer`,
    );
    console.log(
      `(main thread: the part its event loop spent; the rest is the hashing thread, libuv's pool and V8's garbage collection threads),`,
    );
    console.log(
      `client CPU = this process's (client and source); busy % = the machine's cores, everyone's work included; RSS: VmRSS every ${SAMPLE_MS} ms, worst round`,
    );
    console.log(
      `\nverdicts (service >= ${TARGET_RATIO} x baseline throughput; service RSS growth < ${RSS_BOUND_MIB} MiB in every round):\n${verdicts.join('\n')}`,
    );
    console.log(`\nrun took ${((Date.now() - started) / 1000).toFixed(0)} s; load average at the end ${loadAverage()}`);
  } finally {
    await closeAll();
    clearTimeout(hardStop);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
