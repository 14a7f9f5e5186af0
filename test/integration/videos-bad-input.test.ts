/**
 * Whatever a client sends to the video library, the answer is an envelope with a 1xxx or 2xxx
 * code naming what is wrong, never a 5000; an unknown caller learns that first (1001).
 */
import { Track } from '../../gen/vps/seat/v1/seat_pb';
import { call } from '../helpers/http';
import { createBoundSeat, createTenant, startStack, uniqueAccount, type Stack, type Tenant } from '../helpers/stack';
import { mp4Bytes, uploadMultipart } from '../helpers/videos';

describe('video library: bad input', () => {
  let stack: Stack;
  let tenant: Tenant;
  let seatId: string;
  beforeAll(async () => {
    stack = await startStack({ ratePerMinute: 1_000_000 });
    tenant = await createTenant(stack);
    seatId = (await createBoundSeat(stack, tenant, Track.VIDEO, uniqueAccount('biz'))).id;
  });
  afterAll(() => stack.close());

  const json: Array<[string, { body?: string; json?: unknown; contentType?: string }, RegExp]> = [
    ['JSON null', { body: 'null' }, /^body: /],
    ['a JSON array', { body: '[1]' }, /^body: must be object/],
    ['a missing sourceUrl', { json: { seatId: 'x' } }, /^sourceUrl: is required/],
    ['a sourceUrl of the wrong type', { json: { sourceUrl: 1, seatId: 'x' } }, /^sourceUrl: must be string/],
    ['an empty seatId', { json: { sourceUrl: 'https://93.184.215.14/a.mp4', seatId: '' } }, /^seatId: /],
    ['an account over 255 characters', { json: { sourceUrl: 'https://93.184.215.14/a.mp4', account: 'a'.repeat(300) } }, /^account: /],
    ['a sourceUrl over 2048 characters', { json: { sourceUrl: `https://93.184.215.14/${'a'.repeat(2100)}`, seatId: 'x' } }, /^sourceUrl: /],
    ['a prototype-pollution key', { body: '{"sourceUrl":"https://93.184.215.14/","seatId":"x","__proto__":{"a":1}}' }, /./],
    ['a NUL in a field', { body: '{"sourceUrl":"https://93.184.215.14/a\\u0000","seatId":"x"}' }, /^sourceUrl: must not contain the NUL/],
    ['a form body', { body: 'sourceUrl=x', contentType: 'application/x-www-form-urlencoded' }, /Content-Type/],
    ['a body over the size limit', { json: { sourceUrl: 'https://93.184.215.14/', seatId: 'x', pad: 'x'.repeat(1_100_000) } }, /too large/],
  ];

  it.each(json)('refuses %s on POST /v1/videos with 2001, and 1001 for an unknown caller', async (_name, req, message) => {
    const res = await call(stack.baseUrl, 'POST', '/v1/videos', {
      key: tenant.apiKey,
      ...req,
      headers: req.contentType ? { 'content-type': req.contentType } : { 'content-type': 'application/json' },
    });
    expect({ status: res.status, code: res.body.code }).toEqual({ status: 422, code: 2001 });
    expect(res.body.message).toMatch(message);
    const anonymous = await call(stack.baseUrl, 'POST', '/v1/videos', {
      ...req,
      headers: req.contentType ? { 'content-type': req.contentType } : { 'content-type': 'application/json' },
    });
    expect({ status: anonymous.status, code: anonymous.body.code }).toEqual({ status: 401, code: 1001 });
  });

  it('refuses multipart oddities with 2001 naming the field', async () => {
    const file = { name: 'file', value: { fileName: 'x.mp4', bytes: mp4Bytes(2048) } };
    const cases: Array<[Parameters<typeof uploadMultipart>[2], RegExp]> = [
      [[{ name: 'seatId', value: 'x'.repeat(2000) }, file], /^(seatId|body): /],
      [[{ name: 'account', value: 'a'.repeat(300) }, file], /^account: /],
      [[{ name: 'seatId', value: '' }, file], /^seatId: /],
      [[{ name: 'seatId', value: 'a\u0000b' }, file], /^seatId: /],
      [[{ name: '__proto__', value: 'x' }, file], /^(body|seatId): /],
      // The second seatId is refused as given twice, before the limit on fields is reached.
      [[...Array.from({ length: 8 }, (_, i) => ({ name: 'seatId', value: `s${i}` })), file], /^seatId: is given twice/],
      [
        [
          { name: 'seatId', value: seatId },
          { name: 'file', value: { fileName: 'n'.repeat(300), bytes: mp4Bytes(2048) } },
        ],
        /^file: file name must be at most 255/,
      ],
      [
        [
          { name: 'seatId', value: seatId },
          { name: 'file', value: { fileName: 'a\u0000.mp4', bytes: mp4Bytes(2048) } },
        ],
        /^file: /,
      ],
      [
        [
          { name: 'seatId', value: seatId },
          { name: 'file', value: { fileName: 'empty.mp4', bytes: Buffer.alloc(0) } },
        ],
        /^file: is not a recognised video container/,
      ],
    ];
    for (const [parts, message] of cases) {
      const res = await uploadMultipart(stack.baseUrl, tenant.apiKey, parts);
      expect({ message: res.body.message, code: res.body.code, status: res.status }).toEqual({
        message: expect.stringMatching(message),
        code: 2001,
        status: 422,
      });
    }
  });

  it('answers ids and accounts in any script with 1005 or 1007', async () => {
    const file = { name: 'file', value: { fileName: 'vidéo €.mp4', bytes: mp4Bytes(2048) } };
    expect((await uploadMultipart(stack.baseUrl, tenant.apiKey, [{ name: 'seatId', value: 'séat_€' }, file])).body.code).toBe(1005);
    expect((await uploadMultipart(stack.baseUrl, tenant.apiKey, [{ name: 'account', value: 'ünïcødé 🎬' }, file])).body.code).toBe(1007);
    const named = await uploadMultipart<{ fileName: string }>(stack.baseUrl, tenant.apiKey, [{ name: 'seatId', value: seatId }, file]);
    expect(named.body).toMatchObject({ code: 0, data: { fileName: 'vidéo €.mp4' } });
    const remote = await call(stack.baseUrl, 'POST', '/v1/videos', {
      key: tenant.apiKey,
      json: { sourceUrl: 'https://93.184.215.14/vidéo.mp4', account: 'ünïcødé 🎬' },
    });
    expect(remote.body.code).toBe(1007);
  });

  it('refuses bad ids and queries on the other routes with 2001 or 1005, never 5000', async () => {
    const rows: Array<[string, string, number]> = [
      ['GET', '/v1/videos/%00', 2001],
      ['GET', `/v1/videos/${'x'.repeat(80)}`, 1005],
      ['GET', '/v1/videos/%E2%82%AC', 1005],
      ['GET', '/v1/videos/seat_abc', 1005],
      ['DELETE', '/v1/videos/%E2%82%AC', 1005],
      ['DELETE', '/v1/videos/vid_x%00', 2001],
      ['DELETE', '/v1/videos/whatever', 1005],
      ['GET', '/v1/videos?cursor=%00', 2001],
      ['GET', '/v1/videos?seatId=%00', 2001],
      ['GET', '/v1/videos?limit=-1', 2001],
      ['GET', `/v1/videos?cursor=${'z'.repeat(100)}`, 2001],
      ['GET', '/v1/videos?seatId=nonexistent', 0],
      ['PUT', '/v1/videos', 1005],
    ];
    for (const [method, path, code] of rows) {
      const res = await call(stack.baseUrl, method, path, { key: tenant.apiKey });
      expect({ method, path, code: res.body.code }).toEqual({ method, path, code });
    }
    for (const path of [
      '/media/videos/vid_x',
      '/media/videos/%00?expires=1&signature=x',
      `/media/videos/x?expires=${'9'.repeat(30)}&signature=x`,
      '/media/videos/?expires=1&signature=x',
    ]) {
      const res = await fetch(`${stack.baseUrl}${path}`);
      expect({ path, status: res.status, code: ((await res.json()) as { code: number }).code }).toEqual({ path, status: 404, code: 1005 });
    }
  });
});
