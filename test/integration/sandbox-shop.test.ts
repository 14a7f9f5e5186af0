/**
 * The shop platform's creator content API and OAuth as the emulator serves them: contract tests
 * over raw signed HTTP (shapes, envelope, common refusals), and the service's typed client
 * functions against it (official errors surface as UpstreamError 3001).
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { UpstreamError } from '../../core/upstream/failures';
import {
  getCreatorProfile,
  getPrecheckResult,
  getShopProducts,
  getVideoStatus,
  postVideo,
  searchMusic,
  submitPrecheck,
  uploadPhotoFile,
  uploadVideoFile,
  type PostVideoBody,
  type ShopProduct,
} from '../../core/upstream/shop/content';
import { authorizePageUrl, getAccessToken, refreshAccessToken } from '../../core/upstream/shop/oauth';
import { signShopRequest } from '../../core/upstream/shop/signing';
import {
  bmpHeader as bmp,
  concat,
  heicHeader as heic,
  jpegHeader as jpeg,
  pngHeader as png,
  VIDEO_SAMPLES as VIDEOS,
  webpHeader as webp,
} from '../helpers/media-samples';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox';

type Envelope = { code: number; message: string; request_id: string; data: Record<string, unknown> };

const PATHS = {
  videoFiles: '/affiliate_creator/202505/videos/video_files',
  photoFiles: '/affiliate_creator/202511/photos/photo_files',
  products: '/affiliate_creator/202509/shop_products',
  music: '/affiliate_creator/202602/music/search',
  precheck: '/affiliate_creator/202511/videos/precheck_task',
  videos: '/affiliate_creator/202607/videos',
  profile: '/affiliate_creator/202508/profiles',
};

const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex').toUpperCase();

// ---- raw official calls, signed the documented way ----

interface RawOptions {
  token?: string | null;
  query?: Record<string, string>;
  json?: unknown;
  form?: FormData;
  timestamp?: number;
  /** Replace the computed signature. */
  sign?: string;
}

async function shopCall(
  ts: TestSandbox,
  method: 'GET' | 'POST',
  path: string,
  token: string | null,
  opts: RawOptions = {},
): Promise<{ status: number; body: Envelope }> {
  const settings = ts.upstream.shop.settings;
  const body = opts.json === undefined ? undefined : JSON.stringify(opts.json);
  const query: Record<string, string> = {
    ...opts.query,
    app_key: settings.appKey,
    timestamp: String(opts.timestamp ?? Math.floor(Date.now() / 1000)),
  };
  query.sign = opts.sign ?? signShopRequest(settings.appSecret, path, query, body);
  const url = new URL(path, ts.url);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  const headers: Record<string, string> = {};
  if (token) headers['x-tts-access-token'] = token;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, { method, headers, body: body ?? opts.form });
  return { status: res.status, body: (await res.json()) as Envelope };
}

function formOf(bytes: Buffer, name = 'upload.bin', field = 'data'): FormData {
  const form = new FormData();
  form.append(field, new Blob([bytes]), name);
  return form;
}

/** The UpstreamError a client call fails with. */
async function upstreamFailure(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof UpstreamError) return err;
    throw err;
  }
  throw new Error('expected the call to fail');
}

function expectErrorEnvelope(body: Envelope, code: number, message?: RegExp): void {
  expect(body).toEqual({ code, message: expect.any(String), request_id: expect.stringMatching(/^\d{14}[0-9A-F]{20}$/), data: {} });
  if (message) expect(body.message).toMatch(message);
}

