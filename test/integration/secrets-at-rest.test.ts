/**
 * Secrets at rest, over real HTTP with real workers: a webhook endpoint's signing key is stored
 * sealed, a key stored plain by an earlier release still signs and is sealed by the sweep, and a
 * rotation of the encryption key runs as docs/operating.md tells it: `vps serve` with the new key
 * and the old one accepted still signs every push and seals every stored secret again under the
 * new key, after which the old key is no longer needed.
 */
import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { keyIdOf, SealedBox } from '../../core/crypto/sealed-box';
import { resealStoredSecrets } from '../../core/crypto/reseal-sweep';
import { queryRows } from '../../core/db/client';
import { openSigningKey } from '../../core/events/signing-keys';
import type { RunningWorker } from '../../worker/worker';
import { call } from '../helpers/http';
import { cleanEnv, spawnVps, type ChildHandle } from '../helpers/processes';
import { eventually, receiverPool, type WebhookReceiver } from '../helpers/receivers';
import { verifyAsSpecSays } from '../helpers/spec-signature';
import {
  createBoundSeat,
  createTenant,
  requiredEnv,
  startStack,
  startStackWorker,
  uniqueAccount,
  unreachableUpstream,
  type Stack,
  type Tenant,
} from '../helpers/stack';
import { Track } from '../../gen/vps/seat/v1/seat_pb';

/** These tests poll the API while workflows run; the rate limit has tests of its own. */
const POLLING_RATE = 1_000_000;

const sha256hex = (text: string) => createHash('sha256').update(text).digest('hex');

/** A value as the service sealed it before key ids: `v1.<iv>.<tag>.<ciphertext>`. */
function sealedBeforeKeyIds(key: Buffer, plaintext: string, associatedData: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(associatedData));
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
}

interface EndpointKeys {
  signing_key: string;
  previous_signing_key: string | null;
  standard_key: string | null;
  previous_standard_key: string | null;
}

async function storedKeys(stack: Stack, endpointId: string): Promise<EndpointKeys> {
  const [row] = await queryRows<EndpointKeys>(
    stack.database.db,
    sql`select signing_key, previous_signing_key, standard_key, previous_standard_key from webhook_endpoints where id = ${endpointId}`,
  );
  return row!;
}

async function storedCredentials(stack: Stack, seatId: string): Promise<string> {
  const [row] = await queryRows<{ credentials_sealed: string }>(
    stack.database.db,
    sql`select credentials_sealed from seats where id = ${seatId}`,
  );
  return row!.credentials_sealed;
}

async function createEndpoint(stack: Stack, tenant: Tenant, url: string): Promise<{ id: string; secret: string }> {
  const res = await call<{ id: string; secret: string }>(stack.baseUrl, 'POST', '/v1/webhook-endpoints', {
    key: tenant.apiKey,
    json: { url, eventTypes: ['*'] },
  });
  expect(res.body.code).toBe(0);
  return res.body.data;
}

/** Sends a test event to the endpoint and returns its push once the receiver has it. */
async function pushThrough(stack: Stack, tenant: Tenant, receiver: WebhookReceiver, endpointId: string) {
  const sent = await call<{ event: { id: string } }>(stack.baseUrl, 'POST', `/v1/webhook-endpoints/${endpointId}/test`, {
    key: tenant.apiKey,
  });
  expect(sent.body.code).toBe(0);
  const [push] = await receiver.waitFor(1, (p) => p.body.includes(sent.body.data.event.id), 30_000);
  return { header: String(push!.headers['x-service-signature']), body: push!.body };
}

const now = () => Math.floor(Date.now() / 1000);

