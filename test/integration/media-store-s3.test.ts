/**
 * The S3 media store on a real MinIO: the same contract as the folder, plus what only a network
 * store has (parts, an outage, a start-up check that names what is wrong).
 */
import {
  CreateMultipartUploadCommand,
  DeleteObjectsCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  type S3Client,
} from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { Readable } from 'node:stream';
import { S3MediaStore, type S3StoreSettings } from '../../core/media/s3-store';
import { MediaStoreUnavailableError } from '../../core/media/storage';
import { describeMediaStoreContract } from '../helpers/media-store-contract';
import { adminS3Client, testS3, testStoreSettings } from '../helpers/minio-server';

/** testStoreSettings' part size. */
const PART = 5 * 1024 * 1024;

const settingsFor = (s3: ReturnType<typeof testS3>, overrides: Partial<S3StoreSettings> = {}) =>
  testStoreSettings(s3.server, s3.bucket, s3.prefix, overrides);
const adminClient = (s3: ReturnType<typeof testS3>) => adminS3Client(s3.server);

/** Objects under the prefix (without it) and unfinished multipart uploads (as `upload:<key>`). */
async function listUnder(client: S3Client, bucket: string, prefix: string): Promise<string[]> {
  const objects = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
  // MinIO lists uploads by exact key only: all of them, filtered here.
  const uploads = ((await client.send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? []).filter((u) =>
    u.Key!.startsWith(prefix),
  );
  return [
    ...(objects.Contents ?? []).map((o) => o.Key!.slice(prefix.length)),
    ...uploads.map((u) => `upload:${u.Key!.slice(prefix.length)}`),
  ].sort();
}

describeMediaStoreContract(
  'S3 store on MinIO',
  async () => {
    const s3 = testS3();
    const store = new S3MediaStore(settingsFor(s3));
    const admin = adminClient(s3);
    return {
      store,
      leftovers: () => listUnder(admin, s3.bucket, s3.prefix),
      cleanup: async () => {
        const keys = (await admin.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: s3.prefix }))).Contents ?? [];
        if (keys.length)
          await admin.send(new DeleteObjectsCommand({ Bucket: s3.bucket, Delete: { Objects: keys.map((k) => ({ Key: k.Key! })) } }));
        admin.destroy();
        store.close();
      },
    };
  },
  // Three parts: the cut and the cap happen after whole parts were uploaded.
  { largeBytes: 3 * PART },
);

describe('S3 store: outages and start-up checks', () => {
  it('answers a store that stops mid-upload with MediaStoreUnavailableError, and a store that is down the same way', async () => {
    // A port that accepts connections and then drops them: a store dying under the upload.
    const dropper = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => dropper.listen(0, '127.0.0.1', resolve));
    const port = (dropper.address() as net.AddressInfo).port;
    const s3 = testS3();
    const store = new S3MediaStore(settingsFor(s3, { endpoint: `http://127.0.0.1:${port}`, requestTimeoutMs: 2_000 }));
    try {
      const err = await store.write('videos/vid_x', Readable.from([randomBytes(1000)]), { maxBytes: 10_000 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MediaStoreUnavailableError);
      expect((err as Error).message).toMatch(/^media store unavailable \(write\)/);
      await expect(store.size('videos/vid_x')).rejects.toBeInstanceOf(MediaStoreUnavailableError);
      await expect(store.open('videos/vid_x')).rejects.toBeInstanceOf(MediaStoreUnavailableError);
    } finally {
      store.close();
      dropper.close();
    }
  });

  it('says at start-up what is wrong: a missing bucket, wrong credentials, nothing listening', async () => {
    const s3 = testS3();
    const check = async (overrides: Partial<S3StoreSettings>) => {
      const store = new S3MediaStore(settingsFor(s3, overrides));
      try {
        return await store.check().then(
          () => 'ok',
          (e: Error) => e.message,
        );
      } finally {
        store.close();
      }
    };
    expect(await check({})).toBe('ok');
    expect(await check({ bucket: 'no-such-bucket-here' })).toMatch(/bucket no-such-bucket-here .*the bucket does not exist/);
    expect(await check({ credentials: { accessKeyId: s3.server.accessKeyId, secretAccessKey: 'wrong-secret-key' } })).toMatch(
      /access denied/,
    );
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    expect(await check({ endpoint: `http://127.0.0.1:${port}` })).toMatch(/ECONNREFUSED/);
  });

  it('sweeps multipart uploads a killed process left behind, and only those old enough', async () => {
    const s3 = testS3();
    const admin = adminClient(s3);
    const store = new S3MediaStore(settingsFor(s3));
    try {
      await admin.send(new CreateMultipartUploadCommand({ Bucket: s3.bucket, Key: `${s3.prefix}videos/vid_orphan` }));
      expect(await store.sweepIncompleteUploads(new Date(Date.now() - 60_000))).toBe(0);
      expect(await listUnder(admin, s3.bucket, s3.prefix)).toEqual(['upload:videos/vid_orphan']);
      expect(await store.sweepIncompleteUploads(new Date(Date.now() + 60_000))).toBe(1);
      expect(await listUnder(admin, s3.bucket, s3.prefix)).toEqual([]);
    } finally {
      admin.destroy();
      store.close();
    }
  });
});