describe('shop emulator: creator content API', () => {
  let ts: TestSandbox;
  let creator: { openId: string; token: string };
  let products: ShopProduct[];

  const shop = () => ts.upstream.shop;
  const advance = (ms: number) => ts.control('POST', '/_sandbox/clock', { advanceMs: ms });
  const newCreator = async () => {
    const a = await ts.account('shop');
    return { openId: a.openId, token: a.tokens.access_token };
  };
  const upload = async (token = creator.token, bytes = VIDEOS.MP4!) =>
    (await uploadVideoFile(shop(), token, { fileName: 'clip.mp4', contentType: 'video/mp4', bytes })).video_file.id;
  const addable = () => products.find((p) => p.added_status !== 'REJECTED')!;
  const rejected = () => products.find((p) => p.added_status === 'REJECTED')!;
  const postBody = (fileId: string, extra: Partial<PostVideoBody['video_info']> = {}, productId = addable().id): PostVideoBody => ({
    video_info: { file_id: fileId, title: 'Morning coffee, made simple #coffee', ...extra },
    product_link_info: { product_id: productId, title: 'Shop the coffee set' },
  });

  beforeAll(async () => {
    ts = await startTestSandbox();
    creator = await newCreator();
    products = (await getShopProducts(shop(), creator.token, { page_size: 100 })).products;
  });
  afterAll(() => ts.close());

  describe('common checks', () => {
    it('answers success in the shop envelope', async () => {
      const res = await shopCall(ts, 'GET', PATHS.profile, creator.token);

      expect(res.status).toBe(200);
      expect(res.body).toEqual({ code: 0, message: 'Success', request_id: expect.any(String), data: expect.any(Object) });
    });

    it('refuses a wrong signature with 106001', async () => {
      const res = await shopCall(ts, 'GET', PATHS.profile, creator.token, { sign: 'f'.repeat(64) });

      expect(res.status).toBe(401);
      expectErrorEnvelope(res.body, 106001, /signature/i);
    });

    it('refuses a signature over a different body with 106001', async () => {
      const settings = shop().settings;
      const timestamp = String(Math.floor(Date.now() / 1000));
      const sign = signShopRequest(settings.appSecret, PATHS.precheck, { app_key: settings.appKey, timestamp }, '{"a":1}');
      const res = await shopCall(ts, 'POST', PATHS.precheck, creator.token, { json: { a: 2 }, timestamp: Number(timestamp), sign });

      expectErrorEnvelope(res.body, 106001);
    });

    it('refuses a timestamp older than 5 minutes with 36009004', async () => {
      const res = await shopCall(ts, 'GET', PATHS.profile, creator.token, { timestamp: Math.floor(Date.now() / 1000) - 301 });

      expect(res.status).toBe(400);
      expectErrorEnvelope(res.body, 36009004, /timestamp.*5 minutes/);
    });

    it('refuses a call without x-tts-access-token with 105001', async () => {
      const res = await shopCall(ts, 'GET', PATHS.profile, null);

      expect(res.status).toBe(401);
      expectErrorEnvelope(res.body, 105001);
    });

    it('refuses shop_cipher on creator endpoints with 36009004 naming it', async () => {
      const res = await shopCall(ts, 'GET', PATHS.profile, creator.token, { query: { shop_cipher: 'GCP_x' } });

      expectErrorEnvelope(res.body, 36009004, /shop_cipher/);
    });

    it('answers an unknown path with 36009009 and HTTP 404', async () => {
      const res = await shopCall(ts, 'GET', '/affiliate_creator/202405/showcases/products', creator.token);

      expect(res.status).toBe(404);
      expectErrorEnvelope(res.body, 36009009);
    });

    it('surfaces official errors to the client as 3001 with the official code, message and class', async () => {
      const err = await upstreamFailure(getCreatorProfile(shop(), 'act.not-a-token.x'));

      expect(err.code).toBe(3001);
      expect(err.message).toBe('The access token is invalid.');
      expect(err.failure).toMatchObject({
        platform: 'shop',
        officialCode: 105001,
        failureClass: 'auth',
        retryable: false,
        httpStatus: 401,
      });
    });
  });

  describe('a. upload video file', () => {
    it.each(Object.keys(VIDEOS))('accepts %s by its bytes and returns the file id and upper-case md5', async (format) => {
      const bytes = VIDEOS[format]!;
      const res = await shopCall(ts, 'POST', PATHS.videoFiles, creator.token, { form: formOf(bytes, 'whatever.bin') });

      expect(res.body.code).toBe(0);
      expect(res.body.data).toEqual({ video_file: { id: expect.stringMatching(/^\d{19}$/), md5: md5(bytes) } });
    });

    it('refuses bytes that are no video container with 36009004 naming data', async () => {
      const res = await shopCall(ts, 'POST', PATHS.videoFiles, creator.token, { form: formOf(png(720, 1280), 'fake.mp4') });

      expect(res.status).toBe(400);
      expectErrorEnvelope(res.body, 36009004, /data is not a supported video format/);
    });

    it('refuses a form without the data field', async () => {
      const res = await shopCall(ts, 'POST', PATHS.videoFiles, creator.token, { form: formOf(VIDEOS.MP4!, 'clip.mp4', 'file') });

      expectErrorEnvelope(res.body, 36009004, /data is required/);
    });

    it('streams a file through the client, and refuses one over 100 MB', async () => {
      const small = await uploadVideoFile(shop(), creator.token, { fileName: 'clip.webm', stream: Readable.from([VIDEOS.WEBM!]) });
      expect(small.video_file.md5).toBe(md5(VIDEOS.WEBM!));

      const chunk = Buffer.alloc(1024 * 1024);
      const big = Readable.from(
        (function* () {
          yield VIDEOS.MP4!;
          for (let i = 0; i < 100; i++) yield chunk;
        })(),
      );
      const err = await upstreamFailure(uploadVideoFile(shop(), creator.token, { fileName: 'big.mp4', stream: big }, { totalMs: 30_000 }));
      expect(err.failure).toMatchObject({ officialCode: 36009004, failureClass: 'bad_request' });
      expect(err.message).toMatch(/exceeds the maximum video size of 100 MB/);
    });
  });

  describe('c. upload photo file', () => {
    it.each([
      ['PNG', png(1080, 1920)],
      ['JPEG', jpeg(1920, 1080)],
      ['WEBP', webp(1000, 1000)],
      ['BMP', bmp(900, 1600)],
      ['HEIC', heic(1200, 1600)],
    ])('accepts %s within 9:16 to 16:9 and returns a photo_uri', async (_format, bytes) => {
      const res = await shopCall(ts, 'POST', PATHS.photoFiles, creator.token, { form: formOf(bytes) });

      expect(res.body.code).toBe(0);
      expect(res.body.data).toEqual({ photo_file: { photo_uri: expect.any(String) } });
    });

    it.each([
      ['too tall', png(500, 1000), /aspect ratio of 500:1000/],
      ['too wide', jpeg(2000, 1000), /aspect ratio/],
      ['not an image', VIDEOS.MP4!, /not a supported image format/],
      ['over 10 MB', concat(png(1000, 1000), Buffer.alloc(10 * 1024 * 1024)), /exceeds the maximum photo size of 10 MB/],
    ])('refuses a photo %s with 36009004', async (_case, bytes, message) => {
      const res = await shopCall(ts, 'POST', PATHS.photoFiles, creator.token, { form: formOf(bytes) });

      expectErrorEnvelope(res.body, 36009004, message);
    });
  });

  describe('d. shop products', () => {
    it('lists the seeded catalogue in the official shape, every status present', async () => {
      const res = await shopCall(ts, 'GET', PATHS.products, creator.token, { query: { page_size: '2' } });

      expect(res.body.data).toEqual({
        products: [expect.any(Object), expect.any(Object)],
        total_count: 25,
        next_page_token: expect.any(String),
      });
      expect((res.body.data.products as unknown[])[0]).toEqual({
        id: expect.stringMatching(/^\d{19}$/),
        title: expect.any(String),
        price: { amount: expect.stringMatching(/^\d+\.\d{2}$/), currency: 'USD' },
        added_status: expect.stringMatching(/^(ADDABLE|ADDED|REJECTED)$/),
        brand_name: expect.any(String),
        images: [{ url: expect.stringContaining('http'), width: 600, height: 600 }],
        sales_count: expect.any(Number),
      });
      expect(new Set(products.map((p) => p.added_status))).toEqual(new Set(['ADDABLE', 'ADDED', 'REJECTED']));
    });

    it('pages with next_page_token until it is empty, product ids descending by default', async () => {
      const seen: string[] = [];
      let token: string | undefined;
      do {
        const page = await getShopProducts(shop(), creator.token, { page_size: 10, ...(token ? { page_token: token } : {}) });
        seen.push(...page.products.map((p) => p.id));
        token = page.next_page_token || undefined;
      } while (token);

      expect(seen).toHaveLength(25);
      expect(seen).toEqual([...seen].sort((a, b) => (BigInt(b) > BigInt(a) ? 1 : -1)));
    });

    it('sorts by price ascending, filters by title keyword, and falls back to defaults for an unknown sort', async () => {
      const byPrice = await getShopProducts(shop(), creator.token, { page_size: 100, sort_field: 'PRICE', sort_order: 'ASC' });
      const prices = byPrice.products.map((p) => Number(p.price.amount));
      expect(prices).toEqual([...prices].sort((a, b) => a - b));

      const mugs = await getShopProducts(shop(), creator.token, { page_size: 100, title_keyword: 'steel' });
      expect(mugs.products.map((p) => p.title)).toEqual(
        expect.arrayContaining(['Insulated Steel Water Bottle', 'Stainless Steel Lunch Box']),
      );
      expect(mugs.total_count).toBe(mugs.products.length);

      const res = await shopCall(ts, 'GET', PATHS.products, creator.token, {
        query: { page_size: '3', sort_field: 'COLOUR', sort_order: 'SIDEWAYS' },
      });
      expect(res.body.code).toBe(0);
    });

    it.each([
      ['missing', {}, /page_size is required/],
      ['zero', { page_size: '0' }, /page_size/],
      ['over 100', { page_size: '101' }, /page_size/],
      ['not a token', { page_size: '5', page_token: 'garbage' }, /page_token/],
    ])('refuses page_size or page_token %s with 36009004', async (_case, query, message) => {
      const res = await shopCall(ts, 'GET', PATHS.products, creator.token, { query });

      expectErrorEnvelope(res.body, 36009004, message);
    });

    it('lists a product added through the control API for that creator only', async () => {
      const other = await newCreator();
      const { product } = await ts.control<{ product: ShopProduct }>('POST', `/_sandbox/shop/${other.openId}/products`, {
        title: 'Sandbox Lava Lamp',
        price: 19.5,
      });

      const mine = await getShopProducts(shop(), other.token, { page_size: 100, title_keyword: 'lava' });
      expect(mine.products).toEqual([product]);
      expect(product.price).toEqual({ amount: '19.50', currency: 'USD' });
      expect((await getShopProducts(shop(), creator.token, { page_size: 100, title_keyword: 'lava' })).total_count).toBe(0);
    });
  });

  describe('f. music search', () => {
    it('returns music in the official shape with a search_id', async () => {
      const res = await shopCall(ts, 'GET', PATHS.music, creator.token, {
        query: { keyword: 'groove', page_size: '2', region: 'US', language: 'en-US' },
      });

      expect(res.body.data).toEqual({
        music: expect.any(Array),
        next_page_token: '2',
        has_more: true,
        search_id: expect.stringMatching(/^\d{14}[0-9A-F]{20}$/),
      });
      expect((res.body.data.music as unknown[])[0]).toEqual({
        id: expect.stringMatching(/^\d{19}$/),
        title: expect.stringMatching(/Groove/),
        author: expect.any(String),
        cover_thumb: { url_list: [expect.stringContaining('http')] },
        duration: expect.stringMatching(/^\d+$/),
        play_url: { url_list: [expect.stringContaining('.wav')] },
      });
    });

    it('plays the pagination quirks: search_id required, a short page with has_more, a repeated last item', async () => {
      const first = await searchMusic(shop(), creator.token, { keyword: 'summer', page_size: '3' });
      expect(first.music).toHaveLength(3);
      expect(first.has_more).toBe(true);

      const withoutId = await upstreamFailure(
        searchMusic(shop(), creator.token, { keyword: 'summer', page_size: '3', page_token: first.next_page_token }),
      );
      expect(withoutId.failure).toMatchObject({ officialCode: 36009004, failureClass: 'bad_request' });
      expect(withoutId.message).toMatch(/search_id/);
      const otherKeyword = await upstreamFailure(
        searchMusic(shop(), creator.token, { keyword: 'neon', search_id: first.search_id, page_token: first.next_page_token }),
      );
      expect(otherKeyword.message).toMatch(/search_id does not match/);

      const second = await searchMusic(shop(), creator.token, {
        keyword: 'summer',
        page_size: '3',
        search_id: first.search_id,
        page_token: first.next_page_token,
      });
      expect(second.music.length).toBeLessThan(3);
      expect(second.has_more).toBe(true);

      const third = await searchMusic(shop(), creator.token, {
        keyword: 'summer',
        page_size: '3',
        search_id: first.search_id,
        page_token: second.next_page_token,
      });
      expect(third.has_more).toBe(false);
      expect(third.next_page_token).not.toBe('');
      expect(third.music[0]!.id).toBe(second.music.at(-1)!.id);

      const all = [...first.music, ...second.music, ...third.music].map((m) => m.id);
      expect(new Set(all).size).toBe(all.length - 1);
    });

    it('refuses a missing keyword and a malformed region with 36009004', async () => {
      expectErrorEnvelope((await shopCall(ts, 'GET', PATHS.music, creator.token, {})).body, 36009004, /keyword is required/);
      expectErrorEnvelope(
        (await shopCall(ts, 'GET', PATHS.music, creator.token, { query: { keyword: 'beat', region: 'USA' } })).body,
        36009004,
        /region/,
      );
    });

    it("refuses another creator's search_id", async () => {
      const first = await searchMusic(shop(), creator.token, { keyword: 'beat', page_size: '1' });
      const other = await newCreator();
      const err = await upstreamFailure(
        searchMusic(shop(), other.token, { keyword: 'beat', search_id: first.search_id, page_token: first.next_page_token }),
      );

      expect(err.failure.officialCode).toBe(36009004);
    });
  });

  describe('g/h. precheck', () => {
    it('reports PROCESSING, then SUCCESS on both checks, and does not consume the file id', async () => {
      const fileId = await upload();
      const { precheck } = await submitPrecheck(shop(), creator.token, {
        video_info: { file_id: fileId },
        product_link_info: { product_id: addable().id, title: 'Shop the coffee set' },
      });
      expect(precheck.task_id).toMatch(/^\d{19}$/);

      const pending = await getPrecheckResult(shop(), creator.token, precheck.task_id);
      expect(pending).toEqual({
        precheck_task: {
          id: precheck.task_id,
          violation_check_result: { status: 'PROCESSING', issues: [] },
          good_quality_check_result: { status: 'PROCESSING', issues: [] },
        },
      });

      await advance(1_000);
      const done = await getPrecheckResult(shop(), creator.token, precheck.task_id);
      expect(done.precheck_task.violation_check_result.status).toBe('SUCCESS');
      expect(done.precheck_task.good_quality_check_result.status).toBe('SUCCESS');

      const posted = await postVideo(shop(), creator.token, postBody(fileId));
      expect(posted.video.id).toMatch(/^\d{19}$/);
    });

    it('fails the violation check when the anchor title contains "violation", with issues', async () => {
      const fileId = await upload();
      const { precheck } = await submitPrecheck(shop(), creator.token, {
        video_info: { file_id: fileId },
        product_link_info: { product_id: addable().id, title: 'No violation here' },
      });
      await advance(1_000);
      const { precheck_task } = await getPrecheckResult(shop(), creator.token, precheck.task_id);

      expect(precheck_task.violation_check_result).toEqual({
        status: 'FAIL',
        issues: [{ risk: expect.any(String), suggestions: expect.any(String) }],
      });
      expect(precheck_task.good_quality_check_result.status).toBe('SUCCESS');
    });

    it('plays the verdict queued through the control API', async () => {
      await ts.control('POST', `/_sandbox/shop/${creator.openId}/next-precheck`, { quality: 'FAIL' });
      const { precheck } = await submitPrecheck(shop(), creator.token, {
        video_info: { file_id: await upload() },
        product_link_info: { product_id: addable().id, title: 'Fine title' },
      });
      await advance(1_000);
      const { precheck_task } = await getPrecheckResult(shop(), creator.token, precheck.task_id);

      expect(precheck_task.good_quality_check_result).toEqual({
        status: 'FAIL',
        issues: [{ code: 'LOW_RESOLUTION', suggestions: expect.any(String) }],
      });
      expect(precheck_task.violation_check_result.status).toBe('SUCCESS');
    });

    it.each([
      ['31 characters', 'a'.repeat(31), 16011007, 'bad_request'],
      ['punctuation', 'Great deal!', 16011069, 'bad_request'],
      ['an emoji', 'Great deal 🔥', 16011069, 'bad_request'],
    ])('refuses an anchor title with %s', async (_case, title, code, failureClass) => {
      const err = await upstreamFailure(
        submitPrecheck(shop(), creator.token, {
          video_info: { file_id: await upload() },
          product_link_info: { product_id: addable().id, title },
        }),
      );

      expect(err.failure).toMatchObject({ officialCode: code, failureClass });
    });

    it('accepts an anchor title of exactly 30 characters', async () => {
      const res = await submitPrecheck(shop(), creator.token, {
        video_info: { file_id: await upload() },
        product_link_info: { product_id: addable().id, title: 'a'.repeat(30) },
      });

      expect(res.precheck.task_id).toBeDefined();
    });

    it('refuses unknown and rejected products, and unknown or foreign file ids', async () => {
      const fileId = await upload();
      const link = (productId: string, file = fileId) => ({
        video_info: { file_id: file },
        product_link_info: { product_id: productId, title: 'Anchor' },
      });
      const other = await newCreator();
      const foreign = await upload(other.token);

      expect((await upstreamFailure(submitPrecheck(shop(), creator.token, link('1700000000000000000')))).failure).toMatchObject({
        officialCode: 170001011,
        failureClass: 'not_found',
      });
      expect((await upstreamFailure(submitPrecheck(shop(), creator.token, link(rejected().id)))).failure).toMatchObject({
        officialCode: 170001012,
        failureClass: 'bad_request',
      });
      expect((await upstreamFailure(submitPrecheck(shop(), creator.token, link(addable().id, '123')))).failure).toMatchObject({
        officialCode: 170001040,
        failureClass: 'bad_request',
      });
      expect((await upstreamFailure(submitPrecheck(shop(), creator.token, link(addable().id, foreign)))).failure.officialCode).toBe(
        170001040,
      );
    });

    it('refuses missing fields with 36009004 naming them, and an unknown task id', async () => {
      const res = await shopCall(ts, 'POST', PATHS.precheck, creator.token, {
        json: { video_info: { file_id: '1' }, product_link_info: { product_id: '2' } },
      });
      expectErrorEnvelope(res.body, 36009004, /product_link_info\.title is required/);

      const err = await upstreamFailure(getPrecheckResult(shop(), creator.token, '999'));
      expect(err.failure).toMatchObject({ officialCode: 36009004 });
      expect(err.message).toMatch(/task_id/);
    });
  });

  describe('i/k. post and status', () => {
    it('posts with cover and music, reports the quota, then SUCCESS with post_time, and lists the post', async () => {
      const me = await newCreator();
      const fileId = await upload(me.token);
      const { photo_file } = await uploadPhotoFile(shop(), me.token, { fileName: 'cover.png', bytes: png(1080, 1920) });
      // Not page_size 1: the first candidate may be filtered out of its page (a quirk).
      const { music } = await searchMusic(shop(), me.token, { keyword: 'golden', page_size: 5 });
      const product = addable();

      const posted = await postVideo(
        shop(),
        me.token,
        postBody(fileId, { cover_uri: photo_file.photo_uri, music_id: music[0]!.id, is_ai_generated: false }, product.id),
      );
      expect(posted).toEqual({ video: { id: expect.stringMatching(/^\d{19}$/) }, quota: '1/20 per day' });

      expect(await getVideoStatus(shop(), me.token, posted.video.id)).toEqual({
        video: { id: posted.video.id, post_status: 'PROCESSING' },
      });
      await advance(1_000);
      const done = await getVideoStatus(shop(), me.token, posted.video.id);
      expect(done).toEqual({ video: { id: posted.video.id, post_status: 'SUCCESS', post_time: expect.any(Number) } });
      expect(Math.abs(done.video.post_time! - ts.sandbox.context.clock.nowSeconds())).toBeLessThan(5);

      const listed = ts.sandbox.context.posts.list(me.openId).find((p) => p.productId === product.id);
      expect(listed).toMatchObject({ caption: 'Morning coffee, made simple #coffee', mediaType: 'VIDEO' });
    });

    it('consumes the file id: a second post or precheck with it answers 170001040', async () => {
      const fileId = await upload();
      await postVideo(shop(), creator.token, postBody(fileId));

      const again = await upstreamFailure(postVideo(shop(), creator.token, postBody(fileId)));
      expect(again.code).toBe(3001);
      expect(again.failure).toMatchObject({ officialCode: 170001040, failureClass: 'bad_request', retryable: false });
      const precheck = await upstreamFailure(
        submitPrecheck(shop(), creator.token, {
          video_info: { file_id: fileId },
          product_link_info: { product_id: addable().id, title: 'Anchor' },
        }),
      );
      expect(precheck.failure.officialCode).toBe(170001040);
    });

    it('leaves the file id unused when the post is refused', async () => {
      const fileId = await upload();
      const refused = await upstreamFailure(postVideo(shop(), creator.token, postBody(fileId, {}, rejected().id)));
      expect(refused.failure.officialCode).toBe(170001012);

      expect((await postVideo(shop(), creator.token, postBody(fileId))).video.id).toBeDefined();
    });

    it('ends in FAIL when the control API chose a failed outcome', async () => {
      const me = await newCreator();
      await ts.control('POST', `/_sandbox/accounts/${me.openId}/next-publish`, { outcome: 'failed', reason: 'content_rejected' });
      const posted = await postVideo(shop(), me.token, postBody(await upload(me.token)));
      await advance(1_000);

      expect(await getVideoStatus(shop(), me.token, posted.video.id)).toEqual({ video: { id: posted.video.id, post_status: 'FAIL' } });
    });

    it("answers 170001016 for another creator's video or an unknown one", async () => {
      const posted = await postVideo(shop(), creator.token, postBody(await upload()));
      const other = await newCreator();

      expect((await upstreamFailure(getVideoStatus(shop(), other.token, posted.video.id))).failure).toMatchObject({
        officialCode: 170001016,
        failureClass: 'not_found',
      });
      expect((await upstreamFailure(getVideoStatus(shop(), creator.token, '7000000000000000000'))).failure.officialCode).toBe(170001016);
    });

    it.each([
      ['an unknown product', (f: string) => postBody(f, {}, '1700000000000000001'), 170001011],
      ['a negative cover_timestamp_ms', (f: string) => postBody(f, { cover_timestamp_ms: -1 }), 170001024],
      ['a cover_uri that was never uploaded', (f: string) => postBody(f, { cover_uri: 'tos-x/none' }), 36009004],
      ['an unknown music_id', (f: string) => postBody(f, { music_id: '1' }), 36009004],
      ['a caption over 4,000 UTF-16 units', (f: string) => postBody(f, { title: '😀'.repeat(2001) }), 36009004],
      [
        'a long anchor title',
        (f: string) => ({ ...postBody(f), product_link_info: { product_id: addable().id, title: 'x'.repeat(31) } }),
        16011007,
      ],
    ])('refuses %s', async (_case, body, code) => {
      const err = await upstreamFailure(postVideo(shop(), creator.token, body(await upload())));

      expect(err.failure.officialCode).toBe(code);
    });

    it('takes cover_uri over cover_timestamp_ms when both are sent', async () => {
      const { photo_file } = await uploadPhotoFile(shop(), creator.token, { fileName: 'c.jpg', bytes: jpeg(720, 1280) });

      expect(
        (await postVideo(shop(), creator.token, postBody(await upload(), { cover_uri: photo_file.photo_uri, cover_timestamp_ms: -5 })))
          .video.id,
      ).toBeDefined();
    });

    it('refuses a body without video_info with 36009004 naming the field', async () => {
      const res = await shopCall(ts, 'POST', PATHS.videos, creator.token, {
        json: { product_link_info: { product_id: addable().id, title: 'x' } },
      });

      expect(res.status).toBe(400);
      expectErrorEnvelope(res.body, 36009004, /video_info\.file_id is required/);
    });

    it('refuses the 21st post of a day with 170001062 carrying the quota', async () => {
      const me = await newCreator();
      for (let i = 0; i < 20; i++) await postVideo(shop(), me.token, postBody(await upload(me.token)));
      const err = await upstreamFailure(postVideo(shop(), me.token, postBody(await upload(me.token))));

      expect(err.failure).toMatchObject({ officialCode: 170001062, failureClass: 'quota' });
      expect(err.message).toMatch(/20\/20 per day/);
    });
  });

  describe('l. profile', () => {
    it('describes the creator the token belongs to', async () => {
      const res = await getCreatorProfile(shop(), creator.token);

      expect(res).toEqual({
        avatar: { url: expect.stringContaining('http'), width: 100, height: 100 },
        username: expect.any(String),
        selection_region: 'US',
        register_region: 'US',
        permissions: expect.any(Array),
        user_type: 'TIKTOK_SHOP_CREATOR',
        creator_user_open_id: creator.openId,
      });
    });
  });
});

