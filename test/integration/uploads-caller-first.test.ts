/**
 * Every multipart route knows its caller before it reads a file, over a raw socket: a client sends
 * the fields and the first MiB of a 5 MiB body, then holds the rest; a caller the route refuses (no
 * key, a wrong key, a disabled user, an expired plan, an empty rate limit, an account or seat not
 * theirs, a console session without its CSRF token) is answered while the client still holds the
 * rest, and a caller it accepts is read on, as an upload should be.
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { Track } from '../../gen/vps/seat/v1/seat_pb';
import { call } from '../helpers/http';
import { png } from '../helpers/images';
import { createBoundSeat, createTenant, startStack, uniqueAccount, type Stack, type Tenant } from '../helpers/stack';

const MIB = 1024 * 1024;
/**
 * How long a refusal may take to come back while the client holds the rest: a few database
 * statements and the gateway's second of waiting for more body (settleBody), on a busy machine.
 */
const PROMPTLY_MS = 5_000;

interface Answer {
  status: number;
  headers: string;
  body: { code: number; message: string; data: Record<string, unknown> };
}

/**
 * POSTs a multipart body of `totalBytes` (the fields, then a part `file` of PNG bytes), sends the
 * first `sentBytes` of it and holds the rest. Resolves with the answer the server sent within
 * `waitMs`, or undefined if none came; either way the rest of the body was never sent.
 */
function holdingUpload(
  baseUrl: string,
  path: string,
  headers: Record<string, string>,
  fields: Record<string, string>,
  opts: { totalBytes?: number; sentBytes?: number; waitMs?: number } = {},
): Promise<Answer | undefined> {
  const { totalBytes = 5 * MIB, sentBytes = MIB, waitMs = PROMPTLY_MS } = opts;
  const boundary = `----held-${randomBytes(6).toString('hex')}`;
  let preamble = '';
  for (const [name, value] of Object.entries(fields))
    preamble += `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  preamble += `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cover.png"\r\nContent-Type: image/png\r\n\r\n`;
  const fileHead = png(1080, 1920, sentBytes - preamble.length);
  const head = [
    `POST ${path} HTTP/1.1`,
    `Host: ${new URL(baseUrl).host}`,
    `Content-Type: multipart/form-data; boundary=${boundary}`,
    `Content-Length: ${totalBytes}`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    '',
    '',
  ].join('\r\n');
  const url = new URL(baseUrl);
  return new Promise((resolve) => {
    let received = Buffer.alloc(0);
    const socket = net.connect({ host: url.hostname, port: Number(url.port) }, () => {
      socket.write(head);
      socket.write(preamble);
      socket.write(fileHead);
    });
    const finish = (answer: Answer | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    const timer = setTimeout(() => finish(undefined), waitMs);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      const headText = received.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(headText)?.[1] ?? NaN);
      const body = received.subarray(end + 4);
      if (body.length < length) return;
      finish({
        status: Number(headText.split(' ')[1]),
        headers: headText,
        body: JSON.parse(body.subarray(0, length).toString()) as Answer['body'],
      });
    });
    socket.on('error', () => finish(undefined));
  });
}

/**
 * Sends the head, the fields and the first `sentBytes` of a body of `totalBytes`, waits for the
 * answer, then sends the rest of the body and a second request on the same connection, as a client
 * that writes its whole body before it looks at the answer would. Resolves with both answers'
 * status lines, or with the network error the client got instead.
 */
