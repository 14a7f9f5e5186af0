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

  describe('statements it has run before, prepared', () => {
    const prepared = async () =>
      (await rawQuery<{ statement: string }>(database.db, "select statement from pg_prepared_statements where name like 'vps_s%'", [])).map(
        (r) => r.statement,
      );
    const waitUntilPrepared = async (fragment: string) => {
      while (!(await prepared()).some((s) => s.includes(fragment))) await new Promise((r) => setTimeout(r, 5));
    };

    it('answer as they did before they were prepared, every kind of parameter included', async () => {
      const text =
        'select $1::int + 1 as n, $2::text as t, $3::jsonb as j, $4::timestamptz as at, $5::text as nothing, $6::boolean as b, $7::text[] as list, $8::int[] as ns';
      const list = ['a', 'b "c" \\ d', null, 'NULL', '{x,y}'];
      const params = [41, "it's $p$ and ends in $p", '{"a": [1, "$p$"]}', '2024-05-06T07:08:09Z', null, true, list, [3, 4]];
      const first = await rawQuery(database.db, text, params);
      expect(first).toEqual([
        { n: 42, t: params[1], j: { a: [1, '$p$'] }, at: new Date('2024-05-06T07:08:09Z'), nothing: null, b: true, list, ns: [3, 4] },
      ]);
      for (let run = 0; run < 4; run++) await rawQuery(database.db, text, params);
      await waitUntilPrepared('$8::int[]');
      expect(await rawQuery(database.db, text, params)).toEqual(first);
    });

    it('answer the same through drizzle, inside a transaction as outside', async () => {
      const query = sql`select ${41}::int + 1 as n, ${"it's $p"}::text as t, ${'2024-05-06T07:08:09Z'}::timestamptz as at`;
      const rows = async (executor: Pick<Database['db'], 'execute'>) => (await executor.execute(query)) as unknown as { rows: unknown[] };
      const first = (await rows(database.db)).rows;
      expect(first).toEqual([{ n: 42, t: "it's $p", at: '2024-05-06 07:08:09+00' }]);
      for (let run = 0; run < 4; run++) await rows(database.db);
      await waitUntilPrepared('$3::timestamptz as at');
      expect((await rows(database.db)).rows).toEqual(first);
      await database.db.transaction(async (tx) => {
        expect((await rows(tx)).rows).toEqual(first);
      });
    });

    it("keep Postgres's fields on a failure, inside a transaction as outside", async () => {
      const insert = (id: number, note: string) => sql`insert into test_notes values (${id}, ${note})`;
      for (let id = 1; id <= 4; id++) await database.db.execute(insert(id, `note ${id}`));
      await waitUntilPrepared('insert into test_notes');
      const outside = await database.db.execute(insert(1, 'again')).catch((err: unknown) => err);
      // drizzle wraps the database's error as its cause.
      expect(sqlState(outside)).toBe(UNIQUE_VIOLATION);
      expect((outside as Error).cause).toMatchObject({ constraint: 'test_notes_pkey', detail: 'Key (id)=(1) already exists.' });
      const inside = await database.db
        .transaction(async (tx) => {
          await tx.execute(insert(5, 'in the transaction'));
          await tx.execute(insert(2, 'again'));
        })
        .catch((err: unknown) => err);
      expect(sqlState(inside)).toBe(UNIQUE_VIOLATION);
      expect(await notes(database)).toEqual(['note 1', 'note 2', 'note 3', 'note 4']);
    });

    it('answers with the new columns after the table changed under a prepared statement', async () => {
      await rawQuery(database.db, 'create table test_shapes (id int primary key)', []);
      await rawQuery(database.db, 'insert into test_shapes values (1)', []);
      const select = 'select * from test_shapes where id = $1';
      for (let run = 0; run < 4; run++) expect(await rawQuery(database.db, select, [1])).toEqual([{ id: 1 }]);
      await waitUntilPrepared('test_shapes');
      await rawQuery(database.db, "alter table test_shapes add column label text not null default 'new'", []);
      // The prepared plan's result type no longer fits: the statement runs as given instead.
      expect(await rawQuery(database.db, select, [1])).toEqual([{ id: 1, label: 'new' }]);
      expect(await rawQuery(database.db, select, [1])).toEqual([{ id: 1, label: 'new' }]);
    });
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
