import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { workflowBundle, type WorkflowBundleSource } from '../../worker/workflow-bundle';

/** A logger whose lines the test reads. */
function recordingLogger() {
  const lines: Array<{ msg: string; level: number }> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as { msg: string; level: number });
      done();
    },
  });
  return {
    logger: pino({ level: 'info' }, sink),
    lines,
    built: () => lines.filter((l) => l.msg.startsWith('workflow bundle built')).length,
  };
}

// Inside the repository (webpack finds @temporalio/workflow in its node_modules) but not under
// node_modules, whose TypeScript the bundler leaves uncompiled. test-artifacts/ is not committed.
const fixtureRoot = path.join(__dirname, '..', '..', 'test-artifacts');

describe('workflow bundle kept on disk', () => {
  let dir: string;
  let cacheDir: string;
  let source: WorkflowBundleSource;

  beforeEach(() => {
    mkdirSync(fixtureRoot, { recursive: true });
    dir = mkdtempSync(path.join(fixtureRoot, 'wf-fixture-'));
    // Beside the fixture, not in it: the folder's names are part of what a kept bundle is checked against.
    cacheDir = `${dir}-cache`;
    writeFileSync(path.join(dir, 'greeting.ts'), "export const GREETING = 'hello-one';\n");
    writeFileSync(
      path.join(dir, 'index.ts'),
      "import { GREETING } from './greeting';\nexport async function greet(): Promise<string> { return GREETING; }\n",
    );
    writeFileSync(path.join(dir, 'interceptors.ts'), 'export const interceptors = () => ({});\n');
    source = { workflowsPath: path.join(dir, 'index.ts'), interceptorModules: [path.join(dir, 'interceptors.ts')] };
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(cacheDir, { recursive: true, force: true });
  });

  it('builds once, then serves the kept bundle while its files are unchanged', async () => {
    const log = recordingLogger();
    const first = await workflowBundle(source, { cacheDir, logger: log.logger });
    expect(first.code).toContain('hello-one');
    expect(log.built()).toBe(1);
    expect(readdirSync(cacheDir).filter((f) => f.endsWith('.json'))).toHaveLength(1);

    const second = await workflowBundle(source, { cacheDir, logger: log.logger });
    expect(second.code).toBe(first.code);
    expect(log.built()).toBe(1);
  }, 60_000);

  it('builds again when a file the bundle was made from changes, even one the entry imports', async () => {
    const log = recordingLogger();
    await workflowBundle(source, { cacheDir, logger: log.logger });
    writeFileSync(path.join(dir, 'greeting.ts'), "export const GREETING = 'hello-two';\n");
    const rebuilt = await workflowBundle(source, { cacheDir, logger: log.logger });
    expect(rebuilt.code).toContain('hello-two');
    expect(rebuilt.code).not.toContain('hello-one');
    expect(log.built()).toBe(2);
    // The kept bundle was replaced, not joined by a second one.
    expect(readdirSync(cacheDir).filter((f) => f.endsWith('.json'))).toHaveLength(1);
  }, 60_000);

  it('builds again when a file is added to the workflows folder (it may change what an import resolves to)', async () => {
    const log = recordingLogger();
    await workflowBundle(source, { cacheDir, logger: log.logger });
    writeFileSync(path.join(dir, 'extra.ts'), 'export const EXTRA = 1;\n');
    await workflowBundle(source, { cacheDir, logger: log.logger });
    expect(log.built()).toBe(2);
  }, 60_000);

  it('still gives the bundle when the cache folder cannot be written, and says so', async () => {
    const log = recordingLogger();
    const blocked = path.join(dir, 'not-a-folder');
    writeFileSync(blocked, 'a file where the cache folder would be');
    const bundle = await workflowBundle(source, { cacheDir: blocked, logger: log.logger });
    expect(bundle.code).toContain('hello-one');
    expect(log.lines.some((l) => l.level === 40 && l.msg.includes('could not be kept'))).toBe(true);
  }, 60_000);
});