function answerThenRest(
  baseUrl: string,
  path: string,
  fields: Record<string, string>,
  opts: { totalBytes: number; sentBytes: number },
): Promise<{ first?: string; second?: string; error?: string }> {
  const boundary = `----rest-${randomBytes(6).toString('hex')}`;
  let preamble = '';
  for (const [name, value] of Object.entries(fields))
    preamble += `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  preamble += `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="clip.mp4"\r\n\r\n`;
  const url = new URL(baseUrl);
  const head = [`POST ${path} HTTP/1.1`, `Host: ${url.host}`, `Content-Type: multipart/form-data; boundary=${boundary}`];
  const request = `${head.join('\r\n')}\r\nContent-Length: ${opts.totalBytes}\r\n\r\n`;
  return new Promise((resolve) => {
    const result: { first?: string; second?: string; error?: string } = {};
    let received = Buffer.alloc(0);
    const socket = net.connect({ host: url.hostname, port: Number(url.port) }, () => {
      socket.write(request + preamble);
      socket.write(Buffer.alloc(opts.sentBytes - preamble.length));
    });
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(finish, 20_000);
    /** The first whole answer in `received`, taken off it. */
    const takeAnswer = (): string | undefined => {
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return undefined;
      const headText = received.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(headText)?.[1] ?? 0);
      if (received.length < end + 4 + length) return undefined;
      received = received.subarray(end + 4 + length);
      return headText.split('\r\n')[0];
    };
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (result.first === undefined) {
        result.first = takeAnswer();
        if (result.first === undefined) return;
        const rest = opts.totalBytes - opts.sentBytes;
        for (let sent = 0; sent < rest; sent += MIB) socket.write(Buffer.alloc(Math.min(MIB, rest - sent)));
        socket.write(`GET /healthz HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`);
      }
      result.second = takeAnswer();
      if (result.second !== undefined) finish();
    });
    socket.on('error', (err) => {
      result.error = (err as NodeJS.ErrnoException).code ?? err.message;
      finish();
    });
    socket.on('close', finish);
  });
}

describe('multipart routes know the caller before they read a file', () => {
  let stack: Stack;
  let tenant: Tenant;
  let expired: Tenant;
  let businessId: string;
  let creatorId: string;
  let videoSeatId: string;

  beforeAll(async () => {
    stack = await startStack();
    tenant = await createTenant(stack);
    businessId = uniqueAccount('biz');
    creatorId = uniqueAccount('creator');
    videoSeatId = (await createBoundSeat(stack, tenant, Track.VIDEO, businessId)).id;
    await createBoundSeat(stack, tenant, Track.SHOP, creatorId);
    expired = await createTenant(stack, { planExpiresAt: new Date(Date.now() - 60_000) });
    await createBoundSeat(stack, expired, Track.VIDEO, uniqueAccount('biz'));
  });
  afterAll(() => stack.close());

  /** The routes' names, each with its place in routes(), for the tests run once per route. */
  const ROUTE_NAMES: Array<[string, number]> = [
    ['message media', 0],
    ['photo', 1],
    ['video', 2],
  ];
  const MEDIA = '/v1/vplat/v1.3/business/message/media/upload';
  /** Each route, the fields that name a target of `tenant`, and those that name nobody's. */
  const routes = (): Array<{ path: string; ours: Record<string, string>; nobodys: Record<string, string>; unbound: number }> => [
    { path: MEDIA, ours: { account: businessId }, nobodys: { account: 'biz-nobody' }, unbound: 1007 },
    { path: '/v1/photos', ours: { accountId: creatorId }, nobodys: { accountId: 'creator-nobody' }, unbound: 1007 },
    { path: '/v1/videos', ours: { seatId: videoSeatId }, nobodys: { seatId: 'seat_nobody' }, unbound: 1005 },
  ];

  it.each(ROUTE_NAMES)(
    'answers the %s upload without a key, with a wrong key and with a doubled Bearer before reading the file (1001)',
    async (_name, i) => {
      const route = routes()[i]!;
      for (const authorization of [undefined, 'Bearer vps_not_a_key_of_ours', `Bearer Bearer ${tenant.apiKey}`]) {
        const answer = await holdingUpload(stack.baseUrl, route.path, authorization ? { authorization } : {}, route.ours);
        expect(answer).toMatchObject({ status: 401, body: { code: 1001 } });
      }
    },
  );

  it.each(ROUTE_NAMES)(
    'answers the %s upload whose file comes before its fields without a key before reading the file (1001)',
    async (_name, i) => {
      const route = routes()[i]!;
      expect(await holdingUpload(stack.baseUrl, route.path, {}, {})).toMatchObject({ status: 401, body: { code: 1001 } });
    },
  );

  it.each(ROUTE_NAMES)(
    'answers the %s upload for an account or seat that is not the caller’s before reading the file',
    async (_name, i) => {
      const route = routes()[i]!;
      const answer = await holdingUpload(stack.baseUrl, route.path, { authorization: `Bearer ${tenant.apiKey}` }, route.nobodys);
      expect(answer).toMatchObject({ body: { code: route.unbound } });
    },
  );

  it.each(ROUTE_NAMES)(
    'lets a client that sends its whole %s upload before reading read the refusal, and keeps the connection',
    async (_name, i) => {
      const route = routes()[i]!;
      // Within the drain size, sent whole: read to its end, then answered.
      expect(await answerThenRest(stack.baseUrl, route.path, route.nobodys, { totalBytes: 64 * 1024, sentBytes: 64 * 1024 })).toEqual({
        first: expect.stringMatching(/^HTTP\/1.1 401 /),
        second: 'HTTP/1.1 200 OK',
      });
      // Within the drain size, but held: answered once the client pauses, and read on.
      expect(await answerThenRest(stack.baseUrl, route.path, route.nobodys, { totalBytes: 5 * MIB, sentBytes: MIB })).toEqual({
        first: expect.stringMatching(/^HTTP\/1.1 401 /),
        second: 'HTTP/1.1 200 OK',
      });
      // Beyond the drain size: answered at once, and read on while the client sends.
      expect(await answerThenRest(stack.baseUrl, route.path, route.nobodys, { totalBytes: 40 * MIB, sentBytes: MIB })).toEqual({
        first: expect.stringMatching(/^HTTP\/1.1 401 /),
        second: 'HTTP/1.1 200 OK',
      });
    },
  );

  it('answers an upload with an expired plan (1003) and of a disabled user (1002) before reading the file', async () => {
    const answer = await holdingUpload(stack.baseUrl, MEDIA, { authorization: `Bearer ${expired.apiKey}` }, { account: businessId });
    expect(answer).toMatchObject({ status: 403, body: { code: 1003 } });
    const disabled = await createTenant(stack);
    const account = uniqueAccount('biz');
    await createBoundSeat(stack, disabled, Track.VIDEO, account);
    await stack.admin.setUserDisabled({ userId: disabled.userId, disabled: true });
    for (const [path, fields] of [
      [MEDIA, { account }],
      ['/v1/photos', { accountId: account }],
    ] as const) {
      expect(await holdingUpload(stack.baseUrl, path, { authorization: `Bearer ${disabled.apiKey}` }, fields)).toMatchObject({
        status: 403,
        body: { code: 1002 },
      });
    }
  });

  it('answers an upload whose rate limit is spent with 2002 and Retry-After before reading the file', async () => {
    const spent = await createTenant(stack);
    const account = uniqueAccount('creator');
    await createBoundSeat(stack, spent, Track.SHOP, account);
    for (let i = 0; i < 80; i++) {
      if ((await call(stack.baseUrl, 'GET', '/v1/seats', { key: spent.apiKey })).body.code === 2002) break;
    }
    const answer = await holdingUpload(stack.baseUrl, '/v1/photos', { authorization: `Bearer ${spent.apiKey}` }, { accountId: account });
    expect(answer).toMatchObject({ status: 429, body: { code: 2002 } });
    expect(answer!.headers).toMatch(/\r\nretry-after: \d+\r\n/i);
  });

  it('answers a console session without its CSRF token before reading the file, and reads on for one with it', async () => {
    const password = 'correct horse battery staple';
    await stack.admin.setUserPassword({ userId: tenant.userId, password });
    const signIn = await call<{ csrfToken: string }>(stack.baseUrl, 'POST', '/console/api/session', {
      json: { email: `user-${tenant.customerId}@example.com`, password },
    });
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
    const noCsrf = await holdingUpload(stack.baseUrl, '/v1/photos', { cookie }, { accountId: creatorId });
    expect(noCsrf).toMatchObject({ status: 401, body: { code: 1001, message: expect.stringMatching(/X-CSRF-Token/) } });
    const accepted = await holdingUpload(
      stack.baseUrl,
      '/v1/photos',
      { cookie, 'x-csrf-token': signIn.body.data.csrfToken },
      { accountId: creatorId },
      { waitMs: 1_000 },
    );
    expect(accepted).toBeUndefined();
  });

  it.each(ROUTE_NAMES)('reads on, answering nothing yet, while the %s upload of a caller it accepts is still coming', async (_name, i) => {
    const route = routes()[i]!;
    const answer = await holdingUpload(stack.baseUrl, route.path, { authorization: `Bearer ${tenant.apiKey}` }, route.ours, {
      waitMs: 1_000,
    });
    expect(answer).toBeUndefined();
  });
});
