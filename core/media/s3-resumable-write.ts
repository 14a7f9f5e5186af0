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
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListPartsCommand,
} from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { pipeResumed } from './resumed-stream';
import { isNotFound, unavailable } from './s3-errors';
import { copySource, prefixKeyOf, S3PartWriter, type S3PartTarget } from './s3-part-writer';
import type { ResumableWrite, ResumableWriteOptions, ResumePoint } from './resumable-write';
import { meter, type StoredMedia } from './storage';

export async function beginS3ResumableWrite(target: S3PartTarget, resume: ResumePoint | undefined): Promise<ResumableWrite> {
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
      const sink = new S3PartWriter(target, { prefixBytes: from, onCheckpoint: opts.onCheckpoint });
      const prefix = from > 0 ? () => openObject(target, prefixKeyOf(target.objectKey)) : undefined;
      await pipeResumed({ prefix, rest, from, metered: metered.stream, sink, ...(opts.signal ? { signal: opts.signal } : {}) });
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
export async function discardS3ResumableWrite(target: S3PartTarget): Promise<void> {
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
async function movePrefixAside(target: S3PartTarget, resume: ResumePoint): Promise<string | undefined> {
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

async function listParts(target: S3PartTarget, UploadId: string) {
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

async function sizeOf(target: S3PartTarget, Key: string): Promise<number | undefined> {
  try {
    return (await target.client.send(new HeadObjectCommand({ Bucket: target.bucket, Key }))).ContentLength;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

async function openObject(target: S3PartTarget, Key: string): Promise<Readable> {
  try {
    return (await target.client.send(new GetObjectCommand({ Bucket: target.bucket, Key }))).Body as Readable;
  } catch (err) {
    throw unavailable('read', err);
  }
}

function ignoreNotFound(err: unknown): void {
  if (!isNotFound(err)) throw err;
}
