/**
 * The media store as the roles meet it at start-up and over time: a store a process cannot use
 * stops it with a message that says why, and workers sweep the multipart uploads a killed process
 * left behind.
 */
import { CreateMultipartUploadCommand, ListMultipartUploadsCommand } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { cleanEnv, exitOf, spawnVps, UNREACHABLE_PLATFORM_ENV, type ChildHandle } from '../helpers/processes';
import { eventually } from '../helpers/receivers';
import { requiredEnv } from '../helpers/stack';
import { adminS3Client, testS3 } from '../helpers/minio-server';

describe('the media store at start-up and in the background', () => {
  const children: ChildHandle[] = [];
  afterEach(async () => {
    await Promise.all(children.splice(0).map((c) => c.stop('SIGKILL')));
  });
  const gateway = (env: Record<string, string>) => {
    const child = spawnVps(['serve', '--role', 'gateway'], cleanEnv({ CORE_URL: 'http://127.0.0.1:9', PORT: '0', ...env }));
    children.push(child);
    return child;
  };

  it('stops a role at start-up when the bucket is missing, or its settings are incomplete, saying which', async () => {
    const s3 = testS3();
    const missing = gateway({ ...s3.env, MEDIA_S3_BUCKET: 'no-such-bucket' });
    expect(await exitOf(missing)).not.toBe(0);
    expect(missing.output()).toMatch(
      /media store s3 bucket no-such-bucket at http:\/\/127\.0\.0\.1:\d+ cannot be used: the bucket does not exist/,
    );

    const incomplete = gateway({ MEDIA_STORE: 's3', MEDIA_S3_ACCESS_KEY_ID: 'only-the-id' });
    expect(await exitOf(incomplete)).not.toBe(0);
    expect(incomplete.output()).toContain('MEDIA_S3_BUCKET: required with MEDIA_STORE=s3');
    expect(incomplete.output()).toContain('MEDIA_S3_ACCESS_KEY_ID and MEDIA_S3_SECRET_ACCESS_KEY: set both or neither');
  }, 60_000);

  it('has a worker abort the multipart uploads a killed process left, once they are old enough', async () => {
    const s3 = testS3();
    const admin = adminS3Client(s3.server);
    const key = `${s3.prefix}videos/vid_${randomBytes(4).toString('hex')}`;
    const elsewhere = `other-${randomBytes(4).toString('hex')}/videos/vid_keep`;
    try {
      await admin.send(new CreateMultipartUploadCommand({ Bucket: s3.bucket, Key: key }));
      await admin.send(new CreateMultipartUploadCommand({ Bucket: s3.bucket, Key: elsewhere }));
      const worker = spawnVps(
        ['serve', '--role', 'worker'],
        cleanEnv({
          ...s3.env,
          DATABASE_URL: requiredEnv('TEST_DATABASE_URL'),
          TEMPORAL_ADDRESS: requiredEnv('TEMPORAL_ADDRESS'),
          TEMPORAL_TASK_QUEUE: `vps-sweep-${process.pid}-${Date.now()}`,
          VPS_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
          ...UNREACHABLE_PLATFORM_ENV,
          MEDIA_S3_ORPHAN_AGE_MS: '1',
          MEDIA_S3_SWEEP_INTERVAL_MS: '500',
          LOG_LEVEL: 'info',
        }),
      );
      children.push(worker);
      const uploads = async () =>
        ((await admin.send(new ListMultipartUploadsCommand({ Bucket: s3.bucket }))).Uploads ?? []).map((u) => u.Key);
      const left = await eventually(uploads, (keys) => !keys.includes(key), 20_000);
      expect(left).not.toContain(key);
      // Another deployment's prefix in the same bucket is not ours to sweep.
      expect(left).toContain(elsewhere);
      // The log line may reach us a little after the abort itself.
      await worker.waitFor(/aborted multipart uploads left by stopped processes/, 10_000);
    } finally {
      admin.destroy();
    }
  }, 60_000);
});