describe('webhook signing keys at rest', () => {
  const taskQueue = `vps-sealed-keys-${process.pid}-${Date.now()}`;
  const upstream = unreachableUpstream();
  const receivers = receiverPool();
  let stack: Stack;
  let worker: RunningWorker;

  beforeAll(async () => {
    stack = await startStack({ taskQueue, allowInsecureWebhookUrls: true, ratePerMinute: POLLING_RATE });
    worker = await startStackWorker(stack, taskQueue, upstream);
  }, 120_000);
  afterAll(async () => {
    await worker?.stop();
    await stack?.close();
    await upstream.close();
    await receivers.closeAll();
  });

  it('stores the signing key sealed, never as it is, and signs with it', async () => {
    const tenant = await createTenant(stack);
    const receiver = await receivers.start();
    const created = await createEndpoint(stack, tenant, receiver.url);

    const stored = await storedKeys(stack, created.id);
    expect(stored.signing_key).not.toContain(sha256hex(created.secret));
    // The spec key is sealed as every release stored it, so a process of an earlier release still
    // signs with it; the secret itself (its bytes are the Standard Webhooks key) is sealed beside it.
    expect(openSigningKey(stack.sealedBox, created.id, stored.signing_key)).toBe(sha256hex(created.secret));
    expect(openSigningKey(stack.sealedBox, created.id, stored.standard_key!)).toBe(created.secret);
    expect(stored.standard_key).not.toContain(created.secret.slice('whsec_'.length, -1));
    for (const value of [stored.signing_key, stored.standard_key!]) expect(value.startsWith(`v2.${stack.sealedBox.keyId}.`)).toBe(true);
    const push = await pushThrough(stack, tenant, receiver, created.id);
    expect(verifyAsSpecSays(push.header, push.body, created.secret, now())).toBe(true);

    // The old key moves to the previous one sealed, and both sign during the grace.
    const rotated = await call<{ secret: string }>(stack.baseUrl, 'POST', `/v1/webhook-endpoints/${created.id}/rotate-secret`, {
      key: tenant.apiKey,
    });
    const afterRotation = await storedKeys(stack, created.id);
    expect(afterRotation.previous_signing_key).toBe(stored.signing_key);
    expect(afterRotation.previous_standard_key).toBe(stored.standard_key);
    for (const value of Object.values(afterRotation)) {
      expect(value).not.toContain(sha256hex(created.secret));
      expect(value).not.toContain(sha256hex(rotated.body.data.secret));
      expect(value).not.toContain(rotated.body.data.secret.slice('whsec_'.length, -1));
    }
    const during = await pushThrough(stack, tenant, receiver, created.id);
    expect(verifyAsSpecSays(during.header, during.body, rotated.body.data.secret, now())).toBe(true);
    expect(verifyAsSpecSays(during.header, during.body, created.secret, now())).toBe(true);
  });

  it('signs with a key an earlier release stored plain, and seals it at the sweep', async () => {
    const tenant = await createTenant(stack);
    const receiver = await receivers.start();
    const created = await createEndpoint(stack, tenant, receiver.url);
    const plain = sha256hex(created.secret);
    const inGrace = sha256hex('whsec_an_earlier_secret');
    // As an earlier release left it: the spec's key as it is, current and previous, and no secret.
    await stack.database.db.execute(
      sql`update webhook_endpoints set signing_key = ${plain}, previous_signing_key = ${inGrace}, standard_key = null,
            previous_key_expires_at = now() + interval '1 hour' where id = ${created.id}`,
    );

    const before = await pushThrough(stack, tenant, receiver, created.id);
    expect(verifyAsSpecSays(before.header, before.body, created.secret, now())).toBe(true);
    expect(verifyAsSpecSays(before.header, before.body, 'whsec_an_earlier_secret', now())).toBe(true);

    const report = await resealStoredSecrets(stack.database.db, stack.sealedBox);
    expect(report.resealed.signingKeys).toBeGreaterThanOrEqual(2);
    const sealed = await storedKeys(stack, created.id);
    expect(sealed.signing_key.startsWith(stack.sealedBox.currentPrefix)).toBe(true);
    expect(sealed.previous_signing_key!.startsWith(stack.sealedBox.currentPrefix)).toBe(true);
    expect(JSON.stringify(sealed)).not.toContain(plain);
    expect(JSON.stringify(sealed)).not.toContain(inGrace);
    // Nothing left to do: a second sweep leaves the row as it is.
    await resealStoredSecrets(stack.database.db, stack.sealedBox);
    expect(await storedKeys(stack, created.id)).toEqual(sealed);

    const after = await pushThrough(stack, tenant, receiver, created.id);
    expect(verifyAsSpecSays(after.header, after.body, created.secret, now())).toBe(true);
    expect(verifyAsSpecSays(after.header, after.body, 'whsec_an_earlier_secret', now())).toBe(true);
  });
});

