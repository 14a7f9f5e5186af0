'use strict';
/**
 * Builds the installable packages in place, from the sources that stay where they are:
 * - sdk/dist: the SDK bundled from sdk/*.ts as ESM (index.mjs) and CommonJS (index.cjs), Node.js
 *   built-ins its only imports, with its .d.ts files from tsc;
 * - cli/dist/vps.cjs: the `vps` command in one file, commander and the SDK bundled in, and
 *   server-commands.packaged.ts in server-commands.ts's place, so the server's modules stay out.
 *   cli/dist/inputs.json lists the files it was built from: bin/vps rebuilds it when one is newer.
 * `node scripts/build-packages.cjs [sdk] [cli]` (both when none is named). dist/ is not committed.
 */
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');
/** The oldest Node.js the packages run on (their package.json engines): AbortSignal.any is 20.3's. */
const TARGET = 'node20.3';

/** Writes through a rename, so that a process starting meanwhile never loads half a file. */
function writeWhole(file, contents) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const partial = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(partial, contents);
  fs.renameSync(partial, file);
}

function buildSdk() {
  const esbuild = require('esbuild');
  const dist = path.join(root, 'sdk', 'dist');
  fs.rmSync(dist, { recursive: true, force: true });
  for (const [format, file] of [
    ['esm', 'index.mjs'],
    ['cjs', 'index.cjs'],
  ]) {
    const result = esbuild.buildSync({
      entryPoints: [path.join(root, 'sdk', 'index.ts')],
      bundle: true,
      platform: 'node',
      target: TARGET,
      format,
      write: false,
      logLevel: 'warning',
    });
    writeWhole(path.join(dist, file), result.outputFiles[0].contents);
  }
  const tsc = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', path.join(root, 'sdk', 'tsconfig.build.json')], {
    cwd: root,
    stdio: 'inherit',
  });
  if (tsc.status !== 0) throw new Error('tsc could not write the SDK’s declarations');
}

/** The CLI's build: swaps the checkout's server commands for the package's stand-ins. */
async function buildCli() {
  const esbuild = require('esbuild');
  const packaged = {
    name: 'packaged-server-commands',
    setup(build) {
      build.onResolve({ filter: /^\.\/server-commands$/ }, () => ({ path: path.join(root, 'cli', 'server-commands.packaged.ts') }));
    },
  };
  const result = await esbuild.build({
    entryPoints: [path.join(root, 'cli', 'main.ts')],
    bundle: true,
    platform: 'node',
    target: TARGET,
    format: 'cjs',
    write: false,
    metafile: true,
    logLevel: 'warning',
    plugins: [packaged],
    banner: { js: '#!/usr/bin/env node' },
  });
  const dist = path.join(root, 'cli', 'dist');
  const inputs = Object.keys(result.metafile.inputs).map((p) => path.relative(root, path.resolve(process.cwd(), p)));
  writeWhole(path.join(dist, 'vps.cjs'), result.outputFiles[0].contents);
  fs.chmodSync(path.join(dist, 'vps.cjs'), 0o755);
  writeWhole(path.join(dist, 'inputs.json'), `${JSON.stringify(inputs, null, 1)}\n`);
}

/** Whether cli/dist/vps.cjs is missing or older than a file it was built from (bin/vps asks on every start). */
function cliIsStale() {
  const dist = path.join(root, 'cli', 'dist');
  try {
    const built = fs.statSync(path.join(dist, 'vps.cjs')).mtimeMs;
    const inputs = JSON.parse(fs.readFileSync(path.join(dist, 'inputs.json'), 'utf8'));
    return inputs.some((p) => fs.statSync(path.join(root, p)).mtimeMs > built);
  } catch {
    return true; // not built, or a source was removed or renamed
  }
}

module.exports = { buildSdk, buildCli, cliIsStale };

if (require.main === module) {
  const which = process.argv.slice(2);
  if (which.length === 0 || which.includes('sdk')) buildSdk();
  if (which.length === 0 || which.includes('cli'))
    buildCli().catch((err) => {
      process.stderr.write(`${err.stack ?? err}\n`);
      process.exitCode = 1;
    });
}
