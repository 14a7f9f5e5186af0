/**
 * The S3 store's writer: a stream cut into parts of `partSizeBytes`, uploaded `partsInFlight` at a
 * time into one multipart upload at the key (a file smaller than one part is put whole at the end).
 * Every write goes through it, plain or resumable.
 *
 * It does the work `@aws-sdk/lib-storage`'s Upload would, with one difference that decides its
 * speed: a part's buffer is reused once the part is stored, so a write allocates at most
 * `partsInFlight + 1` buffers whatever the file's size. Upload allocates a new buffer for every
 * part; on a 1 GiB file that is 128 buffers of 8 MiB, and the collections they caused were the
 * largest cost of an upload to MinIO (bench/upload).
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  UploadPartCommand,
  UploadPartCopyCommand,
  type CompletedPart,
  type S3Client,
} from '@aws-sdk/client-s3';
import { Writable } from 'node:stream';
import { isNotFound, unavailable } from './s3-errors';
import type { ResumePoint } from './resumable-write';

export interface S3PartTarget {
  client: S3Client;
  bucket: string;
  /** The object's full key, the store's prefix included. */
  objectKey: string;
  partSizeBytes: number;
  partsInFlight: number;
}

/** The largest part S3 copies in one call. */
const MAX_COPY_PART_BYTES = 5 * 1024 ** 3;

/** Where a resumed write keeps the bytes an interrupted attempt stored, while it writes the key again. */
export const prefixKeyOf = (objectKey: string) => `${objectKey}.fetch-prefix`;

export const copySource = (bucket: string, key: string) => `${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;

export interface S3PartWriterOptions {
  /** A resumed write's upload starts with a server-side copy of this many bytes from the side key. */
  prefixBytes?: number;
  /** Told each time the parts stored without a gap grow. */
  onCheckpoint?: (point: ResumePoint) => void;
}

export class S3PartWriter extends Writable {
  private uploadId: string | undefined;
  private readonly done: CompletedPart[] = [];
  private readonly sizes: number[] = [];
  private numbered = 0;
  private stored = 0;
  private storedBytes = 0;
  private current: Buffer | undefined;
  private filled = 0;
  /** Buffers of stored parts, filled again by the next parts. */
  private readonly spare: Buffer[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private failure: Error | undefined;
  private readonly prefixBytes: number;

  constructor(
    private readonly target: S3PartTarget,
    private readonly options: S3PartWriterOptions = {},
  ) {
    super();
    this.prefixBytes = options.prefixBytes ?? 0;
  }

  override _construct(callback: (err?: Error | null) => void): void {
    if (this.prefixBytes === 0) return callback();
    this.copyPrefix().then(
      () => callback(),
      (err: unknown) => callback(unavailable('write', err)),
    );
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, callback: (err?: Error | null) => void): void {
    this.take(chunk).then(() => callback(), callback);
  }

  override _final(callback: (err?: Error | null) => void): void {
    this.finish().then(() => callback(), callback);
  }

  /**
   * Aborts the multipart upload, for a write that failed and will not be resumed: its parts are
   * gone at once instead of waiting for the sweep. Waits for the parts in flight, which could
   * otherwise land after the abort on some stores.
   */
  async abort(): Promise<void> {
    await Promise.allSettled(this.inFlight);
    if (this.uploadId === undefined) return;
    const { client, bucket: Bucket, objectKey: Key } = this.target;
    await client.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId: this.uploadId })).catch((err: unknown) => {
      if (!isNotFound(err)) throw unavailable('remove', err);
    });
  }

  private async take(chunk: Buffer): Promise<void> {
    const size = this.target.partSizeBytes;
    let at = 0;
    while (at < chunk.length) {
      this.current ??= this.spare.pop() ?? Buffer.allocUnsafe(size);
      const n = chunk.copy(this.current, this.filled, at);
      this.filled += n;
      at += n;
      if (this.filled === size) {
        const part = this.current;
        this.current = undefined;
        this.filled = 0;
        await this.ship(part);
      }
    }
  }

  private async finish(): Promise<void> {
    const { client, bucket: Bucket, objectKey: Key } = this.target;
    const tail = this.current?.subarray(0, this.filled) ?? Buffer.alloc(0);
    if (this.uploadId === undefined) {
      // Smaller than one part: nothing to resume, and one call stores it.
      await client
        .send(new PutObjectCommand({ Bucket, Key, Body: tail }))
        .catch((err: unknown) => Promise.reject(unavailable('write', err)));
      return;
    }
    if (tail.length > 0) await this.ship(tail);
    await Promise.all(this.inFlight);
    if (this.failure) throw this.failure;
    try {
      await client.send(
        new CompleteMultipartUploadCommand({ Bucket, Key, UploadId: this.uploadId, MultipartUpload: { Parts: this.done } }),
      );
    } catch (err) {
      throw unavailable('write', err);
    }
  }

  /** Waits for room among the parts in flight, then sends this one. */
  private async ship(body: Buffer): Promise<void> {
    while (this.inFlight.size >= this.target.partsInFlight) await Promise.race(this.inFlight);
    if (this.failure) throw this.failure;
    const UploadId = await this.upload();
    const PartNumber = ++this.numbered;
    const { client, bucket: Bucket, objectKey: Key } = this.target;
    const sent: Promise<void> = client
      .send(new UploadPartCommand({ Bucket, Key, UploadId, PartNumber, Body: body }))
      .then(
        (res) => this.partStored(PartNumber, res.ETag, body.length),
        (err: unknown) => {
          // Kept for the next ship or the end, which fail the stream with it.
          this.failure ??= unavailable('write', err);
        },
      )
      .finally(() => {
        this.inFlight.delete(sent);
        // The SDK is done with the body once the call settles, retries included.
        if (body.length === this.target.partSizeBytes) this.spare.push(body);
      });
    this.inFlight.add(sent);
  }

  private async upload(): Promise<string> {
    if (this.uploadId) return this.uploadId;
    const res = await this.target.client
      .send(new CreateMultipartUploadCommand({ Bucket: this.target.bucket, Key: this.target.objectKey }))
      .catch((err: unknown) => Promise.reject(unavailable('write', err)));
    this.uploadId = res.UploadId!;
    return this.uploadId;
  }

  /** The side copy of the prefix as the upload's first parts: as many as S3's copy limit needs, of equal size. */
  private async copyPrefix(): Promise<void> {
    const UploadId = await this.upload();
    const { client, bucket: Bucket, objectKey: Key } = this.target;
    const count = Math.ceil(this.prefixBytes / MAX_COPY_PART_BYTES);
    const each = Math.ceil(this.prefixBytes / count);
    for (let start = 0; start < this.prefixBytes; start += each) {
      const end = Math.min(start + each, this.prefixBytes) - 1;
      const PartNumber = ++this.numbered;
      const res = await client.send(
        new UploadPartCopyCommand({
          Bucket,
          Key,
          UploadId,
          PartNumber,
          CopySource: copySource(Bucket, prefixKeyOf(Key)),
          CopySourceRange: `bytes=${start}-${end}`,
        }),
      );
      this.partStored(PartNumber, res.CopyPartResult?.ETag, end - start + 1);
    }
  }

  private partStored(PartNumber: number, ETag: string | undefined, bytes: number): void {
    this.done[PartNumber - 1] = { PartNumber, ETag };
    this.sizes[PartNumber - 1] = bytes;
    const before = this.stored;
    while (this.done[this.stored]) this.storedBytes += this.sizes[this.stored++]!;
    if (this.stored > before) this.options.onCheckpoint?.({ offset: this.storedBytes, uploadId: this.uploadId, parts: this.stored });
  }
}
