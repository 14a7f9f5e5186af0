/**
 * The shop platform transport: creator endpoints under `/affiliate_creator/<version>/`, the
 * `x-tts-access-token` header, and the common query (`app_key`, `timestamp`, `sign`) signed per
 * request. Token endpoints live on a separate auth origin and take app credentials instead.
 */
import type { FormData, UpstreamHttp } from '../http';
import type { StreamedForm } from '../streamed-form';
import { signShopRequest } from './signing';

export interface ShopSettings {
  /** Origin of the shop Open API (creator endpoints). */
  baseUrl: string;
  /** Origin of the shop token service (token get and refresh). */
  authBaseUrl: string;
  appKey: string;
  appSecret: string;
  /** The creator's consent page; the platform's own when not set (the emulator serves one too). */
  authorizeUrl?: string;
}

export class ShopClient {
  constructor(
    readonly http: UpstreamHttp,
    readonly settings: ShopSettings,
    private readonly nowSeconds: () => number = () => Math.floor(Date.now() / 1000),
  ) {}

  private signedQuery(path: string, extra: Record<string, string>, body: string | undefined): Record<string, string> {
    const query: Record<string, string> = { ...extra, app_key: this.settings.appKey, timestamp: String(this.nowSeconds()) };
    return { ...query, sign: signShopRequest(this.settings.appSecret, path, query, body) };
  }

  get<T>(path: string, accessToken: string, query: Record<string, string | undefined> = {}): Promise<T> {
    const defined = Object.fromEntries(Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined));
    return this.http.call<T>({
      platform: 'shop',
      method: 'GET',
      url: this.settings.baseUrl + path,
      endpoint: path,
      query: this.signedQuery(path, defined, undefined),
      headers: { 'x-tts-access-token': accessToken },
    });
  }

  post<T>(path: string, accessToken: string, body: object): Promise<T> {
    const text = JSON.stringify(body);
    return this.http.call<T>({
      platform: 'shop',
      method: 'POST',
      url: this.settings.baseUrl + path,
      endpoint: path,
      query: this.signedQuery(path, {}, text),
      headers: { 'x-tts-access-token': accessToken },
      body: text,
    });
  }

  /** Multipart uploads: the body is not part of the signature. */
  upload<T>(path: string, accessToken: string, form: FormData | StreamedForm, totalMs?: number): Promise<T> {
    return this.http.call<T>({
      platform: 'shop',
      method: 'POST',
      url: this.settings.baseUrl + path,
      endpoint: path,
      query: this.signedQuery(path, {}, undefined),
      headers: { 'x-tts-access-token': accessToken },
      body: form,
      ...(totalMs ? { totalMs } : {}),
    });
  }

  /** Token service calls: app credentials in the query, no signature. */
  auth<T>(path: string, query: Record<string, string>): Promise<T> {
    return this.http.call<T>({ platform: 'shop', method: 'GET', url: this.settings.authBaseUrl + path, endpoint: path, query });
  }
}
