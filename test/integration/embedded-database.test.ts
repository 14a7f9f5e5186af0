/**
 * The embedded database of `npm start`: PGlite on a worker thread, driven through openDatabase as
 * the service drives it (drizzle, rawQuery, listen), with PGlite's results, errors and
 * transaction semantics.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { sql } from 'drizzle-orm';
import { openDatabase, queryRows, rawQuery, type Database } from '../../core/db/client';
import { sqlState, UNIQUE_VIOLATION } from '../../core/db/errors';

const tempDirs: string[] = [];
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vps-embedded-db-'));
  tempDirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

async function notes(database: Database): Promise<string[]> {
  return (await rawQuery<{ note: string }>(database.db, 'select note from test_notes order by id', [])).map((r) => r.note);
}

describe('the embedded database (PGlite on a worker thread)', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openDatabase({ dataDir: tempDir() });
    await rawQuery(database.db, 'create table test_notes (id int primary key, note text not null)', []);
  });
  afterAll(() => database.close());
  beforeEach(() => rawQuery(database.db, 'delete from test_notes', []));

  it('is migrated on open and answers with PGlite values: timestamps as Dates, bytea as bytes', async () => {
    const [applied] = await rawQuery<{ n: number }>(database.db, 'select count(*)::int as n from drizzle.__drizzle_migrations', []);
    expect(applied!.n).toBeGreaterThan(0);
    const [row] = await rawQuery<{ at: Date; bytes: Uint8Array; text: string }>(
      database.db,
      "select '2024-05-06T07:08:09Z'::timestamptz as at, $1::bytea as bytes, $2::text as text",
      [Buffer.from('hi'), 'héllo'],
    );
    expect(row!.at).toEqual(new Date('2024-05-06T07:08:09Z'));
    expect(Buffer.from(row!.bytes).toString()).toBe('hi');
    expect(row!.text).toBe('héllo');
    // drizzle's pass-through parsers keep timestamps as Postgres text.
    const [viaDrizzle] = await queryRows<{ at: string }>(database.db, sql`select '2024-05-06T07:08:09Z'::timestamptz as at`);
    expect(viaDrizzle!.at).toBe('2024-05-06 07:08:09+00');
  });

  it('commits a transaction whose callback resolves', async () => {
    const result = await database.db.transaction(async (tx) => {
      await tx.execute(sql`insert into test_notes values (1, 'kept')`);
      return 'done';
    });
    expect(result).toBe('done');
    expect(await notes(database)).toEqual(['kept']);
  });

  it('rolls back a transaction whose callback throws, and a statement outside it waits for its end', async () => {
    let releaseTx!: () => void;
    const txMayEnd = new Promise<void>((resolve) => (releaseTx = resolve));
    const events: string[] = [];
    const tx = database.db.transaction(async (tx) => {
      await tx.execute(sql`insert into test_notes values (1, 'discarded')`);
      events.push('inserted');
      await txMayEnd;
      throw new Error('changed my mind');
    });
    while (!events.includes('inserted')) await new Promise((r) => setTimeout(r, 5));
    const outside = notes(database).then((seen) => {
      events.push('outside read');
      return seen;
    });
    await new Promise((r) => setTimeout(r, 100));
    events.push('tx ends');
    releaseTx();
    await expect(tx).rejects.toThrow('changed my mind');
    expect(await outside).toEqual([]);
    expect(events).toEqual(['inserted', 'tx ends', 'outside read']);
  });

  it('rolls back only the savepoint of a nested transaction that throws', async () => {
    await database.db.transaction(async (tx) => {
      await tx.execute(sql`insert into test_notes values (1, 'outer')`);
      await expect(
        tx.transaction(async (nested) => {
          await nested.execute(sql`insert into test_notes values (2, 'nested')`);
          throw new Error('undo the nested part');
        }),
      ).rejects.toThrow('undo the nested part');
      await tx.execute(sql`insert into test_notes values (3, 'after')`);
    });
    expect(await notes(database)).toEqual(['outer', 'after']);
  });

  it("rejects a unique violation with Postgres's fields, directly and through drizzle", async () => {
    await rawQuery(database.db, "insert into test_notes values (1, 'first')", []);
    const direct = await rawQuery(database.db, "insert into test_notes values (1, 'again')", []).catch((err: unknown) => err);
    expect(direct).toBeInstanceOf(Error);
    expect(direct).toMatchObject({
      code: UNIQUE_VIOLATION,
      constraint: 'test_notes_pkey',
      table: 'test_notes',
      detail: 'Key (id)=(1) already exists.',
      severity: 'ERROR',
      message: 'duplicate key value violates unique constraint "test_notes_pkey"',
    });
    const viaDrizzle = await database.db.execute(sql`insert into test_notes values (1, 'again')`).catch((err: unknown) => err);
    expect(sqlState(viaDrizzle)).toBe(UNIQUE_VIOLATION);
    // The failed statement left the database usable.
    expect(await notes(database)).toEqual(['first']);
  });

  it('delivers notifications to a listener until it unlistens', async () => {
    const received: string[] = [];
    const unlisten = await database.listen('test_channel', (payload) => received.push(payload));
    await rawQuery(database.db, "select pg_notify('test_channel', 'one')", []);
    await database.db.transaction(async (tx) => {
      await tx.execute(sql`select pg_notify('test_channel', 'two, on commit')`);
    });
    while (received.length < 2) await new Promise((r) => setTimeout(r, 5));
    await unlisten();
    await rawQuery(database.db, "select pg_notify('test_channel', 'three')", []);
    await new Promise((r) => setTimeout(r, 100));
    expect(received).toEqual(['one', 'two, on commit']);
  });
});

describe('closing and losing the embedded database', () => {
  it('keeps its data across a close and a new open; a closed database fails later calls clearly', async () => {
    const dataDir = tempDir();
    const first = await openDatabase({ dataDir });
    await rawQuery(first.db, 'create table kept (note text)', []);
    await rawQuery(first.db, "insert into kept values ('still here')", []);
    await first.close();
    await expect(rawQuery(first.db, 'select 1', [])).rejects.toThrow('PGlite is closed');
    await expect(first.close()).resolves.toBeUndefined();
    const second = await openDatabase({ dataDir });
    try {
      expect(await rawQuery(second.db, 'select note from kept', [])).toEqual([{ note: 'still here' }]);
    } finally {
      await second.close();
    }
  });

  it('rejects the call in flight and later calls when the thread dies, and close reports it without hanging', async () => {
    const posted = jest.spyOn(Worker.prototype, 'postMessage');
    const database = await openDatabase({ dataDir: tempDir() });
    const thread = posted.mock.contexts[0] as Worker;
    posted.mockRestore();
    const inFlight = rawQuery(database.db, 'select pg_sleep(2)', []);
    await new Promise((r) => setTimeout(r, 100));
    await thread.terminate(); // as a fatal error in the thread would end it
    await expect(inFlight).rejects.toThrow(/PGlite worker thread stopped/);
    await expect(rawQuery(database.db, 'select 1', [])).rejects.toThrow(/PGlite worker thread stopped/);
    await expect(database.close()).rejects.toThrow(/PGlite worker thread stopped/);
  });
});
