/**
 * Once per run: a fresh Postgres database (migrated), one Temporal dev server unless
 * TEMPORAL_ADDRESS names one, one MinIO server unless TEST_S3_ENDPOINT names one, and the web
 * console built. The addresses reach the test workers through the environment.
 */
import { execFileSync } from 'node:child_process';
import postgres from 'postgres';
import { openDatabase } from '../../core/db/client';
import { freePort, startTemporalDevServer, type DevServer } from '../../core/embedded/temporal-dev-server';
import { startMinio, type S3Server } from './minio-server';
import { REPO_ROOT } from './processes';

declare global {
  // Shared with global-teardown, which runs in the same context.
  var __vpsTestResources: { devServer?: DevServer; s3?: S3Server; adminUrl: string; database: string } | undefined;
}

export const ADMIN_URL = process.env.TEST_POSTGRES_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export default async function globalSetup(): Promise<void> {
  // Before any suite starts: suites serve console/dist, and a build empties it while it runs. Later
  // builds (the browser test's, `npm start`'s) find it up to date and leave it alone.
  execFileSync('bash', ['scripts/build-console.sh'], { cwd: REPO_ROOT, stdio: 'inherit' });
  const database = `vps_test_${Date.now()}_${process.pid}`;
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => undefined });
  try {
    await admin.unsafe(`create database ${database}`);
  } finally {
    await admin.end();
  }
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  const migrated = await openDatabase({ url: url.toString(), dataDir: '.data', poolSize: 1 });
  await migrated.close();
  process.env.TEST_DATABASE_URL = url.toString();

  let devServer: DevServer | undefined;
  if (!process.env.TEMPORAL_ADDRESS) {
    devServer = await startTemporalDevServer({ port: await freePort(), uiPort: await freePort(), namespace: 'default' });
    process.env.TEMPORAL_ADDRESS = devServer.address;
  }
  let s3: S3Server | undefined;
  if (!process.env.TEST_S3_ENDPOINT) {
    s3 = await startMinio();
    Object.assign(process.env, {
      TEST_S3_ENDPOINT: s3.endpoint,
      TEST_S3_ACCESS_KEY_ID: s3.accessKeyId,
      TEST_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
      TEST_S3_BUCKET: s3.bucket,
    });
  }
  globalThis.__vpsTestResources = { devServer, s3, adminUrl: ADMIN_URL, database };
}
