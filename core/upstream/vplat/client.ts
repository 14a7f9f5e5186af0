/**
 * The Business API v1.3 transport: paths under `/open_api/v1.3/` with their trailing slash, the
 * `Access-Token` header, and GET parameters that are arrays or objects sent as one JSON-encoded
 * value. The typed endpoint functions beside this file build on it.
 */
import type { FormData, UpstreamHttp } from '../http';

export interface VplatSettings {
  /** Origin of the Business API, e.g. the sandbox emulator's; paths are appended to it. */
  baseUrl: string;
  appId: string;
  appSecret: string;
  /** The account holder's consent page; the platform's own when not set (the emulator serves one too). */
  authorizeUrl?: string;
}

export type QueryValue = string | number | boolean | readonly unknown[] | Record<string, unknown> | undefined;

export function encodeQuery(query: Record<string, QueryValue>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    out[key] = typeof value === 'object' ? JSON.stringify(value) : String(value);
  }
  return out;
}

export class VplatClient {
  constructor(
    readonly http: UpstreamHttp,
    readonly settings: VplatSettings,
  ) {}

  private url(endpoint: string): string {
    return `${this.settings.baseUrl}/open_api/v1.3/${endpoint}`;
  }

  /** An endpoint that takes the account's access token. `endpoint` is relative, e.g. `business/video/publish/`. */
  get<T>(endpoint: string, accessToken: string, query: Record<string, QueryValue>): Promise<T> {
    return this.http.call<T>({
      platform: 'vplat',
      method: 'GET',
      url: this.url(endpoint),
      endpoint,
      query: encodeQuery(query),
      headers: { 'access-token': accessToken },
    });
  }

  post<T>(endpoint: string, accessToken: string, body: object): Promise<T> {
    return this.http.call<T>({
      platform: 'vplat',
      method: 'POST',
      url: this.url(endpoint),
      endpoint,
      body: JSON.stringify(body),
      headers: { 'access-token': accessToken },
    });
  }

  upload<T>(endpoint: string, accessToken: string, form: FormData): Promise<T> {
    return this.http.call<T>({
      platform: 'vplat',
      method: 'POST',
      url: this.url(endpoint),
      endpoint,
      body: form,
      headers: { 'access-token': accessToken },
    });
  }

  /** Endpoints that authenticate the app by credentials in the body or query (OAuth, webhook configuration). */
  appGet<T>(endpoint: string, query: Record<string, QueryValue>): Promise<T> {
    return this.http.call<T>({ platform: 'vplat', method: 'GET', url: this.url(endpoint), endpoint, query: encodeQuery(query) });
  }

  appPost<T>(endpoint: string, body: object): Promise<T> {
    return this.http.call<T>({ platform: 'vplat', method: 'POST', url: this.url(endpoint), endpoint, body: JSON.stringify(body) });
  }
}
