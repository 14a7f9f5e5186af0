/**
 * The workflows' webpack bundle, built once and kept on disk. Bundling costs seconds of CPU at each
 * worker start (2.4 s on an idle 2-core machine, far more on a busy one), and a worker restarts
 * exactly when its machine is busiest: taking over a dead worker's work, or in a rolling deploy.
 *
 * A kept bundle lists every file webpack read for it with the file's SHA-256, and is used only
 * while each file is unchanged, the workflows folder lists the same names, and the SDK is the same
 * version; otherwise it is built again and replaces the kept one. When the cache folder cannot be
 * written (a read-only install), the bundle is built in memory as before.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import type { Logger } from '../core/logger';

/** Next to the dependencies, as build tools keep their caches: never committed, gone with a clean install. */
export const DEFAULT_BUNDLE_CACHE_DIR = path.join(__dirname, '..', 'node_modules', '.cache', 'vps-workflows');

export interface WorkflowBundleSource {
  /** The workflows' entry module (resolved path). */
  workflowsPath: string;
  /** Workflow interceptor modules (resolved paths), bundled in. */
  interceptorModules: string[];
}

/** The worker's workflows and their interceptors. */
export const WORKER_WORKFLOWS: WorkflowBundleSource = {
  workflowsPath: require.resolve('../workflows'),
  interceptorModules: [require.resolve('../workflows/interceptors')],
};

interface KeptBundle {
  /** What the bundle was asked for: another request never matches it. */
  request: string;
  /** Absolute path → SHA-256 of every file in the bundle. */
  inputs: Record<string, string>;
  code: string;
}

/** A bundle's module ids (webpack's, relative to the folder it ran in), as development mode writes them. */
const MODULE_ID = /^\/\*\*\*\/ "(\.\/[^"]+)"/gm;

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

function fileHash(file: string): string | undefined {
  try {
    return sha256(readFileSync(file));
  } catch {
    return undefined;
  }
}

/** Everything besides file contents that decides the bundle: the request, the SDK's version, and the workflows folder's names. */
function requestKey(source: WorkflowBundleSource): string {
  const sdk = (JSON.parse(readFileSync(require.resolve('@temporalio/worker/package.json'), 'utf8')) as { version: string }).version;
  const folder = path.dirname(source.workflowsPath);
  return JSON.stringify({
    sdk,
    workflowsPath: source.workflowsPath,
    interceptorModules: source.interceptorModules,
    names: readdirSync(folder).sort(),
  });
}

function readKept(file: string, request: string): string | undefined {
  let kept: KeptBundle;
  try {
    kept = JSON.parse(readFileSync(file, 'utf8')) as KeptBundle;
  } catch {
    return undefined;
  }
  if (kept.request !== request || Object.keys(kept.inputs).length === 0) return undefined;
  for (const [input, hash] of Object.entries(kept.inputs)) {
    if (fileHash(input) !== hash) return undefined;
  }
  return kept.code;
}

/** The files a bundle was built from; ids that name no file (webpack's generated entry point) are covered by the request key. */
function inputsOf(code: string, builtIn: string): Record<string, string> {
  const inputs: Record<string, string> = {};
  for (const [, id] of code.matchAll(MODULE_ID)) {
    const file = path.resolve(builtIn, id!);
    const hash = fileHash(file);
    if (hash) inputs[file] = hash;
  }
  return inputs;
}

/** The bundle's code, and the file it is kept in (none when it could not be kept). */
export async function workflowBundle(
  source: WorkflowBundleSource,
  opts: { cacheDir?: string; logger: Logger },
): Promise<{ code: string; keptIn?: string }> {
  const cacheDir = opts.cacheDir ?? DEFAULT_BUNDLE_CACHE_DIR;
  const request = requestKey(source);
  const file = path.join(cacheDir, `bundle-${sha256(request).slice(0, 16)}.json`);
  const kept = readKept(file, request);
  if (kept !== undefined) return { code: kept, keptIn: file };

  const started = Date.now();
  const builtIn = process.cwd();
  const { code } = await bundleWorkflowCode({
    workflowsPath: source.workflowsPath,
    workflowInterceptorModules: source.interceptorModules,
    logger: quietBundler(opts.logger),
  });
  const entry: KeptBundle = { request, inputs: inputsOf(code, builtIn), code };
  try {
    mkdirSync(cacheDir, { recursive: true });
    // Written aside and renamed: a worker starting at the same moment reads the old file or the new, never half of one.
    const partial = `${file}.${randomBytes(6).toString('hex')}.partial`;
    try {
      writeFileSync(partial, JSON.stringify(entry));
      renameSync(partial, file);
    } catch (err) {
      rmSync(partial, { force: true });
      throw err;
    }
    opts.logger.info(
      { ms: Date.now() - started, inputs: Object.keys(entry.inputs).length, file },
      'workflow bundle built and kept for the next start',
    );
    return { code, keptIn: file };
  } catch (err) {
    opts.logger.warn({ err, cacheDir }, 'workflow bundle built, but it could not be kept: every start will build it again');
    return { code };
  }
}

/** webpack's progress report is not news: only its warnings and errors reach our log. */
function quietBundler(logger: Logger) {
  const log = (level: 'warn' | 'error') => (message: string, meta?: Record<string, unknown>) =>
    logger[level]({ ...meta }, `workflow bundler: ${message}`);
  const quiet = () => undefined;
  const warn = log('warn');
  const error = log('error');
  return {
    trace: quiet,
    debug: quiet,
    info: quiet,
    warn,
    error,
    log: (level: string, message: string, meta?: Record<string, unknown>) =>
      level === 'ERROR' ? error(message, meta) : level === 'WARN' ? warn(message, meta) : undefined,
  };
}
