/**
 * Verifying real pushes as an integrator does: an endpoint on loopback receives a push from the
 * running stack (a test event sent through the API, delivered by a real worker) and checks it with
 * the SDK's verifyWebhookSignature before answering. The same push is also checked with Stripe's
 * own `stripe.webhooks.constructEvent`, given the hex SHA-256 of the endpoint secret as its
 * secret: the spec's header and signed payload are Stripe's, with that derived key. Then during a
 * secret rotation (two v1 values), and with a changed body and an old timestamp.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import type { RunningWorker } from '../../worker/worker';
import type { Upstream } from '../../core/upstream';
import {
  createVpsClient,
  MalformedSignatureHeaderError,
  MissingSignatureHeaderError,
  SIGNATURE_HEADER,
  SignatureMismatchError,
  SignatureTimestampError,
  verifyWebhookSignature,
  WebhookSignatureError,
  type VpsClient,
} from '../../sdk';
import { call } from '../helpers/http';
import { eventually } from '../helpers/receivers';
import { createTenant, startStack, startStackWorker, unreachableUpstream, type Stack } from '../helpers/stack';

/** These tests poll the delivery log while workflows run; the rate limit has tests of its own. */
const POLLING_RATE = 1_000_000;

interface VerifiedPush {
  header: string;
  body: string;
  /** When it arrived, to move "now" past the replay window from there. */
  receivedAt: Date;
  /** What the receiver's own check said: 'ok' or the WebhookSignatureError's reason. */
  outcome: string;
}

/**
 * A receiver as an integrator writes one: it reads the raw body, verifies it with the SDK against
 * the secret it holds, answers 400 with the reason when that fails, and 200 otherwise.
 */
