/**
 * A MinIO server as a child process on loopback: the real S3-compatible store of the test suite
 * and the benchmarks. The binary is found or built by scripts/minio.sh (outside the work tree, like
 * the Temporal CLI); its data lives in a temporary folder removed at stop.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { freePort } from '../../core/embedded/temporal-dev-server';
import type { S3StoreSettings } from '../../core/media/s3-store';
import { REPO_ROOT } from './processes';

export interface S3Server {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** A bucket made at start, for whoever has no reason to make their own. */
  bucket: string;
  /** Another bucket, made now. */
  createBucket(name?: string): Promise<string>;
  stop(): Promise<void>;
}

export function findMinio(): string {
  const result = spawnSync('bash', [path.join(REPO_ROOT, 'scripts', 'minio.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const found = result.stdout.trim().split('\n').pop();
  if (result.status !== 0 || !found) throw new Error('MinIO not found and could not be built; see scripts/minio.sh');
  return found;
}

export async function startMinio(opts: { startTimeoutMs?: number } = {}): Promise<S3Server> {
  const binary = findMinio();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'vps-minio-'));
  const port = await freePort();
  // MinIO picks its console's port at random when none is named, and now and then it picks the
  // API's own port and refuses to start; naming a second free port removes that chance.
  let consolePort = await freePort();
  while (consolePort === port) consolePort = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const accessKeyId = 'vps-test';
  const secretAccessKey = randomBytes(16).toString('hex');
  const child = spawn(
    binary,
    ['server', dataDir, '--address', `127.0.0.1:${port}`, '--console-address', `127.0.0.1:${consolePort}`, '--quiet'],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: {
        ...process.env,
        MINIO_ROOT_USER: accessKeyId,
        MINIO_ROOT_PASSWORD: secretAccessKey,
        MINIO_BROWSER: 'off',
        MINIO_UPDATE: 'off',
      },
    },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const killOnExit = () => {
    if (child.exitCode === null) child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    process.off('exit', killOnExit);
    rmSync(dataDir, { recursive: true, force: true });
  };
  const deadline = Date.now() + (opts.startTimeoutMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`MinIO exited with ${child.exitCode}: ${stderr}`);
    const live = await fetch(`${endpoint}/minio/health/live`).then(
      (r) => r.ok,
      () => false,
    );
    if (live) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`MinIO did not answer on ${endpoint} in time: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const client = adminS3Client({ endpoint, accessKeyId, secretAccessKey });
  const createBucket = async (name = `vps-${randomBytes(6).toString('hex')}`) => {
    await client.send(new CreateBucketCommand({ Bucket: name }));
    return name;
  };
  const bucket = await createBucket('vps-test');
  return {
    endpoint,
    accessKeyId,
    secretAccessKey,
    bucket,
    createBucket,
    stop: async () => {
      client.destroy();
      await stop();
    },
  };
}

/** The settings a process needs to use this server's bucket, as environment variables. */
export function s3Env(
  server: Pick<S3Server, 'endpoint' | 'accessKeyId' | 'secretAccessKey'>,
  bucket: string,
  prefix?: string,
): Record<string, string> {
  return {
    MEDIA_STORE: 's3',
    MEDIA_S3_ENDPOINT: server.endpoint,
    MEDIA_S3_BUCKET: bucket,
    MEDIA_S3_ACCESS_KEY_ID: server.accessKeyId,
    MEDIA_S3_SECRET_ACCESS_KEY: server.secretAccessKey,
    ...(prefix ? { MEDIA_S3_PREFIX: prefix } : {}),
  };
}

/** The suite's S3 server (global-setup starts it, or TEST_S3_ENDPOINT names one) with a fresh key prefix. */
export function testS3(): {
  server: Pick<S3Server, 'endpoint' | 'accessKeyId' | 'secretAccessKey'>;
  bucket: string;
  prefix: string;
  env: Record<string, string>;
} {
  const required = (name: string) => {
    const value = process.env[name];
    if (!value) throw new Error(`${name} is not set: the jest global setup starts MinIO and sets it`);
    return value;
  };
  const server = {
    endpoint: required('TEST_S3_ENDPOINT'),
    accessKeyId: required('TEST_S3_ACCESS_KEY_ID'),
    secretAccessKey: required('TEST_S3_SECRET_ACCESS_KEY'),
  };
  const bucket = process.env.TEST_S3_BUCKET ?? 'vps-test';
  const prefix = `t-${randomBytes(6).toString('hex')}/`;
  return { server, bucket, prefix, env: s3Env(server, bucket, prefix) };
}

type ServerAccess = Pick<S3Server, 'endpoint' | 'accessKeyId' | 'secretAccessKey'>;

/**
 * S3 store settings for tests: the smallest part S3 allows (so files of a few MB take the
 * multipart path), two parts in flight, a short timeout.
 */
export function testStoreSettings(
  server: ServerAccess,
  bucket: string,
  keyPrefix: string,
  overrides: Partial<S3StoreSettings> = {},
): S3StoreSettings {
  return {
    bucket,
    endpoint: server.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
    forcePathStyle: true,
    keyPrefix,
    partSizeBytes: 5 * 1024 * 1024,
    partsInFlight: 2,
    requestTimeoutMs: 5_000,
    ...overrides,
  };
}

/** A client with the server's root credentials, for a test to look into the bucket. */
export function adminS3Client(server: ServerAccess): S3Client {
  return new S3Client({
    endpoint: server.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
  });
}
