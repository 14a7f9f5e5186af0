/**
 * Slow clients, over raw sockets on loopback, against a gateway and core with their timeouts
 * shortened by configuration: a body that stops arriving, headers sent a line at a time and a JSON
 * body trickled in are each answered 408 and their connection closed, on the gateway, on core's
 * Connect port and on a real `vps serve` process and its ops port; an idle kept-alive connection is
 * closed; and an upload that keeps sending, with pauses shorter than the idle timeout, completes
 * however long it takes in all.
 */
import net from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { Track } from '../../gen/vps/seat/v1/seat_pb';
import { freePort } from '../../core/embedded/temporal-dev-server';
import { cleanEnv, spawnVps, type ChildHandle } from '../helpers/processes';
import { createBoundSeat, createTenant, startStack, uniqueAccount, type Stack } from '../helpers/stack';
import { postStream, streamingMultipart } from '../helpers/videos';

const HEADERS_MS = 1_000;
const BODY_IDLE_MS = 1_000;
const REQUEST_MS = 2_000;
const KEEP_ALIVE_MS = 1_000;
/** What the checks may add on a busy 2-core machine: a tenth of the limit, and the event loop's turns. */
const SLACK_MS = 1_500;

interface Exchange {
  /** Everything the server sent before it closed the connection. */
  answer: string;
  /** From the connection until the server closed it. */
  ms: number;
}

/**
 * Opens a connection to `baseUrl`, lets `talk` write on it, and resolves once the server closes it
 * with what it answered; rejects if the connection is still open after `limitMs`.
 */
function exchange(baseUrl: string, talk: (socket: net.Socket) => void, limitMs: number): Promise<Exchange> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let answer = '';
    const socket = net.connect({ host: url.hostname, port: Number(url.port) }, () => talk(socket));
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`still open after ${limitMs} ms; the server had sent: ${JSON.stringify(answer)}`));
    }, limitMs);
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    // A reset after the answer is still the server closing; the answer is what counts.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ answer, ms: performance.now() - started });
    });
  });
}

/** Writes `line` every `everyMs` while the socket is open. */
function trickle(socket: net.Socket, line: string, everyMs: number): void {
  const timer = setInterval(() => {
    if (socket.writable) socket.write(line);
  }, everyMs);
  socket.once('close', () => clearInterval(timer));
}

function envelopeOf(answer: string): { code: number; message: string } {
  return JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { code: number; message: string };
}

function expect408(ex: Exchange, message: RegExp, limitMs: number) {
  expect(ex.answer).toMatch(/^HTTP\/1\.1 408 /);
  expect(ex.answer).toMatch(/\r\nconnection: close\r\n/i);
  expect(envelopeOf(ex.answer)).toEqual({ code: 2001, message: expect.stringMatching(message), data: {} });
  expect(ex.ms).toBeGreaterThanOrEqual(limitMs - 50);
  expect(ex.ms).toBeLessThan(limitMs + SLACK_MS);
}

/** Headers and the first byte of a body of `length` bytes (under the route's limit), then nothing. */
const stalledBody = (path: string, contentType: string, length: number) => (socket: net.Socket) =>
  socket.write(`POST ${path} HTTP/1.1\r\nHost: test\r\nContent-Type: ${contentType}\r\nContent-Length: ${length}\r\n\r\n{`);

