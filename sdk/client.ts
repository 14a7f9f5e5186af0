/**
 * The typed client: every /v1 route of the ENDPOINTS table becomes a method (client.videos.list,
 * client.publish.video, …) that returns the envelope's data or throws VpsApiError or
 * VpsNetworkError, and retries by the spec's policy on its own (see retry-policy.ts). Every write
 * carries one Idempotency-Key across its retries, so a retry after a lost answer is answered with
 * the first response instead of being done twice.
 */
import { randomUUID } from 'node:crypto';
import { ENDPOINTS } from './endpoints';
import type { Endpoint, Input, Shape } from './endpoint';
import { isEnvelope, parseRetryAfter, VpsApiError, VpsNetworkError } from './errors';
import { multipartBody } from './multipart';
import { decideRetry, DEFAULT_RETRY_POLICY, type RetryCounts, type RetryPolicy } from './retry-policy';

export interface ClientConfig {
  /** The service's address, e.g. http://127.0.0.1:8080 (no /v1). */
  baseUrl: string;
  /** The bare API key; the client adds `Bearer`. */
  apiKey: string;
  retry?: Partial<RetryPolicy>;
  /** Per attempt, for every call but uploads (default 60 s). */
  timeoutMs?: number;
  userAgent?: string;
  /** Told before each retry's wait: for logs and progress displays. */
  onRetry?: (info: RetryInfo) => void;
}

export interface RetryInfo {
  method: string;
  path: string;
  error: VpsApiError | VpsNetworkError;
  kind: keyof RetryCounts;
  /** 1 for the first retry. */
  retry: number;
  delayMs: number;
}

export interface CallOptions {
  /** Sent on writes; generated per call when absent, and kept across the call's retries. */
  idempotencyKey?: string;
  signal?: AbortSignal;
  /** Uploads: bytes of the file sent so far, and its size when known. */
  onProgress?: (sentBytes: number, totalBytes: number | undefined) => void;
  /** false: one attempt only. */
  retry?: false | Partial<RetryPolicy>;
}

/** The input may be left out when nothing in it is required (client.seats.list(), client.videos.list()). */
type Call<T extends Shape> =
  {} extends Input<T>
    ? (input?: Input<T>, options?: CallOptions) => Promise<T['data']>
    : (input: Input<T>, options?: CallOptions) => Promise<T['data']>;

/** The methods the client has: one per endpoint of the table, grouped as the table groups them. */
export type Api<Tree> = { [K in keyof Tree]: Tree[K] extends Endpoint<infer S> ? Call<S> : Api<Tree[K]> };

export type VpsClient = Api<typeof ENDPOINTS> & {
  /** Any endpoint of the table, by value: for tools that pick endpoints at run time. */
  call<T extends Shape>(endpoint: Endpoint<T>, input: Input<T>, options?: CallOptions): Promise<T['data']>;
  readonly config: Readonly<Required<Pick<ClientConfig, 'baseUrl' | 'apiKey'>>>;
};

const WRITE_METHODS = new Set(['POST', 'DELETE']);
/** Shop publish statuses that give the file id back (activities/publish.activities.ts). */
const FILE_FREEING_STATUSES = new Set(['publish_failed', 'service_error']);
const DEFAULT_TIMEOUT_MS = 60_000;

function isEndpoint(value: unknown): value is Endpoint {
  return (
    !!value && typeof value === 'object' && typeof (value as Endpoint).method === 'string' && typeof (value as Endpoint).path === 'string'
  );
}

