/**
 * Every refusal of every multipart route reaches the client as the envelope, the way each client
 * sees it: Node's global fetch with FormData, undici's own request with FormData, the SDK and
 * Chromium's fetch. A refusal comes while the client may still be sending; an answer followed by a
 * reset can arrive as a network error instead (EPIPE, "fetch failed", the SDK's "cannot reach").
 * Bodies up to the stack's drain size are read whole before the answer; larger ones are answered
 * at once and read on while the client still sends.
 */
import type { Browser, Page } from 'playwright-core';
import { FormData as UndiciFormData, request as undiciRequest } from 'undici';
import { Track } from '../../gen/vps/seat/v1/seat_pb';
import { createVpsClient, VpsApiError, type Endpoint } from '../../sdk';
import { ENDPOINTS } from '../../sdk/endpoints';
import { launchBrowser } from '../helpers/browser';
import { call } from '../helpers/http';
import { png } from '../helpers/images';
import { createBoundSeat, createTenant, startStack, uniqueAccount, type Stack } from '../helpers/stack';

const KIB = 1024;
const MIB = 1024 * KIB;
/** The stack's drain size: bodies up to it are read before the answer, larger ones answered at once. */
const DRAIN_BYTES = MIB;
/** Large enough that a refusal comes while most of the body is still on its way. */
const LARGE_BYTES = 40 * MIB;
/** The stack's video cap, so a file over it stays small. */
const VIDEO_MAX_BYTES = 2 * MIB;

const MEDIA = '/v1/vplat/v1.3/business/message/media/upload';

/** One multipart request: its route, its credentials, its parts in order, and the refusal it must get. */
interface Refusal {
  path: string;
  /** The API key, or none at all. */
  key: string | undefined;
  fields: Array<[string, string]>;
  fileBytes: number;
  code: number;
}

/** What a client made of the answer: the envelope's code, or the network error it reported instead. */
type Seen = { code: number } | { error: string };

type Client = (baseUrl: string, r: Refusal) => Promise<Seen>;

const files = new Map<number, Buffer>();
/** A PNG of that size, made once (a large one takes a while to make). */
const file = (bytes: number): Buffer => {
  if (!files.has(bytes)) files.set(bytes, png(64, 64, bytes));
  return files.get(bytes)!;
};
const headersOf = (r: Refusal): Record<string, string> => (r.key === undefined ? {} : { authorization: `Bearer ${r.key}` });

function form<F extends { append(name: string, value: string | Blob, fileName?: string): void }>(into: F, r: Refusal): F {
  for (const [name, value] of r.fields) into.append(name, value);
  into.append('file', new Blob([file(r.fileBytes)], { type: 'image/png' }), 'clip.png');
  return into;
}

const globalFetch: Client = async (baseUrl, r) => {
  try {
    const res = await fetch(baseUrl + r.path, { method: 'POST', headers: headersOf(r), body: form(new FormData(), r) });
    return { code: ((await res.json()) as { code: number }).code };
  } catch (err) {
    return { error: `${(err as Error).message} (${String((err as Error).cause)})` };
  }
};

const undici: Client = async (baseUrl, r) => {
  try {
    const res = await undiciRequest(baseUrl + r.path, { method: 'POST', headers: headersOf(r), body: form(new UndiciFormData(), r) });
    return { code: ((await res.body.json()) as { code: number }).code };
  } catch (err) {
    return { error: `${(err as Error).message} (${(err as NodeJS.ErrnoException).code ?? ''})` };
  }
};

const SDK_ENDPOINTS: Record<string, Endpoint> = {
  '/v1/videos': ENDPOINTS.videos.upload as Endpoint,
  '/v1/photos': ENDPOINTS.shop.photos as Endpoint,
  [MEDIA]: ENDPOINTS.messages.uploadMedia as Endpoint,
};

const sdk: Client = async (baseUrl, r) => {
  const client = createVpsClient({ baseUrl, apiKey: r.key ?? '' });
  try {
    const input = { fields: Object.fromEntries(r.fields), file: { bytes: file(r.fileBytes), name: 'clip.png', contentType: 'image/png' } };
    await client.call(SDK_ENDPOINTS[r.path]!, input as never, { retry: false });
    return { error: 'accepted' };
  } catch (err) {
    return err instanceof VpsApiError ? { code: err.code } : { error: (err as Error).message };
  }
};

function chromium(page: () => Page): Client {
  return (_baseUrl, r) =>
    page().evaluate(
      async ({ path, fields, fileBytes, headers }) => {
        const body = new FormData();
        for (const [name, value] of fields) body.append(name, value);
        // Only the size matters here: the answer comes before the bytes are looked at.
        body.append('file', new Blob([new Uint8Array(fileBytes)], { type: 'image/png' }), 'clip.png');
        try {
          const res = await fetch(path, { method: 'POST', headers, body });
          return { code: ((await res.json()) as { code: number }).code };
        } catch (err) {
          return { error: String(err) };
        }
      },
      { path: r.path, fields: r.fields, fileBytes: r.fileBytes, headers: headersOf(r) },
    );
}

