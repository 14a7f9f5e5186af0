/**
 * What a push reads of a receiver's answer, over real HTTP with a real worker: a receiver that
 * answers with 32 MiB, or without end, or with characters Postgres cannot hold, gets its attempt
 * recorded promptly with its status and the start of its answer, and the worker reads no more of
 * it than MAX_REPLY_BYTES before closing the connection.
 */
import { MAX_REPLY_BYTES } from '../../activities/webhook-push';
import type { RunningWorker } from '../../worker/worker';
import { call } from '../helpers/http';
import { eventually, startReplyingReceiver, type ReplyingReceiver } from '../helpers/receivers';
import { createTenant, startStack, startStackWorker, TEST_DELIVERY, unreachableUpstream, type Stack } from '../helpers/stack';

interface AttemptJson {
  attempt: number;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
}
interface DeliveryJson {
  id: string;
  status: string;
  attempts: AttemptJson[];
}

/** These tests poll the API while workflows run; the rate limit has tests of its own. */
const POLLING_RATE = 1_000_000;
const MiB = 1024 * 1024;

/**
 * Far less than the answers sent, far more than the worker reads: what the loopback socket
 * buffers on both sides may hold before the worker's close reaches the receiver.
 */
const MOST_A_CLOSED_CONNECTION_TAKES = 16 * MiB;

describe('webhook push: the receiver answer read', () => {
  const taskQueue = `vps-webhook-replies-${process.pid}-${Date.now()}`;
  const upstream = unreachableUpstream();
  let stack: Stack;
  let worker: RunningWorker;
  const receivers: ReplyingReceiver[] = [];

  beforeAll(async () => {
    stack = await startStack({ taskQueue, allowInsecureWebhookUrls: true, ratePerMinute: POLLING_RATE });
    worker = await startStackWorker(stack, taskQueue, upstream);
  }, 120_000);
  afterAll(async () => {
    await worker?.stop();
    await stack?.close();
    await upstream.close();
    await Promise.all(receivers.map((r) => r.close()));
  });

  /** Sends a test event to a new endpoint at the receiver and returns its delivery once an attempt ended. */
  async function pushTo(receiver: ReplyingReceiver): Promise<AttemptJson> {
    receivers.push(receiver);
    const tenant = await createTenant(stack);
    const created = await call<{ id: string }>(stack.baseUrl, 'POST', '/v1/webhook-endpoints', {
      key: tenant.apiKey,
      json: { url: receiver.url, eventTypes: ['*'] },
    });
    expect(created.body.code).toBe(0);
    const sent = await call<{ delivery: DeliveryJson }>(stack.baseUrl, 'POST', `/v1/webhook-endpoints/${created.body.data.id}/test`, {
      key: tenant.apiKey,
    });
    expect(sent.body.code).toBe(0);
    const log = await eventually(
      async () =>
        (
          await call<{ items: DeliveryJson[] }>(stack.baseUrl, 'GET', `/v1/webhook-endpoints/${created.body.data.id}/deliveries`, {
            key: tenant.apiKey,
          })
        ).body.data.items,
      (items) => (items[0]?.attempts.length ?? 0) > 0,
    );
    return log[0]!.attempts[0]!;
  }

  it('reads 4 KiB of a 32 MiB answer, closes the connection, and records the status with the start of the answer', async () => {
    const receiver = await startReplyingReceiver({ status: 500, chunk: Buffer.alloc(64 * 1024, 'x'), totalBytes: 32 * MiB });

    const attempt = await pushTo(receiver);

    expect(attempt.statusCode).toBe(500);
    expect(attempt.error).toBe(`HTTP 500: ${'x'.repeat(200)}`);
    const [reply] = await receiver.waitForReplies(1);
    expect(reply!.cutOff).toBe(true);
    expect(reply!.sent).toBeLessThan(MOST_A_CLOSED_CONNECTION_TAKES);
    expect(MAX_REPLY_BYTES).toBe(4096);
  });

  it('closes an answer without end at once, whatever its status', async () => {
    const receiver = await startReplyingReceiver({ status: 200, chunk: Buffer.alloc(64 * 1024, 'y'), totalBytes: 'endless' });

    const attempt = await pushTo(receiver);

    expect(attempt).toMatchObject({ statusCode: 200, error: null });
    const [reply] = await receiver.waitForReplies(1);
    expect(reply!.cutOff).toBe(true);
    expect(reply!.sent).toBeLessThan(MOST_A_CLOSED_CONNECTION_TAKES);
    // Promptly: long before the attempt's timeout, which would otherwise have ended it.
    expect(reply!.endedAt - reply!.startedAt).toBeLessThan(TEST_DELIVERY.attemptTimeoutMs / 2);
  });

  it('ends at the attempt timeout an answer whose body trickles forever, keeping what had arrived', async () => {
    const receiver = await startReplyingReceiver({ status: 503, chunk: Buffer.from('z'), totalBytes: 'endless', everyMs: 50 });

    const attempt = await pushTo(receiver);

    expect(attempt.statusCode).toBe(503);
    expect(attempt.durationMs).toBeGreaterThanOrEqual(TEST_DELIVERY.attemptTimeoutMs - 50);
    expect(attempt.durationMs).toBeLessThan(TEST_DELIVERY.attemptTimeoutMs + 1_500);
    expect(attempt.error).toMatch(
      new RegExp(`^HTTP 503: z+ \\(answer broken off: the attempt's ${TEST_DELIVERY.attemptTimeoutMs} ms ran out\\)$`),
    );
    const [reply] = await receiver.waitForReplies(1);
    expect(reply!.cutOff).toBe(true);
  });

  it('records an answer holding characters Postgres cannot store (a NUL, a pair split by the cut)', async () => {
    // 199 characters, then an emoji (two UTF-16 units) that the 200-character cut splits.
    const text = `${'a'.repeat(99)}\u0000${'b'.repeat(99)}😀 and more`;
    const receiver = await startReplyingReceiver({ status: 400, chunk: Buffer.from(text), totalBytes: Buffer.byteLength(text) });

    const attempt = await pushTo(receiver);

    expect(attempt.statusCode).toBe(400);
    expect(attempt.error).toBe(`HTTP 400: ${'a'.repeat(99)}\ufffd${'b'.repeat(99)}\ufffd`);
  });
});