describe('rotating the encryption key without downtime', () => {
  const taskQueue = `vps-key-rotation-${process.pid}-${Date.now()}`;
  const receivers = receiverPool();
  const children: ChildHandle[] = [];
  /** Key A: the stack's. Key B: the next one. */
  const keyB = randomBytes(32);
  let stack: Stack;

  beforeAll(async () => {
    // No worker of the stack's own: the pushes are the `vps serve` children's, on the stack's queue.
    stack = await startStack({ taskQueue, allowInsecureWebhookUrls: true, ratePerMinute: POLLING_RATE });
  }, 120_000);
  afterAll(async () => {
    await Promise.all(children.map((c) => c.stop()));
    await stack?.close();
    await receivers.closeAll();
  });

  /** Core and a worker as separate deployments run them, on the stack's database, queue and keys. */
  async function serve(keys: { current: Buffer; accepted?: Buffer[] }, extra: Record<string, string> = {}): Promise<ChildHandle> {
    const child = spawnVps(
      ['serve', '--role', 'core,worker'],
      cleanEnv({
        DATABASE_URL: requiredEnv('TEST_DATABASE_URL'),
        TEMPORAL_ADDRESS: requiredEnv('TEMPORAL_ADDRESS'),
        TEMPORAL_TASK_QUEUE: taskQueue,
        CORE_PORT: '0',
        VPS_ENCRYPTION_KEY: keys.current.toString('hex'),
        ...(keys.accepted ? { VPS_ENCRYPTION_KEYS_ACCEPTED: keys.accepted.map((k) => k.toString('hex')).join(',') } : {}),
        VPS_ALLOW_INSECURE_WEBHOOK_URLS: 'true',
        // The platforms are never called here; nothing listens on port 9.
        VPLAT_API_BASE: 'http://127.0.0.1:9',
        VPLAT_APP_ID: 'rotation-test-app',
        VPLAT_APP_SECRET: 'rotation-test-app-secret',
        SHOP_API_BASE: 'http://127.0.0.1:9',
        SHOP_APP_KEY: 'rotation-test-shop-app',
        SHOP_APP_SECRET: 'rotation-test-shop-app-secret',
        LOG_LEVEL: 'info',
        ...extra,
      }),
    );
    children.push(child);
    await child.waitFor(/vps is running/, 90_000);
    return child;
  }

  it('keeps signing through the switch to a new key, seals everything again under it, then needs the old key no more', async () => {
    const keyA = stack.encryptionKey;
    const [idA, idB] = [keyIdOf(keyA), keyIdOf(keyB)];
    const tenant = await createTenant(stack);
    const receiver = await receivers.start();
    // Under key A: an endpoint, a seat's credentials, and (from before key ids and before sealing)
    // a seat's credentials and an endpoint's key as earlier releases stored them.
    const sealedA = await createEndpoint(stack, tenant, receiver.url);
    const plainKeyed = await createEndpoint(stack, tenant, receiver.url);
    const seat = await createBoundSeat(stack, tenant, Track.VIDEO, uniqueAccount('rotation'));
    const oldSeat = await createBoundSeat(stack, tenant, Track.VIDEO, uniqueAccount('rotation-v1'));
    const oldCredentials = JSON.stringify({ accessToken: 'at-from-before-key-ids', refreshToken: 'rt-from-before-key-ids' });
    await stack.database.db.execute(
      sql`update seats set credentials_sealed = ${sealedBeforeKeyIds(keyA, oldCredentials, oldSeat.id)} where id = ${oldSeat.id}`,
    );
    expect((await storedKeys(stack, sealedA.id)).signing_key.startsWith(`v2.${idA}.`)).toBe(true);
    expect((await storedCredentials(stack, seat.id)).startsWith(`v2.${idA}.`)).toBe(true);

    // The switch: B seals, A is still accepted. Core's sweep seals every stored secret again under
    // B, at its start and then every VPS_RESEAL_INTERVAL_MS.
    const switched = await serve({ current: keyB, accepted: [keyA] }, { VPS_RESEAL_INTERVAL_MS: '500' });
    await switched.waitFor(new RegExp(`stored secrets are sealed under key ${idB}`));
    // Meanwhile a process of the release before sealing wrote an endpoint's key plain. (Only now:
    // any core started by another suite on this database would seal a plain key under its own key.)
    await stack.database.db.execute(
      sql`update webhook_endpoints set signing_key = ${sha256hex(plainKeyed.secret)} where id = ${plainKeyed.id}`,
    );
    const underB = `v2.${idB}.`;
    await eventually(
      async () => [
        (await storedKeys(stack, sealedA.id)).signing_key,
        (await storedKeys(stack, sealedA.id)).standard_key!,
        (await storedKeys(stack, plainKeyed.id)).signing_key,
        await storedCredentials(stack, seat.id),
        await storedCredentials(stack, oldSeat.id),
      ],
      (values) => values.every((v) => v.startsWith(underB)),
      30_000,
    );
    await switched.waitFor(/sealed \d+ stored secrets again under key/);
    for (const endpoint of [sealedA, plainKeyed]) {
      const push = await pushThrough(stack, tenant, receiver, endpoint.id);
      expect(verifyAsSpecSays(push.header, push.body, endpoint.secret, now())).toBe(true);
    }
    await switched.stop();

    // After the rotation: B alone opens everything, and the pushes still verify.
    const onlyB = new SealedBox(keyB);
    expect(JSON.parse(onlyB.open(await storedCredentials(stack, seat.id), seat.id))).toMatchObject({
      accessToken: `at-${seat.capabilityAccountId}`,
    });
    expect(onlyB.open(await storedCredentials(stack, oldSeat.id), oldSeat.id)).toBe(oldCredentials);
    await serve({ current: keyB });
    for (const endpoint of [sealedA, plainKeyed]) {
      const push = await pushThrough(stack, tenant, receiver, endpoint.id);
      expect(verifyAsSpecSays(push.header, push.body, endpoint.secret, now())).toBe(true);
    }
  }, 240_000);
});
