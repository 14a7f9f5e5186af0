/**
 * Every refusal of every multipart route reaches the client as the envelope, the way each client
 * sees it: Node's global fetch with FormData, undici's own request with FormData, the SDK and
 * Chromium's fetch. A refused upload is answered while the client may still be sending; an answer
 * followed by a reset used to arrive as a network error (EPIPE, "fetch failed", the SDK's "cannot
 * reach"). Small bodies are read whole before the answer; bodies beyond the stack's drain size are
 * answered at once and read on while the client still sends.
 */
import { request as undiciRequest, FormData as UndiciFormData } from 'undici';
import type { Browser, Page } from 'playwright-core';
import { Track } from '../../gen/vps/seat/v1/seat_pb';
import { createVpsClient, VpsApiError, type Endpoint } from '../../sdk';
import { ENDPOINTS } from '../../sdk/endpoints';
import { launchBrowser } from '../helpers/browser';
import { call } from '../helpers/http';
import { png } from '../helpers/images';
import { createBoundSeat, createTenant, startStack, uniqueAccount, type Stack, type Tenant } from '../helpers/stack';

const KIB = 1024;
const MIB = 1024 * KIB;
/** The stack's drain size: bodies up to it are read before the answer, larger ones answered at once. */
const DRAIN_BYTES = 1 * MIB;
/** Large enough that a refusal comes while most of it is still on its way. */
const LARGE_BYTES = 40 * MIB;

/** One multipart request: its route, its credentials, its parts in order, and the refusal it must get. */
interface Refusal {
  name: string;
  path: string;
  /** The API key, or none at all. */
  key: string | undefined;
  fields: Array<[string, string]>;
  fileBytes: number;
  /** The file part comes after the fields (false: before them). */
  fieldsFirst?: boolean;
  code: number;
  /** Brings the refusal about just before the request (a rate limit refills as the test runs). */
  arrange?: () => Promise<void>;
}

/** What a client made of the answer: the envelope's code, or the network error it reported instead. */
type Seen = { code: number } | { error: string };

type Client = (baseUrl: string, r: Refusal) => Promise<Seen>;

const files = new Map<number, Buffer>();
/** A PNG of that size, made once: making a large one takes long enough for a rate limit to refill. */
const file = (bytes: number): Buffer => {
  if (!files.has(bytes)) files.set(bytes, png(64, 64, bytes));
  return files.get(bytes)!;
};
const headersOf = (r: Refusal): Record<string, string> => (r.key === undefined ? {} : { authorization: `Bearer ${r.key}` });

function parts<F extends { append(name: string, value: unknown, fileName?: string): void }>(form: F, r: Refusal, blob: unknown): F {
  if (r.fieldsFirst === false) form.append('file', blob, 'clip.png');
  for (const [name, value] of r.fields) form.append(name, value);
  if (r.fieldsFirst !== false) form.append('file', blob, 'clip.png');
  return form;
}

const globalFetch: Client = async (baseUrl, r) => {
  try {
    const body = parts(new FormData(), r, new Blob([file(r.fileBytes)], { type: 'image/png' }));
    const res = await fetch(baseUrl + r.path, { method: 'POST', headers: headersOf(r), body });
    const j = (await res.json()) as { code: number; message: string };
    if (process.env.DEBUG_UPLOADS) console.log(r.name, j);
    return { code: j.code };
  } catch (err) {
    return { error: `${(err as Error).message} (${String((err as Error).cause)})` };
  }
};

const undici: Client = async (baseUrl, r) => {
  try {
    const body = parts(new UndiciFormData(), r, new Blob([file(r.fileBytes)], { type: 'image/png' }));
    const res = await undiciRequest(baseUrl + r.path, { method: 'POST', headers: headersOf(r), body });
    return { code: ((await res.body.json()) as { code: number }).code };
  } catch (err) {
    return { error: `${(err as Error).message} (${(err as NodeJS.ErrnoException).code ?? ''})` };
  }
};

const SDK_ENDPOINTS: Record<string, Endpoint> = {
  '/v1/videos': ENDPOINTS.videos.upload as Endpoint,
  '/v1/photos': ENDPOINTS.shop.photos as Endpoint,
  '/v1/vplat/v1.3/business/message/media/upload': ENDPOINTS.messages.uploadMedia as Endpoint,
};

const sdk: Client = async (baseUrl, r) => {
  const client = createVpsClient({ baseUrl, apiKey: r.key ?? '' });
  try {
    await client.call(
      SDK_ENDPOINTS[r.path]!,
      { fields: Object.fromEntries(r.fields), file: { bytes: file(r.fileBytes), name: 'clip.png', contentType: 'image/png' } } as never,
      { retry: false },
    );
    return { error: 'accepted' };
  } catch (err) {
    return err instanceof VpsApiError ? { code: err.code } : { error: (err as Error).message };
  }
};

function chromiumFetch(page: () => Page): Client {
  return (_baseUrl, r) =>
    page().evaluate(
      async ({ r, headers }) => {
        // The same bytes as the Node clients' files would be beside the point: only their size matters here.
        const blob = new Blob([new Uint8Array(r.fileBytes)], { type: 'image/png' });
        const form = new FormData();
        if (r.fieldsFirst === false) form.append('file', blob, 'clip.png');
        for (const [name, value] of r.fields) form.append(name, value);
        if (r.fieldsFirst !== false) form.append('file', blob, 'clip.png');
        try {
          const res = await fetch(r.path, { method: 'POST', headers, body: form });
          return { code: ((await res.json()) as { code: number }).code };
        } catch (err) {
          return { error: String(err) };
        }
      },
      { r: { path: r.path, fields: r.fields, fileBytes: r.fileBytes, fieldsFirst: r.fieldsFirst }, headers: headersOf(r) },
    );
}

