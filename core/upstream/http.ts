/**
 * One HTTP exchange with an official API: connect and total timeouts, the official envelope read
 * back, and every failure turned into an UpstreamError with its class. The platform clients build
 * their paths and headers on top of this; nothing else in the service talks to the platforms.
 */
import { Agent, errors as undiciErrors, request, type Dispatcher, FormData } from 'undici';
import { isStreamedForm, type StreamedForm } from './streamed-form';
import { classifyOfficial, isRetryableClass, UpstreamError, type FailureClass, type UpstreamPlatform } from './failures';

export interface UpstreamTimeouts {
  /** Time allowed to open the TCP (and TLS) connection. */
  connectMs: number;
  /** Time allowed for the whole exchange, body included. */
  totalMs: number;
}

export interface OfficialRequest {
  platform: UpstreamPlatform;
  method: 'GET' | 'POST';
  /** Full URL without query. */
  url: string;
  /** Path as the platform names the endpoint, for errors and logs. */
  endpoint: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  /** JSON text (already serialised: the shop signature covers it byte for byte) or a multipart form. */
  body?: string | FormData | StreamedForm;
  /** Overrides the total timeout, e.g. for large uploads. */
  totalMs?: number;
}

interface Envelope {
  code?: unknown;
  message?: unknown;
  request_id?: unknown;
  data?: unknown;
}

/** A file streamed from the platform. */
export interface OfficialFile {
  contentType: string;
  contentLength: number | undefined;
  body: AsyncIterable<Buffer>;
}

const NETWORK_TIMEOUT_ERRORS = ['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'];

export class UpstreamHttp {
  private readonly agent: Agent;

  constructor(private readonly timeouts: UpstreamTimeouts) {
    this.agent = new Agent({
      connect: { timeout: timeouts.connectMs },
      headersTimeout: timeouts.totalMs,
      bodyTimeout: timeouts.totalMs,
      keepAliveTimeout: 10_000,
    });
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  /** Sends the request and returns the envelope's `data`; throws UpstreamError for any failure. */
  async call<T>(req: OfficialRequest): Promise<T> {
    const url = new URL(req.url);
    for (const [key, value] of Object.entries(req.query ?? {})) url.searchParams.set(key, value);
    const fail = failureOf(req);

    let response: Dispatcher.ResponseData;
    let text: string;
    try {
      const headers: Record<string, string> = { accept: 'application/json', ...req.headers };
      if (typeof req.body === 'string') headers['content-type'] = 'application/json';
      const streamed = isStreamedForm(req.body) ? req.body : undefined;
      if (streamed) {
        headers['content-type'] = streamed.contentType;
        if (streamed.contentLength !== undefined) headers['content-length'] = String(streamed.contentLength);
      }
      response = await request(url, {
        method: req.method,
        headers,
        body: streamed ? streamed.body : (req.body as string | FormData | undefined),
        dispatcher: this.agent,
        signal: AbortSignal.timeout(req.totalMs ?? this.timeouts.totalMs),
      });
      text = await response.body.text();
    } catch (err) {
      throw this.networkFailure(err, fail);
    }

    let envelope: Envelope | undefined;
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) envelope = parsed as Envelope;
    } catch {
      envelope = undefined;
    }
    const status = response.statusCode;
    const retryAfter = Number(response.headers['retry-after']);
    const requestId = typeof envelope?.request_id === 'string' ? envelope.request_id : undefined;
    if (!envelope || typeof envelope.code !== 'number') {
      // No envelope: a proxy error page, an outage, or a path that does not exist.
      const failureClass = classifyOfficial(req.platform, undefined, status >= 200 && status < 300 ? 502 : status);
      throw fail(failureClass, { httpStatus: status, officialMessage: `the official API answered HTTP ${status} without its envelope` });
    }
    if (envelope.code !== 0) {
      const failureClass = classifyOfficial(req.platform, envelope.code, status);
      throw fail(failureClass, {
        httpStatus: status,
        officialCode: envelope.code,
        officialMessage: typeof envelope.message === 'string' && envelope.message ? envelope.message : `official error ${envelope.code}`,
        ...(requestId ? { requestId } : {}),
        ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterSeconds: retryAfter } : {}),
      });
    }
    return (envelope.data ?? {}) as T;
  }

  /**
   * Fetches a file the platform serves outside its envelope (a media download address), as a
   * stream of at most `maxBytes`. A refusal is classified by its HTTP status, as an answer without
   * the envelope is in `call`.
   */
  async download(req: {
    platform: UpstreamPlatform;
    endpoint: string;
    url: string;
    headers: Record<string, string>;
    maxBytes: number;
    totalMs: number;
  }): Promise<OfficialFile> {
    const fail = failureOf(req);
    let response: Dispatcher.ResponseData;
    try {
      response = await request(req.url, {
        method: 'GET',
        headers: req.headers,
        dispatcher: this.agent,
        signal: AbortSignal.timeout(req.totalMs),
      });
    } catch (err) {
      throw this.networkFailure(err, fail);
    }
    const status = response.statusCode;
    const declared = Number(response.headers['content-length']);
    const tooLarge = () =>
      fail('bad_request', { httpStatus: status, officialMessage: `the file is larger than the ${req.maxBytes} bytes the service relays` });
    if (status !== 200 || declared > req.maxBytes) {
      response.body.destroy();
      if (status === 200) throw tooLarge();
      throw fail(classifyOfficial(req.platform, undefined, status), {
        httpStatus: status,
        officialMessage: `the download address answered HTTP ${status}`,
      });
    }
    const type = response.headers['content-type'];
    const networkFailure = (err: unknown) => this.networkFailure(err, fail);
    async function* bytes(): AsyncGenerator<Buffer> {
      let total = 0;
      try {
        for await (const chunk of response.body as AsyncIterable<Buffer>) {
          total += chunk.length;
          if (total > req.maxBytes) throw tooLarge();
          yield chunk;
        }
      } catch (err) {
        throw err instanceof UpstreamError ? err : networkFailure(err);
      } finally {
        response.body.destroy();
      }
    }
    return {
      contentType: typeof type === 'string' && type ? type : 'application/octet-stream',
      contentLength: Number.isSafeInteger(declared) && declared >= 0 ? declared : undefined,
      body: bytes(),
    };
  }

  private networkFailure(err: unknown, fail: (c: FailureClass, extra?: Partial<UpstreamError['failure']>) => UpstreamError): UpstreamError {
    const code = (err as { code?: string }).code;
    const name = (err as { name?: string }).name;
    if (
      name === 'TimeoutError' ||
      name === 'AbortError' ||
      (code && NETWORK_TIMEOUT_ERRORS.includes(code)) ||
      err instanceof undiciErrors.ConnectTimeoutError
    ) {
      return fail('timeout');
    }
    // Refused, reset, DNS: the platform could not be reached; the same call may work later.
    return fail('transient', { officialMessage: `the official API could not be reached (${code ?? name ?? 'network error'})` });
  }
}

export { FormData };

/** Makes the failures of one official call: its platform and endpoint, a class, and what else is known. */
function failureOf(req: { platform: UpstreamError['failure']['platform']; endpoint: string }) {
  return (failureClass: FailureClass, extra: Partial<UpstreamError['failure']> = {}) =>
    new UpstreamError({
      platform: req.platform,
      endpoint: req.endpoint,
      failureClass,
      retryable: isRetryableClass(failureClass),
      ...extra,
    });
}