describe('a refused multipart upload reaches every client as the envelope', () => {
  let stack: Stack;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    // One request a minute: a tenant spent once stays spent for the test, and every other case
    // has a fresh tenant, which draws at most its first request.
    [stack, browser] = await Promise.all([
      startStack({ ratePerMinute: 1, uploadDrainBytes: DRAIN_BYTES, videos: { maxBytes: VIDEO_MAX_BYTES } }),
      launchBrowser(),
    ]);
    page = await browser.newPage();
    // A page of the gateway's origin: Chromium's fetch then sends the form same-origin.
    await page.goto(`${stack.baseUrl}/healthz`);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  /** A fresh tenant with a bound seat on each track, and the fields that name its target on a route. */
  async function tenantWithSeats(opts: { planExpiresAt?: Date } = {}) {
    const tenant = await createTenant(stack, opts);
    const biz = uniqueAccount('biz');
    const creator = uniqueAccount('creator');
    const videoSeat = await createBoundSeat(stack, tenant, Track.VIDEO, biz);
    await createBoundSeat(stack, tenant, Track.SHOP, creator);
    const target = (path: string): Array<[string, string]> =>
      path === MEDIA ? [['account', biz]] : path === '/v1/photos' ? [['accountId', creator]] : [['seatId', videoSeat.id]];
    return { tenant, target };
  }

  const ROUTES = [
    { path: MEDIA, nobody: ['account', 'biz-nobody'] as [string, string], unbound: 1007, cap: 3 * MIB },
    { path: '/v1/photos', nobody: ['accountId', 'creator-nobody'] as [string, string], unbound: 1007, cap: 10 * MIB },
    { path: '/v1/videos', nobody: ['seatId', 'seat_nobody'] as [string, string], unbound: 1005, cap: VIDEO_MAX_BYTES },
  ];
  /** Each refusal, made afresh for each client (a case may spend its tenant's only request). */
  const cases: Array<{ name: string; sdk: boolean; make(): Promise<Refusal> }> = ROUTES.flatMap((route) => [
    ...[KIB, LARGE_BYTES].flatMap((fileBytes) => {
      const name = (what: string) => `${route.path}, ${fileBytes === KIB ? '1 KiB' : '40 MiB'}, ${what}`;
      const base = { path: route.path, fileBytes };
      return [
        {
          name: name('without a key'),
          // The SDK always sends its key.
          sdk: false,
          make: async () => ({ ...base, key: undefined, fields: (await tenantWithSeats()).target(route.path), code: 1001 }),
        },
        {
          name: name('with a wrong key'),
          sdk: true,
          make: async () => ({ ...base, key: 'vps_not_a_key_of_ours', fields: (await tenantWithSeats()).target(route.path), code: 1001 }),
        },
        {
          name: name('of a disabled user'),
          sdk: true,
          make: async () => {
            const { tenant, target } = await tenantWithSeats();
            await stack.admin.setUserDisabled({ userId: tenant.userId, disabled: true });
            return { ...base, key: tenant.apiKey, fields: target(route.path), code: 1002 };
          },
        },
        {
          name: name('with an expired plan'),
          sdk: true,
          make: async () => {
            const { tenant, target } = await tenantWithSeats({ planExpiresAt: new Date(Date.now() - 60_000) });
            return { ...base, key: tenant.apiKey, fields: target(route.path), code: 1003 };
          },
        },
        {
          name: name('with its rate limit spent'),
          sdk: true,
          make: async () => {
            const { tenant, target } = await tenantWithSeats();
            expect((await call(stack.baseUrl, 'GET', '/v1/seats', { key: tenant.apiKey })).body.code).toBe(0);
            return { ...base, key: tenant.apiKey, fields: target(route.path), code: 2002 };
          },
        },
        {
          name: name("naming nobody's target"),
          sdk: true,
          make: async () => ({ ...base, key: (await tenantWithSeats()).tenant.apiKey, fields: [route.nobody], code: route.unbound }),
        },
        {
          name: name('with an unknown field'),
          sdk: true,
          make: async () => {
            const { tenant, target } = await tenantWithSeats();
            return { ...base, key: tenant.apiKey, fields: [['colour', 'blue'] as [string, string], ...target(route.path)], code: 2001 };
          },
        },
      ];
    }),
    {
      name: `${route.path}, a file over its cap`,
      sdk: true,
      make: async () => {
        const { tenant, target } = await tenantWithSeats();
        return { path: route.path, fileBytes: route.cap + MIB, key: tenant.apiKey, fields: target(route.path), code: 2001 };
      },
    },
  ]);

  it.each([
    ['global fetch with FormData', globalFetch, false],
    ['undici with FormData', undici, false],
    ['the SDK', sdk, true],
    ["Chromium's fetch", chromium(() => page), false],
  ] as const)(
    '%s sees each refusal’s envelope',
    async (_name, client, isSdk) => {
      const seen: Record<string, Seen> = {};
      const expected: Record<string, Seen> = {};
      for (const c of cases) {
        if (isSdk && !c.sdk) continue;
        const refusal = await c.make();
        file(refusal.fileBytes);
        seen[c.name] = await client(stack.baseUrl, refusal);
        expected[c.name] = { code: refusal.code };
      }
      expect(seen).toEqual(expected);
    },
    300_000,
  );
});
