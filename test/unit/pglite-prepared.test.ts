import {
  literalOf,
  MAX_PREPARED_STATEMENTS,
  PREPARE_AFTER_RUNS,
  preparedStatementLost,
  PreparedStatements,
} from '../../core/db/pglite-prepared';

describe('literals for EXECUTE', () => {
  it('writes null and undefined as NULL, everything else dollar-quoted as text', () => {
    expect(literalOf(null)).toBe('NULL');
    expect(literalOf(undefined)).toBe('NULL');
    expect(literalOf("it's")).toBe("$p$it's$p$");
    expect(literalOf(42)).toBe('$p$42$p$');
    expect(literalOf(true)).toBe('$p$true$p$');
    expect(literalOf(12345678901234567890n)).toBe('$p$12345678901234567890$p$');
  });

  it('picks a tag that only the closing delimiter matches', () => {
    expect(literalOf('a $p$ b')).toBe('$p0$a $p$ b$p0$');
    // Value and delimiter together would read `$p$` early.
    expect(literalOf('ends in $p')).toBe('$p0$ends in $p$p0$');
    expect(literalOf('$p$ and $p0$')).toBe('$p1$$p$ and $p0$$p1$');
    for (const value of ['$', '$$', 'x$', '$p', 'p$', '$p0', '$p$p$p0$p1$', 'a$p0']) {
      const literal = literalOf(value);
      const tag = literal.slice(0, literal.indexOf('$', 1) + 1);
      // The value sits whole between the delimiters, and the first closing one is the last.
      expect(literal).toBe(`${tag}${value}${tag}`);
      expect(literal.indexOf(tag, tag.length)).toBe(tag.length + value.length);
    }
  });
});

describe('which statements are prepared', () => {
  const text = 'select * from t where id = $1';

  it('runs a text as given until it has been seen, then asks once for its PREPARE', () => {
    const statements = new PreparedStatements();
    for (let run = 0; run < PREPARE_AFTER_RUNS; run++) expect(statements.plan(text, [1])).toEqual({ kind: 'as-is' });
    expect(statements.plan(text, [1])).toEqual({ kind: 'as-is', prepare: { name: 'vps_s0', statement: `PREPARE vps_s0 AS ${text}` } });
    // Until the PREPARE is done, as given, and not asked again.
    expect(statements.plan(text, [1])).toEqual({ kind: 'as-is' });
    statements.prepared(text, 'vps_s0');
    expect(statements.plan(text, [7])).toEqual({ kind: 'execute', text: 'EXECUTE vps_s0($p$7$p$)' });
    expect(statements.plan('select 1', [])).toEqual({ kind: 'as-is' });
  });

  it('executes with every parameter as a literal, and without parentheses when there are none', () => {
    const statements = new PreparedStatements();
    statements.prepared('select now()', 'vps_s9');
    expect(statements.plan('select now()', [])).toEqual({ kind: 'execute', text: 'EXECUTE vps_s9' });
    statements.prepared(text, 'vps_s3');
    expect(statements.plan(text, ['a', null, false])).toEqual({ kind: 'execute', text: 'EXECUTE vps_s3($p$a$p$, NULL, $p$false$p$)' });
  });

  it("writes an array of plain values in Postgres's array form, each element quoted and escaped", () => {
    expect(literalOf(['a', 'b "c" \\ d', null, 'NULL', 'x,y}{'])).toBe('$p${"a","b \\"c\\" \\\\ d",NULL,"NULL","x,y}{"}$p$');
    expect(literalOf([1, true, 12n])).toBe('$p${"1","true","12"}$p$');
    expect(literalOf([])).toBe('$p${}$p$');
    const statements = new PreparedStatements();
    statements.prepared(text, 'vps_s0');
    expect(statements.plan(text, [['x']])).toEqual({ kind: 'execute', text: 'EXECUTE vps_s0($p${"x"}$p$)' });
  });

  it('leaves statements with other parameters as they are: nested arrays, dates, bytes, strings with NUL', () => {
    const statements = new PreparedStatements();
    statements.prepared(text, 'vps_s0');
    for (const param of [[['a']], ['nul\u0000inside'], new Date(0), Buffer.from('x'), { a: 1 }, 'nul\u0000inside']) {
      expect(statements.plan(text, [param])).toEqual({ kind: 'as-is' });
    }
    for (let run = 0; run < PREPARE_AFTER_RUNS + 3; run++) expect(statements.plan('select $1', [[[1]]])).toEqual({ kind: 'as-is' });
  });

  it('runs as given what PREPARE refused, or what failed as a prepared statement', () => {
    const statements = new PreparedStatements();
    for (let run = 0; run <= PREPARE_AFTER_RUNS; run++) statements.plan('begin', []);
    statements.refused('begin');
    expect(statements.plan('begin', [])).toEqual({ kind: 'as-is' });
    statements.prepared(text, 'vps_s1');
    statements.forget(text);
    for (let run = 0; run <= PREPARE_AFTER_RUNS + 1; run++) expect(statements.plan(text, [1])).toEqual({ kind: 'as-is' });
  });

  it('prepares at most its bound of statements, and forgets them all when the session is new', () => {
    const statements = new PreparedStatements();
    for (let n = 0; n < MAX_PREPARED_STATEMENTS; n++) statements.prepared(`select ${n}`, `vps_s${n}`);
    for (let run = 0; run <= PREPARE_AFTER_RUNS + 1; run++) expect(statements.plan('select $1', [1])).toEqual({ kind: 'as-is' });
    statements.clear();
    expect(statements.plan('select 0', [])).toEqual({ kind: 'as-is' });
  });
});

describe('a value holding many would-be tags', () => {
  it('quotes it in time linear in its length, with the first tag it does not hold', () => {
    const value = Array.from({ length: 20_000 }, (_, n) => `$p${n}$`).join('') + '$p';
    const started = performance.now();
    const literal = literalOf(value);
    expect(performance.now() - started).toBeLessThan(500);
    expect(literal).toBe(`$p20000$${value}$p20000$`);
  });
});

describe('what counts as a prepared statement lost', () => {
  it('is a missing statement, or a plan whose result type changed, not any unsupported feature', () => {
    expect(preparedStatementLost({ code: '26000', message: 'prepared statement "vps_s1" does not exist' })).toBe(true);
    expect(preparedStatementLost({ code: '0A000', message: 'cached plan must not change result type' })).toBe(true);
    expect(preparedStatementLost({ code: '0A000', message: 'FOR UPDATE is not allowed with aggregate functions' })).toBe(false);
    expect(preparedStatementLost({ code: '23505', message: 'duplicate key' })).toBe(false);
  });
});
