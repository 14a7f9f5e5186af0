/**
 * The demo customer of the embedded mode: an active plan, a user with an API key, and one bound
 * seat per track, so that a newcomer's first request returns real data. Embedded mode only: it is
 * never written into a database the operator configured.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { SealedBox } from '../crypto/sealed-box';
import { generateApiKey } from '../crypto/api-keys';
import { hashPassword } from '../crypto/passwords';
import type { Db } from '../db/client';
import * as sessions from '../db/repositories/console-sessions';
import * as seatsRepo from '../db/repositories/seats';
import * as tenancy from '../db/repositories/tenancy';
import { sealCredentials } from '../upstream/credentials';

export const DEV_KEY_FILE = 'dev-api-key';
export const DEV_CONSOLE_PASSWORD_FILE = 'dev-console-password';

/** Sandbox account ids the emulator knows; the demo seats are bound to them. */
export const DEMO_ACCOUNTS = { video: 'sandbox-business-0001', shop: 'sandbox-creator-0001' } as const;

export const DEMO_EMAIL = 'demo@vps.local';

/** Upstream tokens for a demo account, from the sandbox emulator. */
export type DemoTokenGrant = (
  openId: string,
) => Promise<{ accessToken: string; refreshToken: string; accessTokenExpiresAt: Date; refreshTokenExpiresAt: Date }>;

/**
 * Idempotent by the database, not by the key file: a lost key file gets the demo user a new key,
 * and a second start never tries to bind the demo accounts twice.
 */
export async function seedDemoCustomer(
  db: Db,
  sealedBox: SealedBox,
  dataDir: string,
  grant: DemoTokenGrant,
): Promise<{ apiKey: string; created: boolean }> {
  const seeded = await seedDemoKeyAndSeats(db, sealedBox, dataDir, grant);
  await seedDemoPassword(db, dataDir);
  return seeded;
}

/**
 * The demo user's console password, random per installation (a fixed one would sign anyone in to
 * any forgotten dev instance), written beside the dev key. Like the key: a lost file gets a new one.
 */
async function seedDemoPassword(db: Db, dataDir: string): Promise<void> {
  const file = path.join(dataDir, DEV_CONSOLE_PASSWORD_FILE);
  const user = await tenancy.findUserByEmail(db, DEMO_EMAIL);
  if (!user || (user.passwordHash && fs.existsSync(file))) return;
  const password = randomBytes(18).toString('base64url');
  await sessions.setUserPassword(db, user.id, await hashPassword(password));
  fs.writeFileSync(file, `${password}\n`, { mode: 0o600 });
}

async function seedDemoKeyAndSeats(
  db: Db,
  sealedBox: SealedBox,
  dataDir: string,
  grant: DemoTokenGrant,
): Promise<{ apiKey: string; created: boolean }> {
  const keyFile = path.join(dataDir, DEV_KEY_FILE);
  const existing = await tenancy.findUserByEmail(db, DEMO_EMAIL);
  if (existing && fs.existsSync(keyFile)) return { apiKey: fs.readFileSync(keyFile, 'utf8').trim(), created: false };
  const key = generateApiKey();
  const keyRow = (customerId: string, userId: string) => ({ customerId, userId, name: 'dev', prefix: key.prefix, keyHash: key.hash });
  if (existing) {
    await tenancy.insertApiKey(db, keyRow(existing.customerId, existing.id));
  } else {
    // Asked before the transaction: a sandbox that refuses leaves no half-seeded customer behind.
    const tokens = { video: await grant(DEMO_ACCOUNTS.video), shop: await grant(DEMO_ACCOUNTS.shop) };
    await db.transaction(async (tx) => {
      const customer = await tenancy.insertCustomer(tx, { name: 'Demo Enterprise', seatQuota: 5, planExpiresAt: null });
      const user = await tenancy.insertUser(tx, { customerId: customer.id, email: DEMO_EMAIL, name: 'Demo User' });
      await tenancy.insertApiKey(tx, keyRow(customer.id, user!.id));
      for (const track of ['video', 'shop'] as const) {
        const seat = await seatsRepo.insertSeat(tx, { customerId: customer.id, name: `Demo ${track} seat`, track });
        await seatsRepo.bindSeat(tx, seat.id, {
          accountId: DEMO_ACCOUNTS[track],
          accountUsername: `demo_${track}`,
          credentialsSealed: sealCredentials(sealedBox, seat.id, {
            accessToken: tokens[track].accessToken,
            refreshToken: tokens[track].refreshToken,
          }),
          accessTokenExpiresAt: tokens[track].accessTokenExpiresAt,
          refreshTokenExpiresAt: tokens[track].refreshTokenExpiresAt,
        });
      }
    });
  }
  fs.writeFileSync(keyFile, `${key.plaintext}\n`, { mode: 0o600 });
  return { apiKey: key.plaintext, created: !existing };
}
