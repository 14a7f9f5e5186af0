/**
 * The S3 store's resumable write. The file goes up as one multipart upload begun at its key, as a
 * plain write does, and a checkpoint names the upload and how many of its first parts are stored:
 * nothing is written twice while nothing breaks. The parts of an unfinished upload cannot be read,
 * so a resume completes the interrupted upload with those parts, moves that object (the prefix) to
 * a side key (`<key>.fetch-prefix`) so the key holds no part of a file, reads it back for the
 * meter, and copies it server-side into a new upload as its first parts; the source's bytes follow.
 * Only a resume pays those copies; writing every piece as an object of its own and assembling
 * them at the end would pay a server-side copy of the whole file on every fetch (about 60% on top
 * of the transfer on MinIO). A failed write keeps its upload for the next attempt; discard aborts
 * it, and the workers' sweep aborts uploads nobody came back for.
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListPartsCommand,
  PutObjectCommand,
  UploadPartCommand,
  UploadPartCopyCommand,
  type CompletedPart,
  type S3Client,
} from '@aws-sdk/client-s3';
import { Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { prefixThenRest, skipFirst } from './resumed-stream';
import { isNotFound, unavailable } from './s3-errors';
import type { ResumableWrite, ResumableWriteOptions, ResumePoint } from './resumable-write';
import { meter, type StoredMedia } from './storage';

export interface S3ResumableTarget {
  client: S3Client;
  bucket: string;
  /** The object's full key, the store's prefix included. */
  objectKey: string;
  partSizeBytes: number;
  partsInFlight: number;
}

/** The largest part S3 copies in one call. */
const MAX_COPY_PART_BYTES = 5 * 1024 ** 3;

const prefixKeyOf = (objectKey: string) => `${objectKey}.fetch-prefix`;

export async function beginS3ResumableWrite(target: S3ResumableTarget, resume: ResumePoint | undefined): Promise<ResumableWrite> {
  let offset = 0;
  let lostResume: string | undefined;
  try {
    if (resume && resume.offset > 0) {
      lostResume = await movePrefixAside(target, resume);
      if (!lostResume) offset = resume.offset;
    }
    // Whatever earlier attempts left that this write will not use: its uploads would otherwise
    // wait for the sweep, and one still running elsewhere stops at its next part.
    if (offset === 0) await discardS3ResumableWrite(target);
  } catch (err) {
    throw unavailable('write', err);
  }
  return {
    get offset() {
      return offset;
    },
    lostResume,
    restart() {
      offset = 0;
    },
    async complete(rest: Readable | AsyncIterable<Uint8Array>, opts: ResumableWriteOptions): Promise<StoredMedia> {
      const from = offset;
      const metered = meter(opts);
      const sink = new PartSink(target, from, opts.onCheckpoint);
      const prefix = from > 0 ? () => openObject(target, prefixKeyOf(target.objectKey)) : undefined;
      await pipeline(prefixThenRest(prefix, rest), metered.stream, skipFirst(from), sink, ...(opts.signal ? [{ signal: opts.signal }] : []));
      try {
        await discardS3ResumableWrite(target);
      } catch (err) {
        throw unavailable('write', err);
      }
      return metered.result();
    },
  };
}

/** Aborts the unfinished uploads of the key and removes its side copy of a prefix; the object itself stays. */
export async function discardS3ResumableWrite(target: S3ResumableTarget): Promise<void> {
  const { client, bucket: Bucket, objectKey } = target;
  // MinIO lists uploads by exact key only, whatever the prefix; S3 by prefix: either way, filtered here.
  const page = await client.send(new ListMultipartUploadsCommand({ Bucket, Prefix: objectKey }));
  for (const u of page.Uploads ?? []) {
    if (u.Key !== objectKey || !u.UploadId) continue;
    await client.send(new AbortMultipartUploadCommand({ Bucket, Key: objectKey, UploadId: u.UploadId })).catch(ignoreNotFound);
  }
  await client.send(new DeleteObjectCommand({ Bucket, Key: prefixKeyOf(objectKey) })).catch(ignoreNotFound);
}

/**
 * Puts the stored prefix under the side key: from the checkpoint's upload (completed at the key,
 * where it was begun), or where an interrupted resume left it. Undefined when it is there;
 * otherwise why the write must start over.
 */
