import { createHmac } from 'node:crypto';
import { FormData, type OfficialRequest, type UpstreamHttp } from '../../core/upstream/http';
import { ShopClient } from '../../core/upstream/shop/client';
import { signShopRequest } from '../../core/upstream/shop/signing';
import { shopSignature } from '../../sandbox/shop-signature';

const SECRET = 'test-secret';
const PATH = '/affiliate_creator/202607/videos';
const BODY = '{"video_info":{"file_id":"f1"}}';

/** The documented steps, written out by hand rather than calling either implementation. */
function documentedSign(secret: string, path: string, sortedPairs: Array<[string, string]>, body: string): string {
  const concatenated = sortedPairs.map(([k, v]) => k + v).join('');
  return createHmac('sha256', secret).update(`${secret}${path}${concatenated}${body}${secret}`).digest('hex');
}

/** A transport that records what the client would send. */
function recordingClient(now = 1_700_000_000) {
  const sent: OfficialRequest[] = [];
  const http = { call: async (req: OfficialRequest) => (sent.push(req), {}) } as unknown as UpstreamHttp;
  const client = new ShopClient(
    http,
    { baseUrl: 'http://shop.test', authBaseUrl: 'http://auth.test', appKey: 'test-key', appSecret: SECRET },
    () => now,
  );
  return { client, sent };
}

describe('signShopRequest', () => {
  it('matches a vector computed outside the code base (openssl) for a JSON POST', () => {
    // printf '%s' 'test-secret/affiliate_creator/202607/videosapp_keytest-keyb2timestamp1700000000{"video_info":{"file_id":"f1"}}test-secret'
    //   | openssl dgst -sha256 -hmac test-secret
    const query = { timestamp: '1700000000', b: '2', app_key: 'test-key' };

    expect(signShopRequest(SECRET, PATH, query, BODY)).toBe('2b399f2ccb71a1d44768fa3a904f934b8279ab519c45b2d3de76244e97cb3ac9');
  });

  it('follows the documented steps: sorted key+value pairs behind the path, the body, the secret on both sides', () => {
    const query = { timestamp: '1700000123', page_size: '20', app_key: 'k', title_keyword: 'mug' };
    const expected = documentedSign(
      SECRET,
      '/affiliate_creator/202509/shop_products',
      [
        ['app_key', 'k'],
        ['page_size', '20'],
        ['timestamp', '1700000123'],
        ['title_keyword', 'mug'],
      ],
      '',
    );

    expect(signShopRequest(SECRET, '/affiliate_creator/202509/shop_products', query)).toBe(expected);
  });

  it('sorts the keys, so the order they were added in does not matter', () => {
    const a = signShopRequest(SECRET, PATH, { app_key: 'k', timestamp: '1', z: '9', a: '0' });
    const b = signShopRequest(SECRET, PATH, { z: '9', timestamp: '1', a: '0', app_key: 'k' });

    expect(a).toBe(b);
    expect(a).toBe(
      documentedSign(
        SECRET,
        PATH,
        [
          ['a', '0'],
          ['app_key', 'k'],
          ['timestamp', '1'],
          ['z', '9'],
        ],
        '',
      ),
    );
  });

  it('leaves sign and access_token out of the signed text', () => {
    const plain = signShopRequest(SECRET, PATH, { app_key: 'k', timestamp: '1' });

    expect(signShopRequest(SECRET, PATH, { app_key: 'k', timestamp: '1', sign: 'anything', access_token: 'tok' })).toBe(plain);
  });

  it('appends the body exactly as sent: any change to it changes the signature', () => {
    const query = { app_key: 'k', timestamp: '1' };
    const withBody = signShopRequest(SECRET, PATH, query, BODY);

    expect(withBody).toBe(
      documentedSign(
        SECRET,
        PATH,
        [
          ['app_key', 'k'],
          ['timestamp', '1'],
        ],
        BODY,
      ),
    );
    expect(withBody).not.toBe(signShopRequest(SECRET, PATH, query));
    expect(withBody).not.toBe(signShopRequest(SECRET, PATH, query, BODY.replace(':', ': ')));
  });

  it("agrees with the emulator's independent implementation", () => {
    const query = { app_key: 'k', timestamp: '1700000000', keyword: 'summer beat', page_size: '3', search_id: 'S1' };

    expect(signShopRequest(SECRET, PATH, query, BODY)).toBe(shopSignature(SECRET, PATH, query, BODY));
    expect(signShopRequest(SECRET, PATH, query)).toBe(shopSignature(SECRET, PATH, query, undefined));
  });
});

describe('ShopClient signing', () => {
  it('signs a JSON POST over the exact text it sends', async () => {
    const { client, sent } = recordingClient();
    await client.post(PATH, 'tok', { video_info: { file_id: 'f1' } });
    const req = sent[0]!;

    expect(req.body).toBe(BODY);
    expect(req.query).toEqual({ app_key: 'test-key', timestamp: '1700000000', sign: expect.any(String) });
    expect(req.query!.sign).toBe(
      documentedSign(
        SECRET,
        PATH,
        [
          ['app_key', 'test-key'],
          ['timestamp', '1700000000'],
        ],
        BODY,
      ),
    );
    expect(req.headers).toEqual({ 'x-tts-access-token': 'tok' });
  });

  it('leaves a multipart body out of the signature', async () => {
    const { client, sent } = recordingClient();
    const form = new FormData();
    form.append('data', new Blob([Buffer.from('0000ftypisom')]), 'v.mp4');
    await client.upload('/affiliate_creator/202505/videos/video_files', 'tok', form);

    // printf '%s' 'test-secret/affiliate_creator/202505/videos/video_filesapp_keytest-keytimestamp1700000000test-secret'
    //   | openssl dgst -sha256 -hmac test-secret
    expect(sent[0]!.query!.sign).toBe('d4913794b6dc15802aec370a7aa586cc1a2bec85692e80b0d319771c9c07e0db');
  });

  it('signs GET parameters and never sends undefined ones', async () => {
    const { client, sent } = recordingClient();
    await client.get('/affiliate_creator/202509/shop_products', 'tok', { page_size: '5', page_token: undefined });
    const query = sent[0]!.query!;

    expect(Object.keys(query).sort()).toEqual(['app_key', 'page_size', 'sign', 'timestamp']);
    expect(query.sign).toBe(
      documentedSign(
        SECRET,
        '/affiliate_creator/202509/shop_products',
        [
          ['app_key', 'test-key'],
          ['page_size', '5'],
          ['timestamp', '1700000000'],
        ],
        '',
      ),
    );
  });
});