describe('a refused multipart upload reaches every client as the envelope', () => {
  let stack: Stack;
  let browser: Browser;
  let page: Page;
  let refusals: Refusal[];

  beforeAll(async () => {
    [stack, browser] = await Promise.all([startStack({ uploadDrainBytes: DRAIN_BYTES, videos: { maxBytes: 2 * MIB } }), launchBrowser()]);
    const tenant = await createTenant(stack);
    const biz = uniqueAccount('biz');
    const creator = uniqueAccount('creator');
    await createBoundSeat(stack, tenant, Track.VIDEO, biz);
    await createBoundSeat(stack, tenant, Track.SHOP, creator);
    const withSeats = async (t: Tenant) => {
      const b = uniqueAccount('biz');
      const c = uniqueAccount('creator');
      await createBoundSeat(stack, t, Track.VIDEO, b);
      await createBoundSeat(stack, t, Track.SHOP, c);
      return { t, biz: b, creator: c };
    };
    const expired = await withSeats(await createTenant(stack, { planExpiresAt: new Date(Date.now() - 60_000) }));
    const disabled = await withSeats(await createTenant(stack));
    await stack.admin.setUserDisabled({ userId: disabled.t.userId, disabled: true });
    const spent = await withSeats(await createTenant(stack));
    const spend = async () => {
      for (let i = 0; i < 200; i++) {
        if ((await call(stack.baseUrl, 'GET', '/v1/seats', { key: spent.t.apiKey })).body.code === 2002) return;
      }
    };
    page = await browser.newPage();
    // Any page of the gateway's origin: Chromium's fetch then sends the form same-origin.
    await page.goto(`${stack.baseUrl}/healthz`);

    const routes = [
      { path: '/v1/vplat/v1.3/business/message/media/upload', field: 'account', of: (o: { biz: string }) => o.biz, nobody: 1007 },
      { path: '/v1/photos', field: 'accountId', of: (o: { creator: string }) => o.creator, nobody: 1007 },
      { path: '/v1/videos', field: 'seatId', of: undefined, nobody: 1005 },
    ];
    const videoSeat = async (t: Tenant) => {
      const seats = await call<{ items: Array<{ id: string; track: string }> }>(stack.baseUrl, 'GET', '/v1/seats', { key: t.apiKey });
      return seats.body.data.items.find((s) => s.track === 'video')?.id ?? 'seat_unknown';
    };
    const ownSeat = await videoSeat(tenant);
    // The spent tenant's own seat is not listed (its rate limit is spent): the account names it instead.
    refusals = [];
    for (const route of routes) {
      const target = (o: { t: Tenant; biz: string; creator: string }, seat?: string): Array<[string, string]> =>
        route.of ? [[route.field, route.of(o)]] : seat ? [['seatId', seat]] : [['account', o.biz]];
      const ours = { t: tenant, biz, creator };
      for (const fileBytes of [KIB, LARGE_BYTES]) {
        const size = fileBytes === KIB ? '1 KiB' : `${fileBytes / MIB} MiB`;
        const base = { path: route.path, fileBytes };
        refusals.push(
          { ...base, name: `${route.path} ${size} without a key`, key: undefined, fields: target(ours, ownSeat), code: 1001 },
          { ...base, name: `${route.path} ${size} with a wrong key`, key: 'vps_not_a_key_of_ours', fields: target(ours, ownSeat), code: 1001 },
          { ...base, name: `${route.path} ${size} of a disabled user`, key: disabled.t.apiKey, fields: target(disabled), code: 1002 },
          { ...base, name: `${route.path} ${size} with an expired plan`, key: expired.t.apiKey, fields: target(expired), code: 1003 },
          {
            ...base,
            name: `${route.path} ${size} with a spent rate limit`,
            key: spent.t.apiKey,
            fields: target(spent),
            code: 2002,
            arrange: spend,
          },
          {
            ...base,
            name: `${route.path} ${size} for nobody's target`,
            key: tenant.apiKey,
            fields: [[route.field, route.field === 'seatId' ? 'seat_nobody' : 'nobody-at-all']],
            code: route.nobody,
          },
          {
            ...base,
            name: `${route.path} ${size} with an unknown field`,
            key: tenant.apiKey,
            fields: [['colour', 'blue'], ...target(ours, ownSeat)],
            code: 2001,
          },
        );
      }
      // A file over the route's cap, refused part-way through the file.
      const cap = route.path === '/v1/photos' ? 10 * MIB : route.path === '/v1/videos' ? 2 * MIB : 3 * MIB;
      refusals.push({
        name: `${route.path} over its cap`,
        path: route.path,
        key: tenant.apiKey,
        fields: target(ours, ownSeat),
        fileBytes: cap + MIB,
        code: 2001,
      });
    }
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it.each([
    ['global fetch with FormData', () => globalFetch],
    ['undici with FormData', () => undici],
    ['the SDK', () => sdk],
    ["Chromium's fetch", () => chromiumFetch(() => page)],
  ])('%s sees each refusal’s envelope', async (_name, client) => {
    const seen: Record<string, Seen> = {};
    const expected: Record<string, Seen> = {};
    for (const r of refusals) {
      // The SDK always sends its key: it has no request without one.
      if (client() === sdk && r.key === undefined) continue;
      file(r.fileBytes);
      await r.arrange?.();
      seen[r.name] = await client()(stack.baseUrl, r);
      expected[r.name] = { code: r.code };
    }
    expect(seen).toEqual(expected);
  }, 180_000);
});