export function createVpsClient(config: ClientConfig): VpsClient {
  const baseUrl = config.baseUrl.replace(/\/+$/, '');
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...config.retry };

  async function call<T extends Shape>(ep: Endpoint<T>, input: Input<T>, options: CallOptions = {}): Promise<T['data']> {
    const idempotencyKey = options.idempotencyKey ?? (WRITE_METHODS.has(ep.method) ? randomUUID() : undefined);
    const retryPolicy =
      options.retry === false ? { ...policy, maxRateLimitRetries: 0, maxTransientRetries: 0 } : { ...policy, ...options.retry };
    const counts: RetryCounts = { rateLimited: 0, transient: 0 };
    for (;;) {
      let replayable = true;
      try {
        return await attempt(ep, input as Input<Shape>, options, idempotencyKey, (r) => (replayable = r));
      } catch (err) {
        if (!(err instanceof VpsApiError || err instanceof VpsNetworkError) || options.signal?.aborted || !replayable) throw err;
        const decision = decideRetry(err, counts, retryPolicy);
        if (!decision.retry) throw err;
        counts[decision.kind]++;
        config.onRetry?.({
          method: ep.method,
          path: ep.path,
          error: err,
          kind: decision.kind,
          retry: counts.rateLimited + counts.transient,
          delayMs: decision.delayMs,
        });
        await sleep(decision.delayMs, options.signal);
        // A 2002 is refused before any work is done; only a failure after the request may have
        // arrived (a lost answer, a timeout, an upstream failure) can have left an earlier attempt.
        if (ep.checkEarlierAttempt && decision.kind === 'transient') {
          const earlier = await earlierShopAttempt(input as Input<Shape>, options.signal);
          if (earlier) return earlier as T['data'];
        }
      }
    }
  }

  /**
   * The record of an earlier attempt with the same shop file id, if one reached the service. A
   * record that ended with the file id freed (refused outright, or never sent) may be an older
   * call's: then the retry itself is sent, and its Idempotency-Key answers it with this call's
   * first attempt if that one did arrive.
   */
  async function earlierShopAttempt(input: Input<Shape>, signal: AbortSignal | undefined): Promise<unknown> {
    const fileId = (input.body as { fileId?: unknown } | undefined)?.fileId;
    if (typeof fileId !== 'string') return undefined;
    const page = await call(ENDPOINTS.publish.records, { query: { fileId, limit: 1 } }, { signal });
    const record = page.items[0];
    return record && !FILE_FREEING_STATUSES.has(record.status) ? { ...record, earlierAttempt: true } : undefined;
  }

  async function attempt(
    ep: Endpoint,
    input: Input<Shape>,
    options: CallOptions,
    idempotencyKey: string | undefined,
    setReplayable: (r: boolean) => void,
  ): Promise<unknown> {
    const url = new URL(baseUrl + fillPath(ep.path, input.params));
    for (const [name, value] of Object.entries(input.query ?? {})) {
      if (value === undefined || value === null) continue;
      for (const v of Array.isArray(value) ? value : [value]) url.searchParams.append(name, String(v));
    }
    const headers: Record<string, string> = { authorization: `Bearer ${config.apiKey}`, accept: 'application/json' };
    if (config.userAgent) headers['user-agent'] = config.userAgent;
    if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
    let body: string | AsyncIterable<Uint8Array> | undefined;
    if (ep.upload) {
      if (!input.file) throw new TypeError(`${ep.method} ${ep.path}: a file is required`);
      const multipart = multipartBody(input.fields ?? {}, input.file, options.onProgress);
      setReplayable(multipart.replayable);
      headers['content-type'] = multipart.contentType;
      body = multipart.body;
    } else if (input.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(input.body);
    }
    const signals = [options.signal, ep.upload ? undefined : AbortSignal.timeout(config.timeoutMs ?? DEFAULT_TIMEOUT_MS)].filter(
      (s): s is AbortSignal => s !== undefined,
    );
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, {
        method: ep.method,
        headers,
        body: body as RequestInit['body'],
        signal: signals.length ? AbortSignal.any(signals) : undefined,
        duplex: 'half',
      } as RequestInit);
      const type = res.headers.get('content-type') ?? '';
      if (ep.answersFile && res.ok && !type.startsWith('application/json'))
        return { contentType: type, bytes: new Uint8Array(await res.arrayBuffer()) };
      text = await res.text();
    } catch (err) {
      if (options.signal?.aborted) throw err;
      const cause = err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
      throw new VpsNetworkError(`cannot reach ${baseUrl}: ${cause}`, { cause: err });
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (!isEnvelope(parsed)) throw new VpsNetworkError(`${ep.method} ${url.pathname}: HTTP ${res.status} without the service's envelope`);
    if (parsed.code === 0) return parsed.data;
    const data = parsed.data && typeof parsed.data === 'object' ? (parsed.data as Record<string, unknown>) : {};
    throw new VpsApiError(
      parsed.code,
      parsed.message,
      res.status,
      data,
      parseRetryAfter(res.headers.get('retry-after')),
      res.headers.get('x-request-id') ?? undefined,
    );
  }

  const build = (tree: Record<string, unknown>): Record<string, unknown> =>
    Object.fromEntries(
      Object.entries(tree).map(([name, value]) => [
        name,
        isEndpoint(value)
          ? (input: Input<Shape>, options?: CallOptions) => call(value, input ?? {}, options)
          : build(value as Record<string, unknown>),
      ]),
    );
  return { ...(build(ENDPOINTS) as Api<typeof ENDPOINTS>), call, config: { baseUrl, apiKey: config.apiKey } };
}

/** `/v1/videos/:id` with params.id, each segment encoded; a missing param is a programming error. */
export function fillPath(template: string, params: Record<string, string> | undefined): string {
  return template.replace(/:([A-Za-z]+)/g, (_, name: string) => {
    const value = params?.[name];
    if (value === undefined || value === '') throw new TypeError(`${template}: the path parameter ${name} is required`);
    return encodeURIComponent(value);
  });
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
