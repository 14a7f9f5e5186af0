/**
 * Real pushes checked the way receivers check them with off-the-shelf verifiers: the
 * `standardwebhooks` and `svix` packages given the endpoint secret as we returned it, Stripe's
 * `constructEvent` on the spec's X-Service-Signature, and the SDK given the request's headers. An
 * endpoint on loopback receives test events from the running stack (a real worker delivers them).
 * Then during a rotation (both secrets verify in every verifier), and for an endpoint whose secret
 * is of the older base64url form, which the Standard Webhooks packages cannot decode.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { Webhook as SvixWebhook } from 'svix';
import type { RunningWorker } from '../../worker/worker';
import type { Upstream } from '../../core/upstream';
import { webhookEndpoints } from '../../core/db/schema';
import { sealSigningKey, signingKeyOf } from '../../core/events/signing-keys';
import { createVpsClient, SignatureMismatchError, standardWebhooksSecret, verifyWebhookSignature, type VpsClient } from '../../sdk';
import { eventually } from '../helpers/receivers';
import { createTenant, startStack, startStackWorker, unreachableUpstream, type Stack } from '../helpers/stack';

/** These tests poll the delivery log while workflows run; the rate limit has tests of its own. */
const POLLING_RATE = 1_000_000;

interface Push {
  headers: Record<string, string>;
  body: string;
}