async function movePrefixAside(target: S3ResumableTarget, resume: ResumePoint): Promise<string | undefined> {
  const { client, bucket: Bucket, objectKey } = target;
  const side = prefixKeyOf(objectKey);
  if (resume.uploadId && resume.parts) {
    const parts = await listParts(target, resume.uploadId);
    if (parts) {
      const held = parts.slice(0, resume.parts);
      const heldBytes = held.reduce((n, p) => n + (p.Size ?? 0), 0);
      if (held.length !== resume.parts || held.some((p, i) => p.PartNumber !== i + 1) || heldBytes !== resume.offset) {
        return `the parts stored by the interrupted attempt (${held.length}, ${heldBytes} bytes) differ from its checkpoint (${resume.parts}, ${resume.offset} bytes)`;
      }
      await client.send(
        new CompleteMultipartUploadCommand({
          Bucket,
          Key: objectKey,
          UploadId: resume.uploadId,
          MultipartUpload: { Parts: held.map((p) => ({ PartNumber: p.PartNumber, ETag: p.ETag })) },
        }),
      );
    }
  }
  // A size equal to the checkpoint's at the key is that prefix (a finished file is longer than any
  // checkpoint of its write); a resume interrupted while moving it may have left it in either place.
  if ((await sizeOf(target, objectKey)) === resume.offset) {
    await client.send(new CopyObjectCommand({ Bucket, Key: side, CopySource: copySource(Bucket, objectKey) }));
    await client.send(new DeleteObjectCommand({ Bucket, Key: objectKey }));
  }
  if ((await sizeOf(target, side)) !== resume.offset) return 'the part stored by the interrupted attempt is gone';
  return undefined;
}

async function listParts(target: S3ResumableTarget, UploadId: string) {
  const parts = [];
  let PartNumberMarker: string | undefined;
  for (;;) {
    let page;
    try {
      page = await target.client.send(new ListPartsCommand({ Bucket: target.bucket, Key: target.objectKey, UploadId, PartNumberMarker }));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    parts.push(...(page.Parts ?? []));
    if (!page.IsTruncated) return parts;
    PartNumberMarker = page.NextPartNumberMarker;
  }
}

async function sizeOf(target: S3ResumableTarget, Key: string): Promise<number | undefined> {
  try {
    return (await target.client.send(new HeadObjectCommand({ Bucket: target.bucket, Key }))).ContentLength;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

async function openObject(target: S3ResumableTarget, Key: string): Promise<Readable> {
  try {
    return (await target.client.send(new GetObjectCommand({ Bucket: target.bucket, Key }))).Body as Readable;
  } catch (err) {
    throw unavailable('read', err);
  }
}

function ignoreNotFound(err: unknown): void {
  if (!isNotFound(err)) throw err;
}

const copySource = (bucket: string, key: string) => `${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;

/**
 * Cuts what it is given into parts and uploads them, `partsInFlight` at a time, into an upload at
 * the key begun with the first part (a file smaller than one part is put whole). A resumed write's
 * upload starts with the side copy of the prefix. Each time the parts stored without a gap grow,
 * the checkpoint names them.
 */
class PartSink extends Writable {
  private uploadId: string | undefined;
  private readonly done: CompletedPart[] = [];
  private readonly sizes: number[] = [];
  private numbered = 0;
  private stored = 0;
  private storedBytes = 0;
  private current: Buffer | undefined;
  private filled = 0;
  private readonly inFlight = new Set<Promise<void>>();
  private failure: Error | undefined;

  constructor(
    private readonly target: S3ResumableTarget,
    private readonly prefixBytes: number,
    private readonly onCheckpoint: ((point: ResumePoint) => void) | undefined,
  ) {
    super();
  }

  override _construct(callback: (err?: Error | null) => void): void {
    if (this.prefixBytes === 0) return callback();
    this.copyPrefix().then(() => callback(), (err: unknown) => callback(unavailable('write', err)));
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, callback: (err?: Error | null) => void): void {
    this.take(chunk).then(() => callback(), callback);
  }

  override _final(callback: (err?: Error | null) => void): void {
    this.finish().then(() => callback(), callback);
  }

  private async take(chunk: Buffer): Promise<void> {
    const size = this.target.partSizeBytes;
    let at = 0;
    while (at < chunk.length) {
      this.current ??= Buffer.allocUnsafe(size);
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
      await client.send(new PutObjectCommand({ Bucket, Key, Body: tail })).catch((err: unknown) => Promise.reject(unavailable('write', err)));
      return;
    }
    if (tail.length > 0) await this.ship(tail);
    await Promise.all(this.inFlight);
    if (this.failure) throw this.failure;
    try {
      await client.send(new CompleteMultipartUploadCommand({ Bucket, Key, UploadId: this.uploadId, MultipartUpload: { Parts: this.done } }));
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
      .finally(() => this.inFlight.delete(sent));
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
        new UploadPartCopyCommand({ Bucket, Key, UploadId, PartNumber, CopySource: copySource(Bucket, prefixKeyOf(Key)), CopySourceRange: `bytes=${start}-${end}` }),
      );
      this.partStored(PartNumber, res.CopyPartResult?.ETag, end - start + 1);
    }
  }

  private partStored(PartNumber: number, ETag: string | undefined, bytes: number): void {
    this.done[PartNumber - 1] = { PartNumber, ETag };
    this.sizes[PartNumber - 1] = bytes;
    const before = this.stored;
    while (this.done[this.stored]) this.storedBytes += this.sizes[this.stored++]!;
    if (this.stored > before) this.onCheckpoint?.({ offset: this.storedBytes, uploadId: this.uploadId, parts: this.stored });
  }
}
