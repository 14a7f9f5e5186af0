#!/usr/bin/env node
/**
 * Patches known crashes in installed dependencies; run after every install (package.json
 * postinstall) and idempotent. Each patch names the upstream report, and says so when its pattern
 * is gone, which means the dependency changed and the patch should be reviewed or removed.
 *
 * postgres 3.4.9: a small write is deferred with setImmediate; when the connection closes before it
 * runs (Postgres restarted under load), nextWrite() dereferences the nulled socket and throws from
 * the immediate callback, an uncaught exception that ends the process (porsager/postgres#1154,
 * #1208, fix proposed in #1209). The guard settles the pending queries with CONNECTION_CLOSED
 * instead, which the pool and our retries already handle.
 */
const fs = require('node:fs');
const path = require('node:path');

const MARKER = '/* vps: guard nextWrite against a closed socket */';
const ORIGINAL = `  function nextWrite(fn) {
    const x = socket.write(chunk, fn)`;
const GUARDED = `  function nextWrite(fn) {
    ${MARKER}
    if (!socket) {
      nextWriteTimer !== null && clearImmediate(nextWriteTimer)
      chunk = nextWriteTimer = null
      error(Errors.connection('CONNECTION_CLOSED', options))
      return false
    }
    const x = socket.write(chunk, fn)`;

const root = path.join(__dirname, '..', 'node_modules', 'postgres');
for (const file of ['src/connection.js', 'cjs/src/connection.js']) {
  const target = path.join(root, file);
  if (!fs.existsSync(target)) continue;
  const text = fs.readFileSync(target, 'utf8');
  if (text.includes(MARKER)) continue;
  if (!text.includes(ORIGINAL)) {
    console.warn(
      `patch-dependencies: postgres ${file} no longer has the unguarded nextWrite; review the patch in scripts/patch-dependencies.cjs`,
    );
    continue;
  }
  fs.writeFileSync(target, text.replace(ORIGINAL, GUARDED));
  console.log(`patch-dependencies: guarded nextWrite in postgres/${file}`);
}
