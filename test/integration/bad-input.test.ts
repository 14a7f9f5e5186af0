import http from 'node:http';
import net from 'node:net';
import { call } from '../helpers/http';
import { createTenant, startStack, type Stack, type Tenant } from '../helpers/stack';

interface Row {
  name: string;
  method?: string;
  path?: string;
  /** A raw body, sent as is. */
  body?: string;
  json?: unknown;
  contentType?: string;
  /** Leave out the API key (or send this header instead). */
  authorization?: string;
  status: number;
  code: number;
  message?: RegExp;
}

const HOOKS = '/v1/webhook-endpoints';
const valid = { url: 'https://93.184.215.14/hook', eventTypes: ['vplat.*'] };

const rows: Row[] = [
  { name: 'malformed JSON', body: '{"url": ', status: 422, code: 2001, message: /^body: malformed JSON/ },
  { name: 'a JSON array instead of an object', body: '[1,2]', status: 422, code: 2001, message: /^body: must be object/ },
  { name: 'JSON null', body: 'null', status: 422, code: 2001 },
  { name: 'an empty JSON body', body: '', status: 422, code: 2001, message: /^body: empty/ },
  { name: 'a missing url', json: { eventTypes: ['*'] }, status: 422, code: 2001, message: /^url: is required/ },
  { name: 'a url of the wrong type', json: { url: 42, eventTypes: ['*'] }, status: 422, code: 2001, message: /^url: must be string/ },
  {
    name: 'eventTypes not an array',
    json: { url: valid.url, eventTypes: '*' },
    status: 422,
    code: 2001,
    message: /^eventTypes: must be array/,
  },
  { name: 'eventTypes empty', json: { url: valid.url, eventTypes: [] }, status: 422, code: 2001, message: /^eventTypes: / },
  {
    name: 'an event type of the wrong type',
    json: { url: valid.url, eventTypes: [7] },
    status: 422,
    code: 2001,
    message: /^eventTypes\[0\]: must be string/,
  },
  {
    name: 'an unknown event type',
    json: { url: valid.url, eventTypes: ['vplat.nothing'] },
    status: 422,
    code: 2001,
    message: /^eventTypes: unknown event type/,
  },
  { name: 'an unknown field', json: { ...valid, colour: 'blue' }, status: 422, code: 2001, message: /^colour: is not a known field/ },
  {
    name: 'a prototype-pollution key',
    body: '{"url":"https://93.184.215.14/","eventTypes":["*"],"__proto__":{"x":1}}',
    status: 422,
    code: 2001,
  },
  { name: 'an http URL', json: { ...valid, url: 'http://93.184.215.14/hook' }, status: 422, code: 2001, message: /^url: must use https/ },
  { name: 'not a URL', json: { ...valid, url: 'hello' }, status: 422, code: 2001, message: /^url: must be an absolute URL/ },
  { name: 'a loopback URL', json: { ...valid, url: 'https://127.0.0.1/hook' }, status: 422, code: 2001, message: /public address/ },
  { name: 'an IPv6 loopback URL', json: { ...valid, url: 'https://[::1]/hook' }, status: 422, code: 2001, message: /public address/ },
  { name: 'a private URL', json: { ...valid, url: 'https://192.168.1.10/hook' }, status: 422, code: 2001, message: /public address/ },
  {
    name: 'the metadata address',
    json: { ...valid, url: 'https://169.254.169.254/latest' },
    status: 422,
    code: 2001,
    message: /public address/,
  },
  {
    name: 'credentials in the URL',
    json: { ...valid, url: 'https://u:p@93.184.215.14/' },
    status: 422,
    code: 2001,
    message: /credentials/,
  },
  {
    name: 'a URL longer than 2048 characters',
    json: { ...valid, url: `https://93.184.215.14/${'a'.repeat(2100)}` },
    status: 422,
    code: 2001,
    message: /^url: /,
  },
  { name: 'a text/plain body', body: 'url=x', contentType: 'text/plain', status: 422, code: 2001, message: /Content-Type/ },
  {
    name: 'a form body',
    body: 'url=x',
    contentType: 'application/x-www-form-urlencoded',
    status: 422,
    code: 2001,
    message: /Content-Type/,
  },
  {
    name: 'a body over the size limit',
    body: JSON.stringify({ ...valid, pad: 'x'.repeat(1_100_000) }),
    status: 422,
    code: 2001,
    message: /too large/,
  },
  { name: 'malformed JSON from an unknown caller (authentication first)', body: '{oops', authorization: '', status: 401, code: 1001 },
  { name: 'a valid body with a doubled Bearer prefix', json: valid, authorization: 'double', status: 401, code: 1001 },
  {
    name: 'an unknown route',
    method: 'GET',
    path: '/v1/nothing-here',
    status: 404,
    code: 1005,
    message: /no route GET \/v1\/nothing-here/,
  },
  { name: 'an unsupported method on a known path', method: 'PUT', path: '/v1/seats', json: {}, status: 404, code: 1005 },
  { name: 'a path outside /v1', method: 'GET', path: '/v2/seats', status: 404, code: 1005 },
  {
    name: 'an empty body with a JSON content type on DELETE (accepted: the route takes none)',
    method: 'DELETE',
    path: `${HOOKS}/we_missing`,
    body: '',
    status: 404,
    code: 1005,
  },
  { name: 'deleting an endpoint that does not exist', method: 'DELETE', path: `${HOOKS}/we_doesnotexist`, status: 404, code: 1005 },
  { name: 'a malformed percent-encoding in a path parameter', method: 'DELETE', path: `${HOOKS}/%E0%A4%A`, status: 422, code: 2001 },
  { name: 'a non-ASCII endpoint id', method: 'DELETE', path: `${HOOKS}/%E2%82%AC`, status: 404, code: 1005 },
  {
    name: 'a NUL character in a path parameter',
    method: 'DELETE',
    path: `${HOOKS}/we%00x`,
    status: 422,
    code: 2001,
    message: /^id: must not contain the NUL/,
  },
  {
    name: 'a NUL character in a body field',
    body: '{"url":"https://93.184.215.14/a\\u0000b","eventTypes":["*"]}',
    status: 422,
    code: 2001,
    message: /^url: must not contain the NUL/,
  },
  {
    name: 'a NUL character in an array item',
    json: { url: 'https://93.184.215.14/', eventTypes: ['*', 'x\u0000'] },
    status: 422,
    code: 2001,
    message: /^eventTypes\[1\]: must not contain the NUL/,
  },
  {
    name: 'an endpoint id longer than 64 characters (unknown, like any other id)',
    method: 'DELETE',
    path: `${HOOKS}/${'x'.repeat(80)}`,
    status: 404,
    code: 1005,
    message: /^path parameter id: .*no such resource/,
  },
  { name: 'a video id longer than the id format allows', method: 'GET', path: `/v1/videos/vid_${'x'.repeat(80)}`, status: 404, code: 1005 },
  { name: 'a video id longer than the router takes', method: 'GET', path: `/v1/videos/vid_${'x'.repeat(300)}`, status: 404, code: 1005 },
  { name: 'an event id longer than the id format allows', method: 'GET', path: `/v1/events/${'e'.repeat(65)}`, status: 404, code: 1005 },
];