/** Keeps every push's raw body and headers, and answers 200. */
async function startRecordingReceiver(): Promise<{ url: string; pushes: Push[]; close(): Promise<void> }> {
  const pushes: Push[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      pushes.push({ headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/vps`,
    pushes,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** Stripe's secret for one of ours: the spec's derived key (step 3), as text. */
const stripeSecretFor = (secret: string) => createHash('sha256').update(secret).digest('hex');

/** Only the Standard Webhooks headers, as a receiver behind a proxy that drops the others would see them. */
const standardHeaders = (push: Push) => ({
  'webhook-id': push.headers['webhook-id']!,
  'webhook-timestamp': push.headers['webhook-timestamp']!,
  'webhook-signature': push.headers['webhook-signature']!,
});

describe('Standard Webhooks headers on real pushes', () => {
  const taskQueue = `vps-standard-webhooks-${process.pid}-${Date.now()}`;
  const stripe = new Stripe('sk_test_not_used_for_any_request');
  let stack: Stack;
  let upstream: Upstream;
  let worker: RunningWorker;
  let receiver: Awaited<ReturnType<typeof startRecordingReceiver>>;
  let client: VpsClient;

  beforeAll(async () => {
    stack = await startStack({ taskQueue, allowInsecureWebhookUrls: true, ratePerMinute: POLLING_RATE });
    upstream = unreachableUpstream();
    worker = await startStackWorker(stack, taskQueue, upstream);
    receiver = await startRecordingReceiver();
    const tenant = await createTenant(stack);
    client = createVpsClient({ baseUrl: stack.baseUrl, apiKey: tenant.apiKey });
  }, 120_000);
  afterAll(async () => {
    await worker?.stop();
    await stack?.close();
    await upstream?.close();
    await receiver?.close();
  });

  /** Sends a test event to the endpoint and returns its push once its delivery succeeded. */
  async function deliver(endpointId: string): Promise<{ push: Push; eventId: string }> {
    const { event, delivery } = await client.webhooks.test({ params: { id: endpointId } });
    const page = await eventually(
      () => client.webhooks.deliveries({ params: { id: endpointId } }),
      (p) => p.items.some((d) => d.id === delivery.id && d.status !== 'pending'),
      20_000,
    );
    expect(page.items.find((d) => d.id === delivery.id)?.status).toBe('succeeded');
    const push = receiver.pushes.find((p) => p.body.includes(event.id));
    expect(push).toBeDefined();
    return { push: push!, eventId: event.id };
  }

  /** Every verifier accepts the push with this secret. */
  function expectVerifiedBy(push: Push, secret: string): void {
    const body = JSON.parse(push.body) as unknown;
    expect(new StandardWebhook(secret).verify(push.body, push.headers)).toEqual(body);
    // svix checks and returns nothing; it throws when the push does not verify.
    expect(() => new SvixWebhook(secret).verify(push.body, push.headers)).not.toThrow();
    expect(stripe.webhooks.constructEvent(push.body, push.headers['x-service-signature']!, stripeSecretFor(secret))).toEqual(body);
    // The SDK given the request's headers: the spec's header when it is there, the standard ones otherwise.
    expect(() => verifyWebhookSignature(push.body, push.headers, secret)).not.toThrow();
    expect(() => verifyWebhookSignature(push.body, standardHeaders(push), secret)).not.toThrow();
  }

  it('issues secrets both packages decode, and every verifier accepts the push with the secret as returned', async () => {
    const created = await client.webhooks.create({ body: { url: receiver.url, eventTypes: ['*'] } });
    // `whsec_` + standard base64 of 32 bytes (44 characters with the padding), as the packages read it.
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    const { push, eventId } = await deliver(created.id);
    // The message id is the event's id: the same on every retry and redelivery, the receivers' deduplication key.
    expect(push.headers['webhook-id']).toBe(eventId);
    expect(push.headers['webhook-timestamp']).toMatch(/^\d+$/);
    expect(push.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    // The spec's header is unchanged, over the same timestamp.
    expect(push.headers['x-service-signature']).toBe(
      `t=${push.headers['webhook-timestamp']},${/v1=[0-9a-f]{64}$/.exec(push.headers['x-service-signature']!)![0]}`,
    );
    expectVerifiedBy(push, created.secret);

    const other = (await client.webhooks.create({ body: { url: receiver.url, eventTypes: ['*'] } })).secret;
    expect(() => new StandardWebhook(other).verify(push.body, push.headers)).toThrow('No matching signature found');
    expect(() => new SvixWebhook(other).verify(push.body, push.headers)).toThrow('No matching signature found');
    expect(() => verifyWebhookSignature(push.body, standardHeaders(push), other)).toThrow(SignatureMismatchError);
    const tampered = push.body.replace('"service.endpoint.test"', '"vplat.comment.created"');
    expect(() => new StandardWebhook(created.secret).verify(tampered, push.headers)).toThrow('No matching signature found');
  });

  it('carries both secrets’ signatures during a rotation’s grace, and every verifier accepts either secret', async () => {
    const created = await client.webhooks.create({ body: { url: receiver.url, eventTypes: ['*'] } });
    const rotated = await client.webhooks.rotateSecret({ params: { id: created.id } });

    const { push } = await deliver(created.id);
    expect(push.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(push.headers['x-service-signature']!.split(',')).toHaveLength(3);
    expectVerifiedBy(push, rotated.secret);
    expectVerifiedBy(push, created.secret);

    // Expired at once: the new secret's signature only, in both schemes.
    await client.webhooks.rotateSecret({ params: { id: created.id }, body: { oldSecretExpiresInSeconds: 0 } });
    const after = (await deliver(created.id)).push;
    expect(after.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    expect(() => new StandardWebhook(rotated.secret).verify(after.body, after.headers)).toThrow('No matching signature found');
  });

  it('keeps an old base64url secret working for X-Service-Signature, and signs the standard headers with its SHA-256', async () => {
    const created = await client.webhooks.create({ body: { url: receiver.url, eventTypes: ['*'] } });
    // An endpoint from before: its secret was `whsec_` + base64url, and the service kept only its digest.
    const oldSecret = 'whsec_q-3vZ_8kYl0mF2xNwR7aJbC4dE5fG6hI9jK1lM2nO3p';
    await stack.database.db
      .update(webhookEndpoints)
      .set({ signingKey: sealSigningKey(stack.sealedBox, created.id, signingKeyOf(oldSecret)) })
      .where(eq(webhookEndpoints.id, created.id));

    const { push } = await deliver(created.id);
    // What made the packages fail before: the secret itself is not base64.
    expect(() => new StandardWebhook(oldSecret)).toThrow();
    expect(stripe.webhooks.constructEvent(push.body, push.headers['x-service-signature']!, stripeSecretFor(oldSecret))).toEqual(
      JSON.parse(push.body),
    );
    // The documented key for such a secret: `whsec_` + base64 of its SHA-256, which the SDK computes.
    const standardSecret = `whsec_${createHash('sha256').update(oldSecret).digest('base64')}`;
    expect(standardWebhooksSecret(oldSecret)).toBe(standardSecret);
    expect(new StandardWebhook(standardSecret).verify(push.body, push.headers)).toEqual(JSON.parse(push.body));
    expect(() => new SvixWebhook(standardSecret).verify(push.body, push.headers)).not.toThrow();
    // The SDK takes the old secret as it is, either way.
    expect(() => verifyWebhookSignature(push.body, push.headers, oldSecret)).not.toThrow();
    expect(() => verifyWebhookSignature(push.body, standardHeaders(push), oldSecret)).not.toThrow();

    // Rotating it: the new secret (today's form) and the old one both sign during the grace.
    const rotated = await client.webhooks.rotateSecret({ params: { id: created.id } });
    const during = (await deliver(created.id)).push;
    expectVerifiedBy(during, rotated.secret);
    expect(new StandardWebhook(standardSecret).verify(during.body, during.headers)).toEqual(JSON.parse(during.body));
    expect(() => verifyWebhookSignature(during.body, standardHeaders(during), oldSecret)).not.toThrow();
  });
});
