/**
 * One /v1 route as the client sees it: method, path, and the types of its input and data (from
 * api-types.ts, generated from the gateway's route schemas, so the client carries no server code).
 */
export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** What a route takes and gives. `params` fill the path's `:name` segments. */
export interface Shape {
  params?: Record<string, string>;
  query?: object;
  body?: object;
  /** Text fields of a multipart upload, sent before the file part. */
  fields?: object;
  file?: UploadFile;
  data: unknown;
}

/** A file to upload: a path on disk, bytes in memory, or a stream (which cannot be sent twice). */
export type UploadFile =
  | { path: string; name?: string; contentType?: string }
  | { bytes: Uint8Array; name: string; contentType?: string }
  | { stream: AsyncIterable<Uint8Array>; name: string; contentType?: string; size?: number };

export interface Endpoint<T extends Shape = Shape> {
  readonly method: HttpMethod;
  readonly path: string;
  /** multipart/form-data with `fields` then a `file` part. */
  readonly upload?: boolean;
  /** Answers with a file rather than the envelope when it succeeds (refusals are envelopes). */
  readonly answersFile?: boolean;
  /** Before a retry, ask the service whether the first attempt went through (shop publish). */
  readonly checkEarlierAttempt?: boolean;
  /** Never set: carries the shape for the type checker. */
  readonly shape?: T;
}

export function endpoint<T extends Shape>(
  method: HttpMethod,
  path: string,
  extra: { upload?: boolean; answersFile?: boolean; checkEarlierAttempt?: boolean } = {},
): Endpoint<T> {
  return { method, path, ...extra };
}

/** What an endpoint that answers with a file gives: its type and its bytes. */
export interface FileAnswer {
  contentType: string;
  bytes: Uint8Array;
}

/** The input of a call: the shape without its data. */
export type Input<T extends Shape> = Omit<T, 'data'>;
