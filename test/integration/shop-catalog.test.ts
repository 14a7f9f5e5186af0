/**
 * The shop catalog through real HTTP against the emulator: product answers cached per seat and
 * query, music search smoothed into regular pages (checked against the official API paged
 * directly), and cover photos checked from their own bytes before the shop issues a photo URI.
 */
import { randomBytes } from 'node:crypto';
import { searchMusic } from '../../core/upstream/shop/content';
import { call } from '../helpers/http';
import { jpeg, png, postPhoto } from '../helpers/images';
import { createTenant, type Stack, type Tenant } from '../helpers/stack';
import { bindSandboxSeat, startWorkingStack, type SandboxAccount, type WorkingStack } from '../helpers/working-stack';

interface ProductPage {
  items: Array<{ id: string; title: string; priceAmount: string; addedStatus: string }>;
  totalCount: number;
  nextPageToken: string | null;
  cached: boolean;
  fetchedAt: string;
}
interface MusicPage {
  items: Array<{ id: string; title: string; author: string }>;
  nextCursor: string | null;
}

describe('shop catalog', () => {
  let env: WorkingStack;
  let stack: Stack;
  let tenant: Tenant;
  let account: SandboxAccount;

  beforeAll(async () => {
    // A 10 MB photo goes to the emulator while the caller waits: more than the default 2 s on a busy machine.
    env = await startWorkingStack('shop-catalog', { upstreamTimeouts: { connectMs: 1_000, totalMs: 20_000 } });
    stack = env.stack;
    tenant = await createTenant(stack);
    ({ account } = await bindSandboxSeat(env, tenant, 'shop'));
  }, 120_000);
  afterAll(async () => {
    await env?.close();
  });

  const products = (json: Record<string, unknown>) =>
    call<ProductPage>(stack.baseUrl, 'POST', '/v1/products/query', { key: tenant.apiKey, json });
  const music = (json: Record<string, unknown>) => call<MusicPage>(stack.baseUrl, 'POST', '/v1/music/search', { key: tenant.apiKey, json });

  describe('POST /v1/products/query', () => {
    it('answers from the cache within the TTL, and fresh: true reads the shop again and refills it', async () => {
      const first = await products({ accountId: account.openId, keyword: 'Lamp' });
      expect(first.body.code).toBe(0);
      expect(first.body.data).toMatchObject({ cached: false, totalCount: 1, nextPageToken: null });
      expect(first.body.data.items).toEqual([
        expect.objectContaining({
          title: 'LED Desk Lamp with USB Port',
          priceAmount: expect.any(String),
          priceCurrency: 'USD',
          brandName: 'Brightnook',
        }),
      ]);

      await env.sb.control('POST', `/_sandbox/shop/${account.openId}/products`, { title: 'Reading Lamp Deluxe', price: '19.50' });

      const second = await products({ accountId: account.openId, keyword: 'Lamp' });
      expect(second.body.data).toEqual({ ...first.body.data, cached: true });
      // Spelling the shop's defaults out is the same query.
      const spelled = await products({
        accountId: account.openId,
        keyword: 'Lamp',
        sortField: 'PRODUCT_ID',
        sortOrder: 'DESC',
        pageSize: 20,
      });
      expect(spelled.body.data.cached).toBe(true);

      const fresh = await products({ accountId: account.openId, keyword: 'Lamp', fresh: true });
      expect(fresh.body.data.cached).toBe(false);
      expect(fresh.body.data.totalCount).toBe(2);
      expect(fresh.body.data.items.map((p) => p.title)).toContain('Reading Lamp Deluxe');
      expect(Date.parse(fresh.body.data.fetchedAt)).toBeGreaterThanOrEqual(Date.parse(first.body.data.fetchedAt));

      const after = await products({ accountId: account.openId, keyword: 'Lamp' });
      expect(after.body.data).toEqual({ ...fresh.body.data, cached: true });
    });

    it('keeps another keyword, page or sort in an entry of its own', async () => {
      const reading = await products({ accountId: account.openId, keyword: 'Reading' });
      expect(reading.body.data).toMatchObject({ cached: false, totalCount: 1 });
      const all = await products({ accountId: account.openId, pageSize: 10, sortField: 'PRICE', sortOrder: 'ASC' });
      expect(all.body.data.cached).toBe(false);
      expect(all.body.data.items).toHaveLength(10);
      const prices = all.body.data.items.map((p) => Number(p.priceAmount));
      expect(prices).toEqual([...prices].sort((a, b) => a - b));
      expect(all.body.data.nextPageToken).toEqual(expect.any(String));
      const next = await products({
        accountId: account.openId,
        pageSize: 10,
        sortField: 'PRICE',
        sortOrder: 'ASC',
        pageToken: all.body.data.nextPageToken,
      });
      expect(next.body.data.cached).toBe(false);
      expect(next.body.data.items.map((p) => p.id)).not.toContain(all.body.data.items[0]!.id);
    });

    it('passes a shop failure on as 3001 and caches nothing for it', async () => {
      await env.sb.control('POST', '/_sandbox/faults', {
        kind: 'server_error',
        count: 1,
        platform: 'shop',
        pathPrefix: '/affiliate_creator/202509/shop_products',
      });
      const failed = await products({ accountId: account.openId, keyword: 'Skillet' });
      expect(failed.body.code).toBe(3001);
      const next = await products({ accountId: account.openId, keyword: 'Skillet' });
      expect(next.body.data).toMatchObject({ cached: false, totalCount: 1 });
    });

    it('refuses an account none of the caller’s shop seats holds with 1007', async () => {
      const res = await products({ accountId: 'creator-nobody' });
      expect(res.status).toBe(409);
      expect(res.body.code).toBe(1007);
      expect(res.body.message).toMatch(/^accountId: /);
    });

    it.each([
      [{}, /^accountId: is required/],
      [{ accountId: 'x', pageSize: 0 }, /^pageSize: /],
      [{ accountId: 'x', pageSize: 101 }, /^pageSize: /],
      [{ accountId: 'x', pageSize: '5' }, /^pageSize: /],
      [{ accountId: 'x', sortField: 'NAME' }, /^sortField: /],
      [{ accountId: 'x', sortOrder: 'desc' }, /^sortOrder: /],
      [{ accountId: 'x', fresh: 'yes' }, /^fresh: /],
      [{ accountId: 'x', color: 'red' }, /^color: is not a known field/],
      [{ accountId: 'x', keyword: 'a\u0000b' }, /^keyword: /],
    ])('refuses %j with 2001 naming the field', async (json, message) => {
      const res = await products(json);
      expect(res.body.code).toBe(2001);
      expect(res.status).toBe(422);
      expect(res.body.message).toMatch(message);
    });

    it('answers an anonymous caller 1001, whatever the body', async () => {
      const res = await call(stack.baseUrl, 'POST', '/v1/products/query', { json: { pageSize: 'x' } });
      expect(res.body.code).toBe(1001);
    });
  });

  describe('POST /v1/music/search', () => {
    /** The official result for a keyword, paged straight from the shop and de-duplicated. */
    async function officialResult(keyword: string): Promise<string[]> {
      const ids: string[] = [];
      let page = await searchMusic(env.sb.upstream.shop, account.tokens.access_token, { keyword, page_size: 7 });
      for (let guard = 0; guard < 100; guard++) {
        for (const m of page.music) if (!ids.includes(m.id)) ids.push(m.id);
        if (!page.has_more) return ids;
        page = await searchMusic(env.sb.upstream.shop, account.tokens.access_token, {
          keyword,
          search_id: page.search_id,
          page_token: page.next_page_token,
          page_size: 7,
        });
      }
      throw new Error('the official search did not end');
    }

    async function allPages(keyword: string, pageSize: number): Promise<MusicPage[]> {
      const pages: MusicPage[] = [];
      let cursor: string | undefined;
      for (let guard = 0; guard < 100; guard++) {
        const res = await music({ accountId: account.openId, keyword, pageSize, ...(cursor ? { cursor } : {}) });
        expect(res.body.code).toBe(0);
        pages.push(res.body.data);
        if (res.body.data.nextCursor === null) return pages;
        cursor = res.body.data.nextCursor;
      }
      throw new Error('nextCursor never became null');
    }

    it.each([
      ['a', 7],
      ['a', 1],
      ['e', 50],
      ['Mira', 4],
    ])(
      'pages %j by %d: full pages of unique tracks, the union equal to the official result',
      async (keyword, pageSize) => {
        const expected = await officialResult(keyword);
        expect(expected.length).toBeGreaterThan(pageSize === 50 ? 0 : pageSize);
        const pages = await allPages(keyword, pageSize);
        const ids = pages.flatMap((p) => p.items.map((m) => m.id));
        expect(new Set(ids).size).toBe(ids.length);
        expect([...ids].sort()).toEqual([...expected].sort());
        // Every page but the last is exactly full; the last is not empty and ends the paging.
        for (const page of pages.slice(0, -1)) expect(page.items).toHaveLength(pageSize);
        const last = pages[pages.length - 1]!;
        expect(last.items.length).toBeGreaterThan(0);
        expect(last.items.length).toBeLessThanOrEqual(pageSize);
        expect(last.nextCursor).toBeNull();
        expect(pages[0]!.items[0]).toMatchObject({
          id: expect.any(String),
          title: expect.any(String),
          author: expect.any(String),
          duration: expect.any(String),
          coverThumbUrlList: [expect.any(String)],
        });
      },
      60_000,
    );

    it('passes a shop failure on as 3001', async () => {
      await env.sb.control('POST', '/_sandbox/faults', {
        kind: 'server_error',
        count: 1,
        platform: 'shop',
        pathPrefix: '/affiliate_creator/202602/music/search',
      });
      const res = await music({ accountId: account.openId, keyword: 'a' });
      expect(res.body.code).toBe(3001);
    });

    it('answers an empty last page with a null cursor when nothing matches', async () => {
      const res = await music({ accountId: account.openId, keyword: 'zzzz-no-such-track' });
      expect(res.body.data).toEqual({ items: [], nextCursor: null });
    });

    it('refuses a tampered cursor, or one of another query, with 2001 naming cursor', async () => {
      const first = await music({ accountId: account.openId, keyword: 'a', pageSize: 5 });
      const cursor = first.body.data.nextCursor!;
      const flipped = cursor.slice(0, -3) + (cursor.at(-3) === 'A' ? 'B' : 'A') + cursor.slice(-2);
      for (const [json, what] of [
        [{ accountId: account.openId, keyword: 'a', cursor: flipped }, 'tampered'],
        [{ accountId: account.openId, keyword: 'a', cursor: 'not-a-cursor' }, 'garbage'],
        [{ accountId: account.openId, keyword: 'e', cursor }, 'another keyword'],
        [{ accountId: account.openId, keyword: 'a', region: 'GB', cursor }, 'another region'],
      ] as const) {
        const res = await music(json);
        expect([what, res.body.code]).toEqual([what, 2001]);
        expect(res.body.message).toMatch(/^cursor: /);
      }
      // The genuine cursor still works, with another page size.
      const next = await music({ accountId: account.openId, keyword: 'a', pageSize: 3, cursor });
      expect(next.body.code).toBe(0);
      expect(next.body.data.items).toHaveLength(3);
      expect(next.body.data.items.map((m) => m.id)).not.toContain(first.body.data.items[4]!.id);
    });

    it('refuses an unbound account with 1007 and bad fields with 2001', async () => {
      expect((await music({ accountId: 'creator-nobody', keyword: 'a' })).body.code).toBe(1007);
      for (const json of [
        { accountId: account.openId },
        { accountId: account.openId, keyword: '' },
        { accountId: account.openId, keyword: 'a', pageSize: 51 },
        { accountId: account.openId, keyword: 'a', region: 'USA' },
        { accountId: account.openId, keyword: 'a', extra: 1 },
      ]) {
        const res = await music(json);
        expect(res.body.code).toBe(2001);
      }
    });
  });

  it.each([
    ['/v1/products/query', 'null'],
    ['/v1/products/query', '[]'],
    ['/v1/products/query', '"x"'],
    ['/v1/products/query', '{"accountId": 5}'],
    ['/v1/products/query', `{"accountId": "x", "keyword": "${'k'.repeat(300)}"}`],
    ['/v1/products/query', '{"accountId": "x", "pageToken": {}}'],
    ['/v1/music/search', `{"accountId": "x", "keyword": "a", "cursor": "${'c'.repeat(70_000)}"}`],
    ['/v1/music/search', '{"accountId": "x", "keyword": "a", "pageSize": 1.5}'],
    ['/v1/music/search', '{"accountId": "x", "keyword": "a", "language": "not a tag"}'],
    ['/v1/music/search', '{'],
  ])('%s refuses %s with 2001', async (path, body) => {
    const res = await call(stack.baseUrl, 'POST', path, { key: tenant.apiKey, headers: { 'content-type': 'application/json' }, body });
    expect(res.body.code).toBe(2001);
  });

  describe('POST /v1/photos', () => {
    it.each([
      [9, 16],
      [16, 9],
    ])('accepts a %d:%d image at the boundary and answers the photo URI the shop issued', async (w, h) => {
      const bytes = png(w * 20, h * 20);
      const res = await postPhoto(stack.baseUrl, tenant.apiKey, [
        ['accountId', account.openId],
        ['file', { fileName: 'cover.png', bytes }],
      ]);
      expect(res.body.code).toBe(0);
      expect(res.body.data).toEqual({
        photoUri: expect.stringMatching(/^tos-/),
        format: 'PNG',
        width: w * 20,
        height: h * 20,
        sizeBytes: bytes.length,
      });
    });

    it('recognises the format from the bytes, not the name or type', async () => {
      const res = await postPhoto(stack.baseUrl, tenant.apiKey, [
        ['accountId', account.openId],
        ['file', { fileName: 'cover.png', bytes: jpeg(1080, 1350), type: 'image/png' }],
      ]);
      expect(res.body.code).toBe(0);
      expect(res.body.data).toMatchObject({ format: 'JPEG', width: 1080, height: 1350 });
    });

    it.each([
      [9, 17, /^file: has an aspect ratio of 9:17 \(180x340\), outside the allowed 9:16 to 16:9/],
      [17, 9, /^file: has an aspect ratio of 17:9 \(340x180\), outside the allowed 9:16 to 16:9/],
    ])('refuses a %d:%d image with 2001 naming the ratio and the range', async (w, h, message) => {
      const res = await postPhoto(stack.baseUrl, tenant.apiKey, [
        ['accountId', account.openId],
        ['file', { fileName: 'cover.png', bytes: png(w * 20, h * 20) }],
      ]);
      expect(res.body.code).toBe(2001);
      expect(res.body.message).toMatch(message);
    });

    it('refuses a file over 10 MB with 2001 naming the limit', async () => {
      const bytes = png(900, 1600, 10 * 1024 * 1024 + 4096);
      const res = await postPhoto(stack.baseUrl, tenant.apiKey, [
        ['accountId', account.openId],
        ['file', { fileName: 'big.png', bytes }],
      ]);
      expect(res.body.code).toBe(2001);
      expect(res.body.message).toBe('file: larger than the limit of 10485760 bytes (10 MB)');
      // Exactly at the limit is fine.
      const atLimit = await postPhoto(stack.baseUrl, tenant.apiKey, [
        ['accountId', account.openId],
        ['file', { fileName: 'limit.png', bytes: png(900, 1600, 10 * 1024 * 1024) }],
      ]);
      expect(atLimit.body.code).toBe(0);
      expect(atLimit.body.data.sizeBytes).toBe(10 * 1024 * 1024);
    });

    it('refuses what is not an image, or a missing part, with 2001', async () => {
      const text = await postPhoto(stack.baseUrl, tenant.apiKey, [
        ['accountId', account.openId],
        ['file', { fileName: 'cover.png', bytes: Buffer.from('just some text, not an image at all') }],
      ]);
      expect(text.body.code).toBe(2001);
      expect(text.body.message).toMatch(/^file: is not a supported image/);
      const noFile = await postPhoto(stack.baseUrl, tenant.apiKey, [['accountId', account.openId]]);
      expect(noFile.body.code).toBe(2001);
      expect(noFile.body.message).toMatch(/^file: is required/);
      const noAccount = await postPhoto(stack.baseUrl, tenant.apiKey, [['file', { fileName: 'cover.png', bytes: png(90, 160) }]]);
      expect(noAccount.body.code).toBe(2001);
      expect(noAccount.body.message).toMatch(/^accountId: is required/);
      const json = await call(stack.baseUrl, 'POST', '/v1/photos', { key: tenant.apiKey, json: { accountId: account.openId } });
      expect(json.body.code).toBe(2001);
    });

    it('draws one request from the rate limit per upload: the check before the file draws nothing', async () => {
      // A key of its own, so its bucket starts full.
      const fresh = await stack.admin.createApiKey({ userId: tenant.userId, name: 'one draw' });
      const res = await postPhoto(stack.baseUrl, fresh.plaintext, [
        ['accountId', account.openId],
        ['file', { fileName: 'cover.png', bytes: png(108, 192) }],
      ]);
      expect(res.body.code).toBe(0);
      const limit = Number(res.headers.get('x-ratelimit-limit'));
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(limit - 1));
    });

    it('answers a repeat with the same Idempotency-Key with the first photo URI, uploading once', async () => {
      const parts: Parameters<typeof postPhoto>[2] = [
        ['accountId', account.openId],
        ['file', { fileName: 'cover.png', bytes: png(108, 192) }],
      ];
      const headers = { 'idempotency-key': `photo-${randomBytes(6).toString('hex')}` };
      const first = await postPhoto(stack.baseUrl, tenant.apiKey, parts, headers);
      const again = await postPhoto(stack.baseUrl, tenant.apiKey, parts, headers);
      expect(first.body.code).toBe(0);
      expect(again.body.data).toEqual(first.body.data);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
    });

    it('refuses a malformed or unexpected form with 2001, never 5000', async () => {
      const unknown = await postPhoto(stack.baseUrl, tenant.apiKey, [
        ['accountId', account.openId],
        ['caption', 'hi'],
        ['file', { fileName: 'c.png', bytes: png(90, 160) }],
      ]);
      expect(unknown.body).toMatchObject({ code: 2001, message: expect.stringMatching(/^caption: is not a known field/) });
      const wrongPart = await postPhoto(stack.baseUrl, tenant.apiKey, [
        ['accountId', account.openId],
        ['image', { fileName: 'c.png', bytes: png(90, 160) }],
      ]);
      expect(wrongPart.body).toMatchObject({ code: 2001, message: expect.stringMatching(/^image: /) });
      const broken = await call(stack.baseUrl, 'POST', '/v1/photos', {
        key: tenant.apiKey,
        headers: { 'content-type': 'multipart/form-data; boundary=xyz' },
        body: '--xyz\r\nContent-Disposition: form-data; name="accountId"\r\n\r\nabc',
      });
      expect(broken.body.code).toBe(2001);
      const noBoundary = await call(stack.baseUrl, 'POST', '/v1/photos', {
        key: tenant.apiKey,
        headers: { 'content-type': 'multipart/form-data' },
        body: 'x',
      });
      expect(noBoundary.body.code).toBe(2001);
    });

    it('takes accountId after the file part, as curl -F file=@cover.png -F accountId=… sends it, and judges it as before it', async () => {
      const bytes = png(90 * 20, 160 * 20);
      const after = await postPhoto(stack.baseUrl, tenant.apiKey, [
        ['file', { fileName: 'cover.png', bytes }],
        ['accountId', account.openId],
      ]);
      expect(after.body).toMatchObject({ code: 0, data: { format: 'PNG', width: 90 * 20, height: 160 * 20, sizeBytes: bytes.length } });
      const unbound = await postPhoto(stack.baseUrl, tenant.apiKey, [
        ['file', { fileName: 'cover.png', bytes }],
        ['accountId', 'creator-nobody'],
      ]);
      expect(unbound.body.code).toBe(1007);
      const missing = await postPhoto(stack.baseUrl, tenant.apiKey, [['file', { fileName: 'cover.png', bytes }]]);
      expect(missing.body).toMatchObject({ code: 2001, message: 'accountId: is required' });
      const anonymous = await postPhoto(stack.baseUrl, undefined, [
        ['file', { fileName: 'cover.png', bytes }],
        ['accountId', account.openId],
      ]);
      expect(anonymous.body.code).toBe(1001);
    });

    it('checks the account before the file (1007), and the caller before anything (1001)', async () => {
      const unbound = await postPhoto(stack.baseUrl, tenant.apiKey, [
        ['accountId', 'creator-nobody'],
        ['file', { fileName: 'x.txt', bytes: Buffer.from('not an image') }],
      ]);
      expect(unbound.body.code).toBe(1007);
      const anonymous = await postPhoto(stack.baseUrl, undefined, [['file', { fileName: 'x.txt', bytes: Buffer.from('not an image') }]]);
      expect(anonymous.body.code).toBe(1001);
      const anonymousValid = await postPhoto(stack.baseUrl, undefined, [
        ['accountId', account.openId],
        ['file', { fileName: 'cover.png', bytes: png(90, 160) }],
      ]);
      expect(anonymousValid.body.code).toBe(1001);
    });
  });
});

