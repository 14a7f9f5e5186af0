/** How the S3 store reads the SDK's failures: absent objects, and the store's own trouble as a retryable condition. */
import { MediaStoreUnavailableError } from './storage';

export function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.name === 'NoSuchUpload' || e?.$metadata?.httpStatusCode === 404;
}

export function describe(err: unknown): string {
  const e = err as { name?: string; message?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  const status = e?.$metadata?.httpStatusCode;
  if (status === 404) return 'the bucket does not exist';
  if (status === 403) return 'access denied (check MEDIA_S3_ACCESS_KEY_ID and MEDIA_S3_SECRET_ACCESS_KEY)';
  const detail = e?.message && e.message !== 'UnknownError' ? e.message : (e?.code ?? e?.name ?? String(err));
  return status ? `HTTP ${status}: ${detail}` : detail;
}

export function unavailable(action: string, err: unknown): MediaStoreUnavailableError {
  return new MediaStoreUnavailableError(`media store unavailable (${action}): ${describe(err)}`, { cause: err });
}