async function startVerifyingReceiver(): Promise<{
  url: string;
  pushes: VerifiedPush[];
  useSecret(secret: string): void;
  close(): Promise<void>;
}> {
  const pushes: VerifiedPush[] = [];
  let secret = '';
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let outcome = 'ok';
      try {
        verifyWebhookSignature(raw, req.headers[SIGNATURE_HEADER], secret);
      } catch (err) {
        if (!(err instanceof WebhookSignatureError)) throw err;
        outcome = err.reason;
      }
      pushes.push({ header: String(req.headers[SIGNATURE_HEADER]), body: raw.toString('utf8'), receivedAt: new Date(), outcome });
      res.writeHead(outcome === 'ok' ? 200 : 400, { 'content-type': 'text/plain' }).end(outcome);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/vps`,
    pushes,
    useSecret: (s) => {
      secret = s;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** The secret Stripe's verifier takes for one of ours: spec step 3's derived key, as text. */
const stripeSecretFor = (secret: string) => createHash('sha256').update(secret).digest('hex');

describe('verifying real pushes with the SDK and with Stripe’s verifier', () => {
  const taskQueue = `vps-signature-${process.pid}-${Date.now()}`;
  const stripe = new Stripe('sk_test_not_used_for_any_request');
  let stack: Stack;
  let upstream: Upstream;
  let worker: RunningWorker;
  let receiver: Awaited<ReturnType<typeof startVerifyingReceiver>>;
  let client: VpsClient;
  let apiKey: string;

  beforeAll(async () => {
    stack = await startStack({ taskQueue, allowInsecureWebhookUrls: true, ratePerMinute: POLLING_RATE });
    upstream = unreachableUpstream();
    worker = await startStackWorker(stack, taskQueue, upstream);
    receiver = await startVerifyingReceiver();
    const tenant = await createTenant(stack);
    apiKey = tenant.apiKey;
    client = createVpsClient({ baseUrl: stack.baseUrl, apiKey });
  }, 120_000);
  afterAll(async () => {
    await worker?.stop();
    await stack?.close();
    await upstream?.close();
    await receiver?.close();
  });

  /** Sends a test event to the endpoint and waits for its push and its delivery's end. */
  async function deliver(endpointId: string): Promise<{ push: VerifiedPush; status: string; statusCode: number | null }> {
    const before = receiver.pushes.length;
    const { event, delivery } = await client.webhooks.test({ params: { id: endpointId } });
    const page = await eventually(
      () => client.webhooks.deliveries({ params: { id: endpointId } }),
      (p) => p.items.some((d) => d.id === delivery.id && d.status !== 'pending'),
      20_000,
    );
    const done = page.items.find((d) => d.id === delivery.id)!;
    const push = receiver.pushes.slice(before).find((p) => p.body.includes(event.id));
    expect(push).toBeDefined();
    return { push: push!, status: done.status, statusCode: done.attempts[done.attempts.length - 1]?.statusCode ?? null };
  }

  it('accepts a real push with the SDK in the receiver, and with Stripe’s constructEvent given the derived secret', async () => {
    const created = await client.webhooks.create({ body: { url: receiver.url, eventTypes: ['*'] } });
    receiver.useSecret(created.secret);

    const { push, status, statusCode } = await deliver(created.id);
    // The receiver's own verification answered 200, so the delivery log shows success.
    expect(push.outcome).toBe('ok');
    expect([status, statusCode]).toEqual(['succeeded', 200]);
    expect(push.header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);

    const event = stripe.webhooks.constructEvent(push.body, push.header, stripeSecretFor(created.secret));
    expect(event).toEqual(JSON.parse(push.body));
    expect(event).toMatchObject({ type: 'service.endpoint.test' });
    // The endpoint secret itself is not Stripe's key: the derivation (spec step 3) is what makes it fit.
    expect(() => stripe.webhooks.constructEvent(push.body, push.header, created.secret)).toThrow(
      Stripe.errors.StripeSignatureVerificationError,
    );
  });

  it('accepts a push signed during a rotation with the new secret and with the old one, in both verifiers', async () => {
    const created = await client.webhooks.create({ body: { url: receiver.url, eventTypes: ['*'] } });
    // The receiver still holds the old secret, as it would between the rotation and its own deploy.
    receiver.useSecret(created.secret);
    const rotated = await client.webhooks.rotateSecret({ params: { id: created.id } });
    expect(rotated.secret).not.toBe(created.secret);

    const { push, status } = await deliver(created.id);
    expect(push.header.split(',').filter((p) => p.startsWith('v1='))).toHaveLength(2);
    expect([push.outcome, status]).toEqual(['ok', 'succeeded']);

    for (const secret of [rotated.secret, created.secret]) {
      expect(verifyWebhookSignature(push.body, push.header, secret).timestamp).toBe(Number(/^t=(\d+)/.exec(push.header)![1]));
      expect(stripe.webhooks.constructEvent(push.body, push.header, stripeSecretFor(secret))).toEqual(JSON.parse(push.body));
    }
    expect(() => verifyWebhookSignature(push.body, push.header, 'whsec_someone_else')).toThrow(SignatureMismatchError);
    expect(() => stripe.webhooks.constructEvent(push.body, push.header, stripeSecretFor('whsec_someone_else'))).toThrow(
      Stripe.errors.StripeSignatureVerificationError,
    );
  });

  it('signs with the new secret only after a rotation that expires the old one at once, even while a drain holds the endpoint', async () => {
    const created = await client.webhooks.create({ body: { url: receiver.url, eventTypes: ['*'] } });
    receiver.useSecret(created.secret);
    // A push first: the endpoint's drain now runs, with its own copy of the endpoint.
    expect((await deliver(created.id)).push.outcome).toBe('ok');

    const rotated = await client.webhooks.rotateSecret({ params: { id: created.id }, body: { oldSecretExpiresInSeconds: 0 } });
    expect(rotated.previousSecretExpiresAt).toBeNull();
    receiver.useSecret(rotated.secret);

    for (let n = 0; n < 2; n++) {
      const { push, status } = await deliver(created.id);
      expect([push.outcome, status]).toEqual(['ok', 'succeeded']);
      expect(push.header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect(() => verifyWebhookSignature(push.body, push.header, created.secret)).toThrow(SignatureMismatchError);
      expect(() => stripe.webhooks.constructEvent(push.body, push.header, stripeSecretFor(created.secret))).toThrow(
        Stripe.errors.StripeSignatureVerificationError,
      );
    }
    const listed = (await client.webhooks.list()).items.find((e) => e.id === created.id);
    expect(listed?.previousSecretExpiresAt).toBeNull();
  });

  it('keeps the old secret for the time asked, at most the grace period, and refuses anything else with 2001', async () => {
    const created = await client.webhooks.create({ body: { url: receiver.url, eventTypes: ['*'] } });
    const rotate = (json: unknown) =>
      call<{ previousSecretExpiresAt: string | null }>(stack.baseUrl, 'POST', `/v1/webhook-endpoints/${created.id}/rotate-secret`, {
        key: apiKey,
        json,
      });

    const before = Date.now();
    const shortened = await rotate({ oldSecretExpiresInSeconds: 60 });
    expect(shortened.body.code).toBe(0);
    const expiresAt = new Date(shortened.body.data.previousSecretExpiresAt!).getTime();
    expect(expiresAt).toBeGreaterThanOrEqual(before + 59_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 60_000);

    for (const [json, message] of [
      [{ oldSecretExpiresInSeconds: 86_401 }, /^oldSecretExpiresInSeconds: must be at most 86400 \(the grace period\)/],
      [{ oldSecretExpiresInSeconds: -1 }, /^oldSecretExpiresInSeconds: must be >= 0/],
      [{ oldSecretExpiresInSeconds: 1.5 }, /^oldSecretExpiresInSeconds: must be integer/],
      [{ oldSecretExpiresInSeconds: '0' }, /^oldSecretExpiresInSeconds: must be integer/],
      [{ oldSecretExpiresInSeconds: 2 ** 40 }, /^oldSecretExpiresInSeconds: must be <= 4294967295/],
      [{ expireOldSecret: true }, /expireOldSecret/],
    ] as const) {
      const refused = await rotate(json);
      expect([refused.status, refused.body.code]).toEqual([422, 2001]);
      expect(refused.body.message).toMatch(message);
    }
  });

  it('refuses the real push with a changed body, past the replay window, or without its header, in both verifiers', async () => {
    const created = await client.webhooks.create({ body: { url: receiver.url, eventTypes: ['*'] } });
    receiver.useSecret(created.secret);
    const { push } = await deliver(created.id);
    const stripeSecret = stripeSecretFor(created.secret);

    const tampered = push.body.replace('"service.endpoint.test"', '"vplat.comment.created"');
    expect(tampered).not.toBe(push.body);
    expect(() => verifyWebhookSignature(tampered, push.header, created.secret)).toThrow(SignatureMismatchError);
    expect(() => stripe.webhooks.constructEvent(tampered, push.header, stripeSecret)).toThrow(
      'No signatures found matching the expected signature',
    );

    // The same push replayed 301 s after it arrived: outside the spec's 300 s window.
    const later = new Date(push.receivedAt.getTime() + 301_000);
    expect(() => verifyWebhookSignature(push.body, push.header, created.secret, { now: later })).toThrow(SignatureTimestampError);
    expect(() => stripe.webhooks.constructEvent(push.body, push.header, stripeSecret, undefined, undefined, later.getTime())).toThrow(
      'Timestamp outside the tolerance zone',
    );
    // A receiver that allows longer (here 10 minutes) says so explicitly.
    expect(() => verifyWebhookSignature(push.body, push.header, created.secret, { now: later, toleranceSeconds: 600 })).not.toThrow();

    expect(() => verifyWebhookSignature(push.body, undefined, created.secret)).toThrow(MissingSignatureHeaderError);
    expect(() => verifyWebhookSignature(push.body, push.header.replace(/^t=\d+,/, ''), created.secret)).toThrow(
      MalformedSignatureHeaderError,
    );
  });
});