describe('shop catalog with core over Connect HTTP', () => {
  let env: WorkingStack;
  let tenant: Tenant;
  let account: SandboxAccount;

  beforeAll(async () => {
    // The same 10 MB photo as above, so the same upstream time: it timed out at 2 s in a busy CI run.
    env = await startWorkingStack('shop-catalog-http', {
      stack: { transport: 'http' },
      upstreamTimeouts: { connectMs: 1_000, totalMs: 20_000 },
    });
    tenant = await createTenant(env.stack);
    ({ account } = await bindSandboxSeat(env, tenant, 'shop'));
  }, 120_000);
  afterAll(async () => {
    await env?.close();
  });

  it('carries a photo of exactly 10 MB to core and back, and refuses one byte more', async () => {
    const limit = 10 * 1024 * 1024;
    const ok = await postPhoto(env.stack.baseUrl, tenant.apiKey, [
      ['accountId', account.openId],
      ['file', { fileName: 'limit.png', bytes: png(900, 1600, limit) }],
    ]);
    expect(ok.body.data).toMatchObject({ format: 'PNG', sizeBytes: limit });
    const over = await postPhoto(env.stack.baseUrl, tenant.apiKey, [
      ['accountId', account.openId],
      ['file', { fileName: 'over.png', bytes: png(900, 1600, limit + 1) }],
    ]);
    expect(over.body.code).toBe(2001);
  });
});
