/**
 * Opens the system of record: a Postgres server through postgres.js when DATABASE_URL is set, else
 * embedded PGlite (real Postgres compiled to WASM) under the data folder. Migrations run on open.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type { SQL } from 'drizzle-orm';
import { openPgliteThread } from './pglite-thread';
import * as schema from './schema';

export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
/** Repositories take either, so a caller can compose them in one transaction. */
export type Executor = Db | Tx;

export interface Database {
  db: Db;
  kind: 'postgres' | 'pglite';
  /**
   * Subscribes to a Postgres notification channel on a connection of its own; resolves once the
   * subscription is active, with the function that ends it. `onRelisten` is called each time the
   * subscription is made again on a new connection (notifications sent meanwhile are lost).
   */
  listen(channel: string, onPayload: (payload: string) => void, onRelisten?: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export const MIGRATIONS_FOLDER = path.join(__dirname, 'migrations');

// Any constant works; it only has to be the same for every process migrating this database.
const MIGRATION_LOCK_ID = 7_313_001;

export async function openDatabase(opts: {
  url?: string;
  dataDir: string;
  poolSize?: number;
  migrate?: boolean;
  /** Off only behind a pooler in transaction mode, which cannot keep prepared statements. */
  preparedStatements?: boolean;
}): Promise<Database> {
  return opts.url
    ? openPostgres(opts.url, opts.poolSize ?? 10, opts.migrate ?? true, opts.preparedStatements ?? true)
    : openPglite(opts.dataDir, opts.migrate ?? true);
}

type Sql = ReturnType<typeof import('postgres')>;

/**
 * drizzle asks postgres.js not to prepare unnamed queries, so Postgres parses and plans every
 * statement again: measured here, a one-row select ran 5 times slower than prepared. Every query
 * of ours has fixed text, so each connection prepares it once and reuses it. Applies inside
 * transactions and savepoints too.
 */
function alwaysPrepare<T extends Sql>(sql: T): T {
  return new Proxy(sql, {
    get(target, prop, receiver) {
      if (prop === 'unsafe') {
        return (query: string, params?: unknown[], options?: object) =>
          target.unsafe(query, params as never, { ...options, prepare: true });
      }
      if (prop === 'begin' || prop === 'savepoint') {
        return (...args: unknown[]) => {
          const fn = args.pop() as (tx: Sql) => unknown;
          const original = Reflect.get(target, prop, receiver) as (...a: unknown[]) => unknown;
          return original.apply(target, [...args, (tx: Sql) => fn(alwaysPrepare(tx))]);
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  });
}

/**
 * Seconds before a pool connection tries again after failing to reach the server. postgres.js counts
 * failures across the whole pool and waits 3^n / 100 s, up to 20 s: a 3 s Postgres restart took ten
 * connections past seven failures, and every query then waited 10 to 20 s after the server was
 * back (measured by the restart-postgres drill, where client retries ran out meanwhile). Doubling
 * from 50 ms up to 1 s finds a restarted server within a second, at no more than one connection
 * attempt a second per pool connection while it is down. Jittered, so connections spread out.
 */
export function reconnectDelaySeconds(failures: number, random: () => number = Math.random): number {
  return (0.5 + random() / 2) * Math.min(0.05 * 2 ** failures, 1);
}

async function openPostgres(url: string, poolSize: number, runMigrations: boolean, preparedStatements: boolean): Promise<Database> {
  const { default: postgres } = await import('postgres');
  const { drizzle } = await import('drizzle-orm/postgres-js');
  if (runMigrations) {
    // A single connection: the advisory lock is per session, and drizzle's migrator must use it.
    const lockClient = postgres(url, { max: 1, onnotice: () => undefined });
    try {
      await lockClient`select pg_advisory_lock(${MIGRATION_LOCK_ID})`;
      const { migrate } = await import('drizzle-orm/postgres-js/migrator');
      await migrate(drizzle(lockClient), { migrationsFolder: MIGRATIONS_FOLDER });
      await lockClient`select pg_advisory_unlock(${MIGRATION_LOCK_ID})`;
    } finally {
      await lockClient.end();
    }
  }
  const client = postgres(url, { max: poolSize, onnotice: () => undefined, backoff: (failures) => reconnectDelaySeconds(failures) });
  const db = drizzle(preparedStatements ? alwaysPrepare(client) : client, { schema }) as unknown as Db;
  return {
    db,
    kind: 'postgres',
    async listen(channel, onPayload, onRelisten) {
      // postgres.js keeps one dedicated connection for all listeners and re-listens after a
      // reconnect, calling the last argument after every LISTEN, the first one included.
      let listened = false;
      const { unlisten } = await client.listen(channel, onPayload, () => {
        if (listened) onRelisten?.();
        listened = true;
      });
      return unlisten;
    },
    close: () => client.end({ timeout: 5 }),
  };
}

/** PGlite runs on a worker thread (see pglite-thread.ts); drizzle drives it as it would PGlite itself. */
async function openPglite(dataDir: string, runMigrations: boolean): Promise<Database> {
  const { drizzle } = await import('drizzle-orm/pglite');
  const dir = path.join(dataDir, 'pg');
  fs.mkdirSync(dir, { recursive: true });
  const client = await openPgliteThread(dir);
  // drizzle's type asks for a PGlite; it calls only query and transaction, which the thread offers.
  const asPglite = client as unknown as Extract<Parameters<typeof drizzle>[0], { query: unknown }>;
  const db = drizzle(asPglite, { schema }) as unknown as Db;
  if (runMigrations) {
    const { migrate } = await import('drizzle-orm/pglite/migrator');
    await migrate(drizzle(asPglite), { migrationsFolder: MIGRATIONS_FOLDER });
  }
  return {
    db,
    kind: 'pglite',
    // One connection inside this process, never lost: nothing to listen again for.
    listen: (channel, onPayload) => client.listen(channel, onPayload),
    close: () => client.close(),
  };
}

/**
 * Runs fixed SQL text with positional parameters ($1, $2…), whichever driver is underneath, with no
 * query building at all: for the statement every request runs. Timestamps come back as strings
 * from postgres.js (drizzle installs pass-through parsers) and as Dates from PGlite.
 */
export async function rawQuery<T>(db: Db, text: string, params: unknown[]): Promise<T[]> {
  const client = (db as unknown as { $client: unknown }).$client as
    { unsafe(text: string, params: unknown[]): Promise<T[]> } | { query(text: string, params: unknown[]): Promise<{ rows: T[] }> };
  if ('unsafe' in client) return [...(await client.unsafe(text, params))];
  return (await client.query(text, params)).rows;
}

/** Runs raw SQL and returns its rows, whichever driver is underneath. */
export async function queryRows<T>(db: Executor, query: SQL): Promise<T[]> {
  const result = (await db.execute(query)) as unknown as T[] | { rows: T[] };
  return Array.isArray(result) ? result : result.rows;
}
