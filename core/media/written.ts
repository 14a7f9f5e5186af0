/**
 * What a media write takes and what it gives back, for plain and resumable writes alike: in a file
 * of its own so that storage.ts and resumable-write.ts, which both speak of them, need not import
 * each other.
 */
export interface StoredMedia {
  sizeBytes: number;
  sha256: string;
  /** The first bytes, for recognising the format. */
  head: Buffer;
}

export interface WriteOptions {
  maxBytes: number;
  signal?: AbortSignal;
  onProgress?: (bytes: number) => void;
}
