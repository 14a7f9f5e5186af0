/** The service's client of the official APIs: one shared HTTP agent, one client per platform. */
import { UpstreamHttp } from './http';
import type { UpstreamSettings } from './settings';
import { ShopClient } from './shop/client';
import { VplatClient } from './vplat/client';

export interface Upstream {
  vplat: VplatClient;
  shop: ShopClient;
  close(): Promise<void>;
}

export function createUpstream(settings: UpstreamSettings): Upstream {
  const http = new UpstreamHttp(settings.timeouts);
  return { vplat: new VplatClient(http, settings.vplat), shop: new ShopClient(http, settings.shop), close: () => http.close() };
}

export { UpstreamError, type FailureClass } from './failures';
