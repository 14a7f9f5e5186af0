/**
 * The typed SDK against the real stack and the emulator, over real HTTP: typed calls return the
 * envelope's data, failures arrive as VpsApiError with the service's code, and the spec's retry
 * policy holds against real failures — upstream faults injected into the emulator, the service's
 * own rate limit, and a shop publish whose answer is lost on the way back.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createVpsClient, VpsApiError, VpsNetworkError, type RetryInfo } from '../../sdk';
import { call, type Envelope } from '../helpers/http';
import { eventually } from '../helpers/receivers';
import { createTenant, type Tenant } from '../helpers/stack';
import { mp4Bytes } from '../helpers/videos';
import { bindSandboxSeat, startWorkingStack, type SandboxAccount, type WorkingStack } from '../helpers/working-stack';

const VIDEO_SETTINGS = '/open_api/v1.3/business/video/settings/';
const SHOP_POSTS = '/affiliate_creator/202607/videos';
/** The service's limit in these tests: a bucket of 60, one token back a second, so Retry-After is 1 s. */
const RATE_PER_MINUTE = 60;

/**
 * A loopback proxy in front of the gateway. For each request, `decide` says whether it is
 * forwarded and answered, or forwarded and its answer lost: the gateway does the work, and the
 * client's connection is cut instead of answered, as a network failure after the fact would.
 */
interface LossyProxy {
  url: string;
  /** Every request seen, as "METHOD /path" with its Idempotency-Key. */
  seen: Array<{ route: string; idempotencyKey: string | undefined }>;
  /** The proxy's own failures: checked after each test, so one is never taken for the client's. */
  failures: unknown[];
  close(): Promise<void>;
}

/** What the proxy does with a request: forward it and pass the answer on, forward it and cut the connection, or answer with another exchange's answer. */
type ProxyAction = 'answer' | 'lose-answer' | { instead: Envelope };