describe('bad input: every malformed request gets its envelope code, never 5000', () => {
  let stack: Stack;
  let tenant: Tenant;
  beforeAll(async () => {
    stack = await startStack({ ratePerMinute: 10_000 });
    tenant = await createTenant(stack);
  });
  afterAll(() => stack.close());

  it.each(rows.map((r) => [r.name, r] as const))('%s', async (_name, row) => {
    const headers: Record<string, string> = {};
    if (row.contentType) headers['content-type'] = row.contentType;
    else if (row.body !== undefined) headers['content-type'] = 'application/json';
    const authorization = row.authorization === 'double' ? `Bearer Bearer ${tenant.apiKey}` : row.authorization;
    const res = await call(stack.baseUrl, row.method ?? 'POST', row.path ?? HOOKS, {
      key: tenant.apiKey,
      ...(authorization !== undefined ? { authorization } : {}),
      ...(row.json !== undefined ? { json: row.json } : {}),
      ...(row.body !== undefined ? { body: row.body } : {}),
      headers,
    });
    expect({ status: res.status, code: res.body.code }).toEqual({ status: row.status, code: row.code });
    if (row.message) expect(res.body.message).toMatch(row.message);
    expect(res.body.data).toEqual(expect.any(Object));
    expect(Array.isArray(res.body.data)).toBe(false);
  });

  it('answers 1001 to an Authorization header with non-ASCII bytes', async () => {
    const { status, body } = await rawRequest(stack.baseUrl, { authorization: 'Bearer vps_\u00e9\u00e9' });
    expect(status).toBe(401);
    expect(JSON.parse(body).code).toBe(1001);
  });

  it('answers a request too broken for HTTP parsing with an envelope', async () => {
    const response = await rawSocket(stack.baseUrl, 'GET /v1/seats HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n');
    expect(response).toMatch(/^HTTP\/1\.1 422/);
    expect(JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4))).toMatchObject({ code: 2001, data: {} });
  });

  it('answers oversized headers with an envelope', async () => {
    const response = await rawSocket(stack.baseUrl, `GET /v1/seats HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(70_000)}\r\n\r\n`);
    expect(response).toMatch(/^HTTP\/1\.1 422/);
    expect(response).toContain('"code":2001');
  });

  it('still serves the same caller normally afterwards', async () => {
    const created = await call(stack.baseUrl, 'POST', HOOKS, { key: tenant.apiKey, json: valid });
    expect(created.body.code).toBe(0);
    expect(created.body.data).toMatchObject({ url: valid.url, eventTypes: ['vplat.*'], secret: expect.stringMatching(/^whsec_/) });
  });
});

function rawRequest(baseUrl: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const url = new URL('/v1/seats', baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'GET', headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

function rawSocket(baseUrl: string, payload: string): Promise<string> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: url.hostname, port: Number(url.port) }, () => socket.write(payload));
    let data = '';
    socket.on('data', (c: Buffer) => (data += c.toString()));
    socket.on('end', () => resolve(data));
    socket.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' && data ? resolve(data) : reject(err)));
  });
}
