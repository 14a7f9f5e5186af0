/**
 * The install applies scripts/patch-dependencies.cjs: without it, a Postgres restart under load can
 * end a core or worker process from inside the driver (see the script for the upstream reports).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

describe('dependency patches', () => {
  it.each(['src/connection.js', 'cjs/src/connection.js'])('guards postgres %s against writing to a closed socket', (file) => {
    const text = readFileSync(path.join(__dirname, '../../node_modules/postgres', file), 'utf8');
    expect(text).toContain('/* vps: guard nextWrite against a closed socket */');
    expect(text).toMatch(/if \(!socket\) \{[^}]*error\(Errors\.connection\('CONNECTION_CLOSED', options\)\)/);
  });
});