async function startProxy(target: string, decide: (route: string) => Promise<ProxyAction>): Promise<LossyProxy> {
  const seen: LossyProxy['seen'] = [];
  const failures: unknown[] = [];
  const server = http.createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const route = `${req.method} ${(req.url ?? '').split('?')[0]}`;
      const idempotencyKey = req.headers['idempotency-key'] as string | undefined;
      seen.push({ route, idempotencyKey });
      const action = await decide(route);
      if (typeof action === 'object') {
        const retryAfter = action.instead.headers.get('retry-after');
        res
          .writeHead(action.instead.status, { 'content-type': 'application/json', ...(retryAfter ? { 'retry-after': retryAfter } : {}) })
          .end(JSON.stringify(action.instead.body));
        return;
      }
      const headers = Object.fromEntries(
        ['authorization', 'content-type', 'accept', 'idempotency-key', 'user-agent'].flatMap((name) =>
          typeof req.headers[name] === 'string' ? [[name, req.headers[name]]] : [],
        ),
      ) as Record<string, string>;
      const answer = await fetch(`${target}${req.url}`, {
        method: req.method,
        headers,
        body: chunks.length ? Buffer.concat(chunks) : undefined,
      });
      const body = Buffer.from(await answer.arrayBuffer());
      if (action === 'lose-answer') {
        req.socket.destroy();
        return;
      }
      const forwarded: Record<string, string> = {};
      for (const name of ['content-type', 'retry-after', 'x-request-id']) {
        const value = answer.headers.get(name);
        if (value !== null) forwarded[name] = value;
      }
      res.writeHead(answer.status, forwarded).end(body);
    })().catch((err: unknown) => {
      failures.push(err);
      res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    failures,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe('the typed SDK against the service', () => {
  let env: WorkingStack;
  const proxies: LossyProxy[] = [];

  beforeAll(async () => {
    env = await startWorkingStack('sdk', { stack: { ratePerMinute: RATE_PER_MINUTE }, sandbox: { publishProcessingMs: 300 } });
  }, 120_000);
  afterEach(async () => {
    await env.sb.control('DELETE', '/_sandbox/faults');
    const used = proxies.splice(0);
    await Promise.all(used.map((p) => p.close()));
    expect(used.flatMap((p) => p.failures)).toEqual([]);
  });
  afterAll(() => env?.close());

  /** A client of the tenant, with every retry told to `retries`; backoff in milliseconds, not seconds. */
  function clientFor(tenant: Tenant, retries: RetryInfo[] = [], baseUrl = env.stack.baseUrl) {
    return createVpsClient({
      baseUrl,
      apiKey: tenant.apiKey,
      retry: { baseDelayMs: 20, maxDelayMs: 100 },
      onRetry: (info) => retries.push(info),
    });
  }
  const failureOf = (promise: Promise<unknown>): Promise<unknown> =>
    promise.then(
      (value) => {
        throw new Error(`expected a failure, got ${JSON.stringify(value)}`);
      },
      (err: unknown) => err,
    );
  const faultsLeft = async () =>
    (await env.sb.control<{ faults: Array<{ remaining: number }> }>('GET', '/_sandbox/faults')).faults.map((f) => f.remaining);

  describe('with a bound video track seat', () => {
    let tenant: Tenant;
    let account: SandboxAccount;
    let seatId: string;

    beforeAll(async () => {
      tenant = await createTenant(env.stack);
      ({ account, seatId } = await bindSandboxSeat(env, tenant, 'business'));
    });

    it("returns the envelope's data from typed calls", async () => {
      const client = clientFor(tenant);
      const seats = await client.seats.list();
      expect(seats.items.map((s) => s.id)).toContain(seatId);
      const settings = await client.insights.videoSettings({ query: { account: account.username } });
      expect(settings).toHaveProperty('privacyLevelOptions');
      const page = await client.videos.list({ query: { limit: 5 } });
      expect(page).toEqual({ items: [], nextCursor: null });
    });

    it('throws 1005 as VpsApiError with its code, message and HTTP 404, and does not retry it', async () => {
      const retries: RetryInfo[] = [];
      const err = await failureOf(clientFor(tenant, retries).videos.get({ params: { id: 'vid_doesnotexist' } }));
      expect(err).toBeInstanceOf(VpsApiError);
      expect(err).toMatchObject({ code: 1005, httpStatus: 404, message: expect.stringMatching(/\S/), requestId: expect.any(String) });
      expect(retries).toEqual([]);
    });

    it('retries a transient upstream failure and returns the answer that follows', async () => {
      await env.sb.control('POST', '/_sandbox/faults', {
        kind: 'server_error',
        count: 2,
        platform: 'business',
        pathPrefix: VIDEO_SETTINGS,
      });
      const retries: RetryInfo[] = [];
      const settings = await clientFor(tenant, retries).insights.videoSettings({ query: { account: account.username } });
      expect(settings).toHaveProperty('privacyLevelOptions');
      expect(retries.map((r) => [r.kind, r.retry, (r.error as VpsApiError).code, (r.error as VpsApiError).data.retryable])).toEqual([
        ['transient', 1, 3001, true],
        ['transient', 2, 3001, true],
      ]);
      expect(await faultsLeft()).toEqual([]);
    });

    it('retries a transient upstream failure at most 3 times, then throws it', async () => {
      await env.sb.control('POST', '/_sandbox/faults', {
        kind: 'server_error',
        count: 10,
        platform: 'business',
        pathPrefix: VIDEO_SETTINGS,
      });
      const retries: RetryInfo[] = [];
      const err = await failureOf(clientFor(tenant, retries).insights.videoSettings({ query: { account: account.username } }));
      expect(err).toMatchObject({ code: 3001, httpStatus: 502, data: { retryable: true, officialCode: 50000 } });
      expect(retries).toHaveLength(3);
      // Four calls reached the platform: the first and three retries.
      expect(await faultsLeft()).toEqual([6]);
    });

    it('retries 3002, the platform not answering in time', async () => {
      // Longer than the upstream client's 2 s budget; the next call is answered at once.
      await env.sb.control('POST', '/_sandbox/faults', {
        kind: 'hang',
        count: 1,
        hangMs: 2_500,
        platform: 'business',
        pathPrefix: VIDEO_SETTINGS,
      });
      const retries: RetryInfo[] = [];
      const settings = await clientFor(tenant, retries).insights.videoSettings({ query: { account: account.username } });
      expect(settings).toHaveProperty('privacyLevelOptions');
      expect(retries.map((r) => [r.kind, (r.error as VpsApiError).code, (r.error as VpsApiError).httpStatus])).toEqual([
        ['transient', 3002, 504],
      ]);
    });

    it('does not retry a 3001 the service marks not retryable (what a content violation is)', async () => {
      // The emulator's refusal that a retry cannot change: credentials it does not accept.
      await env.sb.control('POST', '/_sandbox/faults', {
        kind: 'invalid_token',
        count: 2,
        platform: 'business',
        pathPrefix: VIDEO_SETTINGS,
      });
      const retries: RetryInfo[] = [];
      const err = await failureOf(clientFor(tenant, retries).insights.videoSettings({ query: { account: account.username } }));
      expect(err).toMatchObject({ code: 3001, httpStatus: 502, data: { retryable: false, officialCode: 40105 } });
      expect(retries).toEqual([]);
      // One call reached the platform.
      expect(await faultsLeft()).toEqual([1]);
    });
  });

  describe('the rate limit', () => {
    /**
     * Spends the key's bucket: requests until the first refusal, which is returned. A full bucket
     * takes 60 and whatever refilled meanwhile; the bound only stops a limit that never holds.
     */
    async function drain(tenant: Tenant) {
      for (let i = 0; i < 2 * RATE_PER_MINUTE; i++) {
        const res = await call(env.stack.baseUrl, 'GET', '/v1/seats', { key: tenant.apiKey });
        if (res.body.code === 2002) return res;
        expect(res.body.code).toBe(0);
      }
      throw new Error(`not refused after ${2 * RATE_PER_MINUTE} requests`);
    }

    it('waits for Retry-After on 2002 and then succeeds', async () => {
      const tenant = await createTenant(env.stack);
      const refused = await drain(tenant);
      expect(refused.headers.get('retry-after')).toBe('1');
      const retries: RetryInfo[] = [];
      const started = Date.now();
      const seats = await clientFor(tenant, retries).seats.list();
      expect(seats).toEqual({ items: [] });
      expect(
        retries.map((r) => [
          r.kind,
          r.delayMs,
          (r.error as VpsApiError).code,
          (r.error as VpsApiError).httpStatus,
          (r.error as VpsApiError).retryAfterSeconds,
        ]),
      ).toEqual([['rateLimited', 1_000, 2002, 429, 1]]);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    });

    it('gives up after 3 retries while the limit holds, with one Idempotency-Key for every attempt', async () => {
      const tenant = await createTenant(env.stack);
      // Another caller of the same key spends each token as the client's attempt arrives, and the
      // attempt gets the service's refusal of that key. Forwarding the attempt after the drain
      // would race the bucket's refill (one token a second), which a loaded machine can lose.
      const proxy = await startProxy(env.stack.baseUrl, async () => ({ instead: await drain(tenant) }));
      proxies.push(proxy);
      const retries: RetryInfo[] = [];
      const err = await failureOf(
        clientFor(tenant, retries, proxy.url).webhooks.create({ body: { url: 'https://example.com/hooks', eventTypes: ['*'] } }),
      );
      expect(err).toMatchObject({ code: 2002, httpStatus: 429, retryAfterSeconds: 1 });
      expect(retries.map((r) => r.kind)).toEqual(['rateLimited', 'rateLimited', 'rateLimited']);
      expect(proxy.seen.map((s) => s.route)).toEqual(Array(4).fill('POST /v1/webhook-endpoints'));
      const keys = new Set(proxy.seen.map((s) => s.idempotencyKey));
      expect(keys.size).toBe(1);
      expect([...keys][0]).toMatch(/^[0-9a-f-]{36}$/);
    });
  });

  describe('a shop publish whose answer is lost', () => {
    let tenant: Tenant;
    let creator: SandboxAccount;
    let seatId: string;

    beforeAll(async () => {
      tenant = await createTenant(env.stack);
      ({ account: creator, seatId } = await bindSandboxSeat(env, tenant, 'shop'));
    });

    const officialPosts = async () =>
      (
        await env.sb.control<{ calls: Array<{ code: number }> }>(
          'GET',
          `/_sandbox/calls?path=${encodeURIComponent(SHOP_POSTS)}&openId=${creator.openId}`,
        )
      ).calls;

    it('is retried after finding the earlier attempt in the publish records, and the shop gets one post', async () => {
      const direct = clientFor(tenant);
      // Distinct bytes, so the shop's records tell this upload apart from others.
      const bytes = Buffer.concat([mp4Bytes(4096), createHash('sha256').update(String(Math.random())).digest()]);
      const progress: number[] = [];
      const upload = await direct.videos.upload(
        { fields: { seatId }, file: { bytes, name: 'clip.mp4', contentType: 'video/mp4' } },
        { onProgress: (sent) => progress.push(sent) },
      );
      expect(upload.fileId).toEqual(expect.any(String));
      expect(progress.at(-1)).toBe(bytes.byteLength);
      const products = await direct.shop.products({ body: { accountId: creator.openId } });
      const product = products.items[0]!;

      let lost = 0;
      const proxy = await startProxy(env.stack.baseUrl, async (route) =>
        route === 'POST /v1/publish/tts' && lost++ === 0 ? 'lose-answer' : 'answer',
      );
      proxies.push(proxy);
      const retries: RetryInfo[] = [];
      const published = await clientFor(tenant, retries, proxy.url).publish.shop({
        body: {
          fileId: upload.fileId!,
          accountId: creator.openId,
          productId: product.id,
          title: 'Look at this #deal',
          productTitle: 'Great deal',
        },
      });

      expect(retries.map((r) => [r.kind, r.error instanceof VpsNetworkError])).toEqual([['transient', true]]);
      expect(proxy.seen.map((s) => s.route)).toEqual(['POST /v1/publish/tts', 'GET /v1/publish/records']);
      const records = await direct.publish.records({ query: { fileId: upload.fileId! } });
      expect(records.items).toHaveLength(1);
      expect(published).toMatchObject({ id: records.items[0]!.id, track: 'shop', videoId: upload.id, earlierAttempt: true });

      await eventually(
        () => direct.publish.records({ query: { fileId: upload.fileId! } }),
        (page) => page.items[0]?.status === 'publish_complete',
        15_000,
      );
      expect(await officialPosts()).toEqual([expect.objectContaining({ code: 0 })]);
    });
  });
});
