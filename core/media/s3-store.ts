/**
 * Media in an S3-compatible bucket (AWS S3, MinIO and the like): what lets gateways and workers on
 * different machines share uploads. A write is a multipart upload fed from the stream as it
 * arrives, so memory stays at part size times parts in flight whatever the file's size. A write
 * that fails (the body cut, over its cap, the store gone) aborts its multipart upload before it
 * returns, so no object and no parts are left; a process killed mid-write leaves parts that
 * sweepIncompleteUploads removes once they are old enough.
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCopyCommand,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, isNotFound, unavailable } from './s3-errors';
import { S3PartWriter, type S3PartTarget } from './s3-part-writer';
import { beginS3ResumableWrite, discardS3ResumableWrite } from './s3-resumable-write';
import type { ResumableWrite, ResumePoint } from './resumable-write';
import { checkedKey, meter, MediaNotFoundError, STAGING_PREFIX, type MediaStore, type StoredMedia, type WriteOptions } from './storage';

/** The largest object one CopyObject copies (the S3 limit), and the part size of larger copies. */
const COPY_OBJECT_MAX_BYTES = 5 * 1024 ** 3;
const COPY_PART_BYTES = 1024 ** 3;

export interface S3StoreSettings {
  bucket: string;
  /** Unset: AWS S3 itself, in `region`. */
  endpoint?: string;
  region: string;
  /** Unset: the SDK's default credential chain (environment, profile, instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Bucket in the path rather than the host name: what MinIO and most self-hosted stores expect. */
  forcePathStyle: boolean;
  /** Prepended to every key, so one bucket can hold several deployments. */
  keyPrefix: string;
  partSizeBytes: number;
  /** Parts uploaded at once; memory per write is about partSizeBytes times this. */
  partsInFlight: number;
  /** How long a call may take before the store counts as unreachable. */
  requestTimeoutMs: number;
}

export class S3MediaStore implements MediaStore {
  readonly client: S3Client;

  constructor(private readonly settings: S3StoreSettings) {
    const config: S3ClientConfig = {
      region: settings.region,
      forcePathStyle: settings.forcePathStyle,
      requestHandler: { connectionTimeout: settings.requestTimeoutMs, requestTimeout: settings.requestTimeoutMs },
      // Only what the SDK needs: checksums on request, not on every part (the write computes SHA-256 itself).
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    };
    if (settings.endpoint) config.endpoint = settings.endpoint;
    if (settings.credentials) config.credentials = settings.credentials;
    this.client = new S3Client(config);
  }

  get description(): string {
    return `s3 bucket ${this.settings.bucket}${this.settings.endpoint ? ` at ${this.settings.endpoint}` : ` in ${this.settings.region}`}`;
  }

  private objectKey(key: string): string {
    return `${this.settings.keyPrefix}${checkedKey(key)}`;
  }

  async check(): Promise<void> {
    const Bucket = this.settings.bucket;
    const probe = `${this.settings.keyPrefix}.vps-start-check`;
    try {
      await this.client.send(new HeadBucketCommand({ Bucket }));
      await this.client.send(new PutObjectCommand({ Bucket, Key: probe, Body: 'ok' }));
      await this.client.send(new DeleteObjectCommand({ Bucket, Key: probe }));
    } catch (err) {
      throw new Error(`media store ${this.description} cannot be used: ${describe(err)}`);
    }
  }

  async write(key: string, source: Readable | AsyncIterable<Uint8Array>, opts: WriteOptions): Promise<StoredMedia> {
    const metered = meter(opts);
    const writer = new S3PartWriter(this.partTarget(key));
    try {
      // The writer completes the upload only once the body has ended whole and the hash is known,
      // so a body that fails (cut, over the cap, cancelled) never becomes an object.
      await pipeline(source, metered.stream, writer, ...(opts.signal ? [{ signal: opts.signal }] : []));
    } catch (err) {
      // Its parts go at once; if the store cannot take even that, the sweep removes them later.
      await writer.abort().catch(() => undefined);
      throw err;
    }
    return metered.result();
  }

  async open(key: string, range?: { start: number; end: number }): Promise<Readable> {
    try {
      const res = await this.client.send(
        new GetObjectCommand({
          Bucket: this.settings.bucket,
          Key: this.objectKey(key),
          ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
        }),
      );
      return res.Body as Readable;
    } catch (err) {
      if (isNotFound(err)) throw new MediaNotFoundError(key);
      throw unavailable('read', err);
    }
  }