describe('shop emulator: daily precheck quota', () => {
  let ts: TestSandbox;
  beforeAll(async () => {
    ts = await startTestSandbox();
  });
  afterAll(() => ts.close());

  it('accepts 50 prechecks a day, refuses the 51st with 170001019, and resets the next UTC day', async () => {
    const { openId, tokens } = await ts.account('shop');
    const shop = ts.upstream.shop;
    const fileId = (await uploadVideoFile(shop, tokens.access_token, { fileName: 'v.mp4', bytes: VIDEOS.MP4! })).video_file.id;
    const { products } = await getShopProducts(shop, tokens.access_token, { page_size: 100 });
    const body = {
      video_info: { file_id: fileId },
      product_link_info: { product_id: products.find((p) => p.added_status !== 'REJECTED')!.id, title: 'Anchor' },
    };

    // A day boundary in the middle of the loop would split the count: start just after midnight UTC.
    const now = ts.sandbox.context.clock.now();
    await ts.control('POST', '/_sandbox/clock', { advanceMs: 86_400_000 - (now % 86_400_000) + 1_000 });
    for (let i = 0; i < 50; i++) await submitPrecheck(shop, tokens.access_token, body);
    const err = await upstreamFailure(submitPrecheck(shop, tokens.access_token, body));

    expect(err.failure).toMatchObject({ officialCode: 170001019, failureClass: 'quota', retryable: false });
    expect(await ts.control('GET', `/_sandbox/shop/${openId}/precheck-count`)).toMatchObject({ count: 50, limit: 50 });

    await ts.control('POST', '/_sandbox/clock', { advanceMs: 86_400_000 });
    expect((await submitPrecheck(shop, tokens.access_token, body)).precheck.task_id).toBeDefined();
    expect(await ts.control('GET', `/_sandbox/shop/${openId}/precheck-count`)).toMatchObject({ count: 1 });
  });
});

