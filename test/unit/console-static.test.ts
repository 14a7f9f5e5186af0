/**
 * The console's files as the gateway serves them: built assets with long caching, index.html for
 * console routes (history routing), /console/api left to the API, the config the console reads,
 * and a plain 503 while the console is not built.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { PUBLISH_STATUSES as CORE_PUBLISH_STATUSES } from '../../core/db/schema';
import type { PublishRecordJson } from '../../gateway/schemas/publishing';
import { registerConsoleStatic, type ConsoleConfigJson } from '../../gateway/routes/console-static';
import { PUBLISH_STATUSES, type ConsoleConfig, type PublishRecord } from '../../console/src/types';

const INDEX = '<!doctype html><title>Console</title><div id="app"></div>';
const SCRIPT = 'console.log("console")';
const SECRET = 'VPS_ENCRYPTION_KEY=do-not-serve';

async function appWith(distDir: string, temporalUiUrl: string | null = 'http://localhost:8233'): Promise<FastifyInstance> {
  const app = Fastify();
  // The gateway's own 404 is the envelope; a stand-in shows which requests reach it.
  app.setNotFoundHandler((req, reply) => reply.code(404).send({ code: 1005, message: `no route ${req.method} ${req.url}`, data: {} }));
  app.get('/console/api/session', async () => ({ code: 0, message: 'ok', data: { signedIn: false } }));
  await registerConsoleStatic(app, { distDir, temporalUiUrl });
  await app.ready();
  return app;
}

describe('console static files', () => {
  let dist: string;
  let app: FastifyInstance;

  beforeAll(async () => {
    // The build sits next to a file it must never expose.
    const checkout = mkdtempSync(path.join(os.tmpdir(), 'console-checkout-'));
    writeFileSync(path.join(checkout, 'secret.txt'), SECRET);
    dist = path.join(checkout, 'dist');
    mkdirSync(path.join(dist, 'assets'), { recursive: true });
    writeFileSync(path.join(dist, 'index.html'), INDEX);
    writeFileSync(path.join(dist, 'assets', 'index-abc123.js'), SCRIPT);
    writeFileSync(path.join(dist, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    app = await appWith(dist);
  });
  afterAll(async () => {
    await app?.close();
    rmSync(path.dirname(dist), { recursive: true, force: true });
  });

  it('serves built assets with long-lived caching', async () => {
    const res = await app.inject({ method: 'GET', url: '/console/assets/index-abc123.js' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/javascript/);
    expect(res.headers['cache-control']).toContain('immutable');
    expect(res.body).toBe(SCRIPT);
  });

  it('serves other files of the build, revalidated', async () => {
    const res = await app.inject({ method: 'GET', url: '/console/favicon.svg' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=0');
  });

  it.each(['/console/', '/console/keys', '/console/events/evt_123', '/console/deliveries?endpoint=whe_1&status=failed'])(
    'answers index.html for the console route %s',
    async (url) => {
      const res = await app.inject({ method: 'GET', url, headers: { accept: 'text/html' } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(res.body).toBe(INDEX);
    },
  );

  it('redirects /console to /console/ so relative URLs resolve', async () => {
    const res = await app.inject({ method: 'GET', url: '/console' });
    expect(res.statusCode).toBe(301);
    expect(res.headers.location).toBe('/console/');
  });

  it('answers 404 for a missing asset instead of the page, so a stale script fails visibly', async () => {
    const res = await app.inject({ method: 'GET', url: '/console/assets/index-gone.js' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ code: 1005 });
  });

  it.each(['/console/..%2fsecret.txt', '/console/assets/..%2f..%2fsecret.txt', '/console/assets/%2e%2e/%2e%2e/secret.txt'])(
    'never serves files outside the build: %s',
    async (url) => {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(404);
      expect(res.body).not.toContain(SECRET);
    },
  );

  it('leaves /console/api to the API: its routes answer, unknown paths get the 404 envelope', async () => {
    const known = await app.inject({ method: 'GET', url: '/console/api/session' });
    expect(known.json()).toEqual({ code: 0, message: 'ok', data: { signedIn: false } });
    const unknown = await app.inject({ method: 'GET', url: '/console/api/nothing-here', headers: { accept: 'text/html' } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ code: 1005 });
  });

  it('tells the console where the Temporal UI is', async () => {
    const res = await app.inject({ method: 'GET', url: '/console/config.json' });
    expect(res.statusCode).toBe(200);
    expect(res.json<ConsoleConfigJson>()).toEqual({ temporalUiUrl: 'http://localhost:8233', temporalNamespace: 'default' });
  });

  it('says the Temporal UI is unknown with null, which hides the workflow links', async () => {
    const bare = await appWith(dist, null);
    try {
      expect((await bare.inject({ method: 'GET', url: '/console/config.json' })).json()).toEqual({
        temporalUiUrl: null,
        temporalNamespace: 'default',
      });
    } finally {
      await bare.close();
    }
  });
});

describe('console not built', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await appWith(path.join(os.tmpdir(), `console-dist-missing-${process.pid}`));
  });
  afterAll(() => app?.close());

  it('answers a browser with a 503 page naming the build script', async () => {
    const res = await app.inject({ method: 'GET', url: '/console/keys', headers: { accept: 'text/html,application/xhtml+xml' } });
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('scripts/build-console.sh');
  });

  it("answers a program with the 5000 envelope and the spec table's HTTP 500", async () => {
    const res = await app.inject({ method: 'GET', url: '/console/assets/index-abc123.js' });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toMatchObject({ code: 5000, message: expect.stringContaining('scripts/build-console.sh') });
  });

  it('still serves its config and leaves /console/api alone', async () => {
    expect((await app.inject({ method: 'GET', url: '/console/config.json' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/console/api/session' })).statusCode).toBe(200);
  });
});

describe('console types agree with the API', () => {
  it('offers exactly the publish statuses core knows', () => {
    expect([...PUBLISH_STATUSES]).toEqual([...CORE_PUBLISH_STATUSES]);
  });

  it('reads publish records and the config in the shapes the gateway sends (checked by the type checker)', () => {
    const asConsoleRecord = (r: PublishRecordJson): PublishRecord => r;
    const asConsoleConfig = (c: ConsoleConfigJson): ConsoleConfig => c;
    expect([asConsoleRecord, asConsoleConfig]).toHaveLength(2);
  });
});