  async size(key: string): Promise<number | undefined> {
    try {
      const res = await this.client.send(new HeadObjectCommand({ Bucket: this.settings.bucket, Key: this.objectKey(key) }));
      return res.ContentLength;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw unavailable('read', err);
    }
  }

  async remove(key: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: this.objectKey(key) }));
    } catch (err) {
      if (isNotFound(err)) return;
      throw unavailable('remove', err);
    }
  }

  async move(from: string, to: string): Promise<void> {
    const size = await this.size(from);
    if (size === undefined) throw new MediaNotFoundError(from);
    const Bucket = this.settings.bucket;
    const source = `${Bucket}/${this.objectKey(from)}`;
    const Key = this.objectKey(to);
    try {
      // S3 has no rename: a copy inside the store (no byte passes through us), then the original goes.
      if (size <= COPY_OBJECT_MAX_BYTES) await this.client.send(new CopyObjectCommand({ Bucket, Key, CopySource: encodeURI(source) }));
      else await this.copyInParts(source, Key, size);
      await this.client.send(new DeleteObjectCommand({ Bucket, Key: this.objectKey(from) }));
    } catch (err) {
      throw unavailable('move', err);
    }
  }

  /** A copy larger than one CopyObject takes: a multipart upload whose parts are ranges of the source. */
  private async copyInParts(source: string, Key: string, size: number): Promise<void> {
    const Bucket = this.settings.bucket;
    const { UploadId } = await this.client.send(new CreateMultipartUploadCommand({ Bucket, Key }));
    try {
      const Parts: Array<{ ETag: string; PartNumber: number }> = [];
      for (let start = 0, PartNumber = 1; start < size; start += COPY_PART_BYTES, PartNumber++) {
        const end = Math.min(start + COPY_PART_BYTES, size) - 1;
        const part = await this.client.send(
          new UploadPartCopyCommand({
            Bucket,
            Key,
            UploadId,
            PartNumber,
            CopySource: encodeURI(source),
            CopySourceRange: `bytes=${start}-${end}`,
          }),
        );
        Parts.push({ ETag: part.CopyPartResult!.ETag!, PartNumber });
      }
      await this.client.send(new CompleteMultipartUploadCommand({ Bucket, Key, UploadId, MultipartUpload: { Parts } }));
    } catch (err) {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId })).catch(() => undefined);
      throw err;
    }
  }

  resumableWrite(key: string, resume?: ResumePoint): Promise<ResumableWrite> {
    return beginS3ResumableWrite(this.partTarget(key), resume);
  }

  async discardResumable(key: string): Promise<void> {
    try {
      await discardS3ResumableWrite(this.partTarget(key));
    } catch (err) {
      throw unavailable('remove', err);
    }
  }

  private partTarget(key: string): S3PartTarget {
    const { bucket, partSizeBytes, partsInFlight } = this.settings;
    return { client: this.client, bucket, objectKey: this.objectKey(key), partSizeBytes, partsInFlight };
  }

  /**
   * Aborts this deployment's multipart uploads begun before `olderThan`: what a process killed
   * mid-write leaves behind. Returns how many it aborted.
   */
  async sweepIncompleteUploads(olderThan: Date): Promise<number> {
    let aborted = 0;
    let KeyMarker: string | undefined;
    let UploadIdMarker: string | undefined;
    for (;;) {
      // Listed without a prefix and filtered here: MinIO lists by exact key only, whatever the prefix.
      const page = await this.client.send(new ListMultipartUploadsCommand({ Bucket: this.settings.bucket, KeyMarker, UploadIdMarker }));
      for (const u of page.Uploads ?? []) {
        if (!u.Key?.startsWith(this.settings.keyPrefix) || !u.UploadId || !u.Initiated || u.Initiated >= olderThan) continue;
        await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.settings.bucket, Key: u.Key, UploadId: u.UploadId }));
        aborted++;
      }
      if (!page.IsTruncated) return aborted;
      KeyMarker = page.NextKeyMarker;
      UploadIdMarker = page.NextUploadIdMarker;
    }
  }

  async removeStagedBefore(olderThan: Date): Promise<number> {
    const Bucket = this.settings.bucket;
    let removed = 0;
    let ContinuationToken: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket, Prefix: `${this.settings.keyPrefix}${STAGING_PREFIX}`, ContinuationToken }),
      );
      for (const object of page.Contents ?? []) {
        if (!object.Key || !object.LastModified || object.LastModified >= olderThan) continue;
        await this.client.send(new DeleteObjectCommand({ Bucket, Key: object.Key }));
        removed++;
      }
      ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (ContinuationToken);
    return removed;
  }

  close(): void {
    this.client.destroy();
  }
}