describe('shop emulator: creator OAuth', () => {
  let ts: TestSandbox;
  const redirectUri = 'https://service.example/oauth/shop/callback?seat=s1';

  beforeAll(async () => {
    ts = await startTestSandbox();
  });
  afterAll(() => ts.close());

  /** Approves on the authorize page as `openId` and returns the redirect's query. */
  async function approve(openId: string, state = 'st-1'): Promise<URL> {
    const form = new URLSearchParams({ app_key: ts.upstream.shop.settings.appKey, state, redirect_uri: redirectUri, open_id: openId });
    const res = await fetch(`${ts.url}/alliance/creator/auth`, { method: 'POST', body: form, redirect: 'manual' });
    expect(res.status).toBe(302);
    return new URL(res.headers.get('location')!);
  }

  function tokenGet(query: Record<string, string>) {
    return fetch(`${ts.url}/api/v2/token/get?${new URLSearchParams(query)}`).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as Envelope,
    }));
  }

  it('shows a form listing the shop sandbox accounts, HTML escaped', async () => {
    await ts.account('shop', { username: 'tricky<b>' });
    const url = authorizePageUrl(`${ts.url}/alliance/creator/auth`, {
      appKey: ts.upstream.shop.settings.appKey,
      state: 'a"b',
      redirectUri,
    });
    const res = await fetch(url);
    const html = await res.text();

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(html).toContain('sandbox-creator-0001');
    expect(html).toContain('@tricky&lt;b&gt;');
    expect(html).not.toContain('tricky<b>');
    expect(html).toContain('value="a&quot;b"');
    expect(html).toMatch(/<form method="post"/);
  });

  it('refuses an unknown app_key or a missing state on the page', async () => {
    const bad = await fetch(`${ts.url}/alliance/creator/auth?app_key=nope&state=s&redirect_uri=${encodeURIComponent(redirectUri)}`);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/Unknown app_key/);
    expect(
      (
        await fetch(
          `${ts.url}/alliance/creator/auth?app_key=${ts.upstream.shop.settings.appKey}&redirect_uri=${encodeURIComponent(redirectUri)}`,
        )
      ).status,
    ).toBe(400);
  });

  it('exchanges the code for tokens with absolute expiry times, once', async () => {
    const location = await approve('sandbox-creator-0001', 'state-42');
    expect(`${location.origin}${location.pathname}`).toBe('https://service.example/oauth/shop/callback');
    expect(location.searchParams.get('state')).toBe('state-42');
    expect(location.searchParams.get('seat')).toBe('s1');
    const code = location.searchParams.get('code')!;

    const tokens = await getAccessToken(ts.upstream.shop, code);
    const now = ts.sandbox.context.clock.nowSeconds();
    expect(tokens).toEqual({
      access_token: expect.any(String),
      access_token_expire_in: expect.any(Number),
      refresh_token: expect.any(String),
      refresh_token_expire_in: expect.any(Number),
      open_id: 'sandbox-creator-0001',
      seller_name: 'Demo Shop Creator',
      seller_base_region: 'US',
      user_type: 1,
      granted_scopes: ['creator.video.write', 'creator.showcase.read', 'creator.affiliate.info'],
    });
    expect(tokens.access_token_expire_in - now).toBeGreaterThanOrEqual(604_800 - 5);
    expect(tokens.access_token_expire_in - now).toBeLessThanOrEqual(604_800);
    expect(tokens.refresh_token_expire_in - now).toBeGreaterThanOrEqual(31_536_000 - 5);
    expect((await getCreatorProfile(ts.upstream.shop, tokens.access_token)).creator_user_open_id).toBe('sandbox-creator-0001');

    const reused = await upstreamFailure(getAccessToken(ts.upstream.shop, code));
    expect(reused.failure).toMatchObject({ officialCode: 36004004, failureClass: 'auth' });
  });

  it('rotates the refresh token on refresh and keeps the authorization period', async () => {
    const first = await getAccessToken(ts.upstream.shop, (await approve('sandbox-creator-0001')).searchParams.get('code')!);
    await ts.control('POST', '/_sandbox/clock', { advanceMs: 60_000 });
    const second = await refreshAccessToken(ts.upstream.shop, first.refresh_token);

    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.refresh_token_expire_in).toBe(first.refresh_token_expire_in);
    expect(second.access_token_expire_in).toBeGreaterThan(first.access_token_expire_in);
    expect(second.open_id).toBe('sandbox-creator-0001');

    const old = await upstreamFailure(refreshAccessToken(ts.upstream.shop, first.refresh_token));
    expect(old.failure.officialCode).toBe(36004005);
    expect(old.message).toBe('can not find related auth record');
    expect((await refreshAccessToken(ts.upstream.shop, second.refresh_token)).open_id).toBe('sandbox-creator-0001');
  });

  it('refuses wrong app credentials and a wrong grant_type with 36009004', async () => {
    const { appKey, appSecret } = ts.upstream.shop.settings;
    const base = { app_key: appKey, app_secret: appSecret, auth_code: 'x', grant_type: 'authorized_code' };

    expectErrorEnvelope((await tokenGet({ ...base, app_key: 'other' })).body, 36009004, /app_key/);
    expectErrorEnvelope((await tokenGet({ ...base, app_secret: 'wrong' })).body, 36009004, /app_secret/);
    expectErrorEnvelope((await tokenGet({ ...base, grant_type: 'authorization_code' })).body, 36009004, /grant_type/);
    const badCode = await tokenGet(base);
    expect(badCode.status).toBe(200);
    expectErrorEnvelope(badCode.body, 36004004);
  });
});
