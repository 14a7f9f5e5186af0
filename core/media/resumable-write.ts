/**
 * Writes that survive their process: a remote fetch interrupted by a crash goes on, in the next
 * attempt, from what the store already holds. The stores implement them in folder-resumable-write.ts
 * and s3-resumable-write.ts.
 */
import type { Readable } from 'node:stream';
import type { StoredMedia, WriteOptions } from './written';

/**
 * Where an interrupted resumable write can go on from: small and JSON, so it travels in an activity
 * heartbeat to the next attempt, in whatever process that runs.
 */
export interface ResumePoint {
  /** Bytes of the file stored, from its first byte: the source goes on from here. */
  offset: number;
  /**
   * The folder store's: the machine boot in which the bytes were written, which is as long as
   * bytes not yet flushed are sure to be there. Absent, they were flushed to the disk.
   */
  bootId?: string;
  /** The S3 store's multipart upload that holds them, as its first `parts` parts. */
  uploadId?: string;
  parts?: number;
}

export interface ResumableWriteOptions extends WriteOptions {
  /** A longer prefix of the file is stored: a later attempt can go on from `point`. */
  onCheckpoint?: (point: ResumePoint) => void;
}

/**
 * A write that keeps its progress where a later attempt, in any process, finds it. What it stored
 * stays when it fails, for the next attempt, until a write of the key completes or the store's
 * discardResumable removes it; the key holds nothing until the whole file is there.
 */
export interface ResumableWrite {
  /** Bytes already stored: the rest of the file starts here (0: the whole file is to come). */
  readonly offset: number;
  /** Why the resume point given could not be used (what it named is gone or differs), so the write starts over. */
  readonly lostResume?: string;
  /** Forgets the stored prefix: the source could not go on from it and sends the file from its start. */
  restart(): void;
  /**
   * Stores the rest of the file, from `offset`, and completes the object. Size, SHA-256, head and
   * progress are of the whole file: the stored prefix is read back from the store (not the source)
   * and metered first.
   */
  complete(rest: Readable | AsyncIterable<Uint8Array>, opts: ResumableWriteOptions): Promise<StoredMedia>;
}