describe('timeouts for slow clients', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      httpTimeouts: { headersMs: HEADERS_MS, bodyIdleMs: BODY_IDLE_MS, requestMs: REQUEST_MS, keepAliveMs: KEEP_ALIVE_MS },
    });
  });
  afterAll(() => stack.close());

  it.each([
    ['a JSON route', '/v1/webhook-endpoints', 'application/json', 100],
    ['the video upload', '/v1/videos', 'multipart/form-data; boundary=x', 1024 ** 3],
    ['the photo upload', '/v1/photos', 'multipart/form-data; boundary=x', 5 * 1024 ** 2],
  ])('answers 408 and closes when the body of %s stops after one byte, without a key', async (_what, path, contentType, length) => {
    const ex = await exchange(stack.baseUrl, stalledBody(path, contentType, length), BODY_IDLE_MS + 5_000);
    expect408(ex, /^request: no byte of the body arrived for 1 s; the connection is closed$/, BODY_IDLE_MS);
  });

  it('answers 408 and closes when the headers come a line at a time for longer than the headers timeout', async () => {
    const ex = await exchange(
      stack.baseUrl,
      (socket) => {
        socket.write('GET /v1/seats HTTP/1.1\r\nHost: test\r\n');
        trickle(socket, 'X-Slow: yes\r\n', 200);
      },
      HEADERS_MS + 5_000,
    );
    expect408(ex, /^request: the headers did not arrive within 1 s; the connection is closed$/, HEADERS_MS);
  });

  it('answers 408 when a JSON body keeps trickling in for longer than the request timeout, each byte within the idle timeout', async () => {
    const ex = await exchange(
      stack.baseUrl,
      (socket) => {
        socket.write('POST /v1/webhook-endpoints HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n');
        trickle(socket, ' ', BODY_IDLE_MS / 4);
      },
      REQUEST_MS + 5_000,
    );
    expect408(ex, /^request: the body did not arrive within 2 s; the connection is closed$/, REQUEST_MS);
  });

  it('closes a kept-alive connection left idle for the keep-alive timeout', async () => {
    let answered = 0;
    const ex = await exchange(
      stack.baseUrl,
      (socket) => {
        socket.write('GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n');
        socket.once('data', () => (answered = performance.now()));
      },
      KEEP_ALIVE_MS + 5_000,
    );
    expect(ex.answer).toMatch(/^HTTP\/1\.1 200 /);
    const idle = performance.now() - answered;
    expect(idle).toBeGreaterThanOrEqual(KEEP_ALIVE_MS - 50);
    expect(idle).toBeLessThan(KEEP_ALIVE_MS + SLACK_MS);
  });

  it('completes an upload that pauses shorter than the idle timeout, for longer than the idle and request timeouts in all', async () => {
    const tenant = await createTenant(stack);
    const seat = await createBoundSeat(stack, tenant, Track.VIDEO, uniqueAccount('biz'));
    const mib = 1024 * 1024;
    const pauseMs = (BODY_IDLE_MS * 3) / 5;
    const upload = streamingMultipart({ seatId: seat.id }, 5 * mib, {
      at: [mib, 2 * mib, 3 * mib, 4 * mib],
      onPause: () => delay(pauseMs),
    });
    const started = performance.now();
    const res = await postStream<{ status: string; sizeBytes: number; sha256: string }>(
      `${stack.baseUrl}/v1/videos`,
      tenant.apiKey,
      upload.body,
      upload.contentType,
    );
    expect(performance.now() - started).toBeGreaterThan(REQUEST_MS);
    expect(res.body).toMatchObject({ code: 0, data: { status: 'available', sizeBytes: 5 * mib, sha256: upload.sha256() } });
  });

  it("answers 408 on core's Connect port when a body stops arriving", async () => {
    const ex = await exchange(
      stack.coreUrl,
      stalledBody('/vps.auth.v1.AuthService/Authorize', 'application/json', 100),
      BODY_IDLE_MS + 5_000,
    );
    expect408(ex, /^request: no byte of the body arrived for 1 s/, BODY_IDLE_MS);
  });

  describe('in a real vps serve process', () => {
    let gateway: ChildHandle | undefined;
    afterAll(async () => {
      await gateway?.stop();
    });

    it('takes the timeouts from its configuration, on the public port and on the ops port', async () => {
      const port = await freePort();
      gateway = spawnVps(
        ['serve', '--role', 'gateway'],
        cleanEnv({
          ...stack.mediaEnv,
          CORE_URL: stack.coreUrl,
          PORT: String(port),
          HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_MS),
          HTTP_BODY_IDLE_TIMEOUT_MS: String(BODY_IDLE_MS),
        }),
      );
      const [, ops] = await gateway.waitFor(/Ops\s+(http:\/\/\S+)/);
      await gateway.waitFor(/vps is running/);
      const [body, silent] = await Promise.all([
        exchange(`http://127.0.0.1:${port}`, stalledBody('/v1/webhook-endpoints', 'application/json', 100), BODY_IDLE_MS + 5_000),
        // A connection that never sends a byte is held to the headers timeout too.
        exchange(ops!, () => undefined, HEADERS_MS + 5_000),
      ]);
      expect408(body, /^request: no byte of the body arrived for 1 s/, BODY_IDLE_MS);
      expect(silent.answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(silent.ms).toBeLessThan(HEADERS_MS + SLACK_MS);
    }, 60_000);
  });
});
