/**
 * The OpenAPI document against the routes the gateway really registers: every /v1 route once, with
 * its summary, its input schema, its success envelope and the error envelopes its rules give;
 * nothing outside /v1; and /docs serving Swagger UI from the package, with the bare-key note.
 */
import os from 'node:os';
import type { Transport } from '@connectrpc/connect';
import type { FastifyInstance } from 'fastify';
import { Access } from '../../gen/vps/options/v1/options_pb';
import { ERROR_CODES, type ErrorCode } from '../../core/errors';
import { accessOf } from '../../core/interceptors/access.interceptor';
import { createLogger } from '../../core/logger';
import { FolderMediaStore } from '../../core/media/folder-store';
import { buildApp } from '../../gateway/app';
import { TAGS } from '../../gateway/openapi/operations';
import type { RpcRoute } from '../../gateway/rpc-route';
import { v1Routes } from '../../gateway/routes/v1';
import { videoRoutes } from '../../gateway/routes/v1/videos';
import pkg from '../../package.json';

interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  enum?: unknown[];
}
interface Media {
  schema: Schema;
  examples?: Record<string, { value: { code: number; message: string; data: object } }>;
}
interface Operation {
  summary?: string;
  tags?: string[];
  deprecated?: boolean;
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; required?: boolean }[];
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { description: string; headers?: Record<string, unknown>; content?: Record<string, Media> }>;
}
interface Document {
  openapi: string;
  info: { version: string; description: string };
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, { type: string; scheme: string; description: string }> };
}

/** Routes that are not RPC rows: the uploads (writes, multipart) and the event stream (a read). */
const UPLOADS = ['POST /v1/videos', 'POST /v1/photos', 'POST /v1/vplat/v1.3/business/message/media/upload'];
const EVERY_ROUTE: ErrorCode[] = [1001, 1002, 2002, 5000];

/**
 * "METHOD /path" of every route, read from Fastify's printed route tree (as the SDK endpoint test
 * does): each line is a path segment under its parent, four columns per level, with its methods.
 */
function registeredRoutes(app: FastifyInstance): string[] {
  const parents: string[] = [];
  const routes: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^([│ ]*)[├└]── (\S+)(?: \(([^)]*)\))?$/.exec(line.trimEnd());
    if (!m) continue;
    const depth = m[1]!.length / 4;
    const path = (parents[depth - 1] ?? '') + m[2]!;
    parents[depth] = path;
    parents.length = depth + 1;
    // HEAD is Fastify's automatic twin of each GET, not a route of ours.
    for (const method of (m[3] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s && s !== 'HEAD'))
      routes.push(`${method} ${path}`);
  }
  return routes;
}

/** `/v1/videos/:id` as OpenAPI writes it: `/v1/videos/{id}`. */
const openapiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');

/** The spec codes an operation documents, across its error responses. */
function documentedCodes(op: Operation): number[] {
  return Object.entries(op.responses)
    .filter(([status]) => status !== '200')
    .flatMap(([, r]) => (r.content?.['application/json']?.schema.properties?.code?.enum ?? []) as number[])
    .sort((a, b) => a - b);
}

describe('the OpenAPI document', () => {
  let app: FastifyInstance;
  let doc: Document;
  let routes: string[];
  const operation = (route: string): Operation => {
    const [method, path] = route.split(' ') as [string, string];
    const op = doc.paths[openapiPath(path)]?.[method.toLowerCase()];
    if (!op) throw new Error(`${route} is not in the document`);
    return op;
  };

  beforeAll(async () => {
    // Routes reach core only when called: documenting them needs no core behind the transport.
    app = await buildApp({
      transport: {} as Transport,
      logger: createLogger('silent', 'test'),
      media: new FolderMediaStore(os.tmpdir()),
      maxUploadBytes: 1024,
    });
    await app.ready();
    const res = await app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    doc = res.json<Document>();
    routes = registeredRoutes(app).filter((r) => r.split(' ')[1]!.startsWith('/v1/'));
  });
  afterAll(() => app?.close());

  it('is OpenAPI 3.1.0 with the package version', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe(pkg.version);
  });

  it('has every /v1 route exactly once, and nothing else', () => {
    expect(routes.length).toBeGreaterThan(50);
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    expect(documented.sort()).toEqual(routes.map((r) => r.replace(/ (.*)$/, (_, p: string) => ` ${openapiPath(p)}`)).sort());
    expect(Object.keys(doc.paths).filter((p) => !p.startsWith('/v1/'))).toEqual([]);
  });

  it('gives each operation its summary, one resource tag, the bearer key and a success envelope', () => {
    for (const route of routes) {
      const op = operation(route);
      expect({ route, summary: typeof op.summary === 'string' && op.summary.length > 0 }).toEqual({ route, summary: true });
      expect(op.tags).toHaveLength(1);
      expect(TAGS).toContain(op.tags![0]);
      expect(op.security).toEqual([{ apiKey: [] }]);
      expect(op.responses['200']?.content).toBeDefined();
    }
    expect(operation('GET /v1/seats').responses['200']!.content!['application/json']!.schema.properties!.code).toEqual({
      type: 'number',
      enum: [0],
    });
  });

  it('documents the parameters and body of every RPC route from its schema', () => {
    for (const route of [...v1Routes, ...videoRoutes] as RpcRoute[]) {
      const op = operation(`${route.method} /v1${route.url}`);
      const names = (where: string) =>
        (op.parameters ?? [])
          .filter((p) => p.in === where)
          .map((p) => p.name)
          .sort();
      const props = (schema: unknown) => Object.keys((schema as Schema | undefined)?.properties ?? {}).sort();
      expect({ route: route.url, path: names('path'), query: names('query') }).toEqual({
        route: route.url,
        path: props(route.schema.params),
        query: props(route.schema.querystring),
      });
      const body = op.requestBody?.content['application/json']?.schema;
      expect({ route: route.url, body: props(body) }).toEqual({ route: route.url, body: props(route.schema.body) });
    }
  });

  it('documents the multipart uploads and the event stream', () => {
    expect(Object.keys(operation('POST /v1/videos').requestBody!.content).sort()).toEqual(['application/json', 'multipart/form-data']);
    expect(operation('POST /v1/videos').requestBody!.content['multipart/form-data']!.schema.properties!.file).toMatchObject({
      type: 'string',
      format: 'binary',
    });
    expect(Object.keys(operation('POST /v1/photos').requestBody!.content)).toEqual(['multipart/form-data']);
    expect(Object.keys(operation('GET /v1/events/stream').responses['200']!.content!)).toEqual(['text/event-stream']);
    expect(
      operation('GET /v1/events/stream')
        .parameters!.map((p) => p.name)
        .sort(),
    ).toEqual(['includeTest', 'lastEventId', 'types']);
  });

  it('documents the error codes every route, every input route and every write can give', () => {
    const rpc = new Map(([...v1Routes, ...videoRoutes] as RpcRoute[]).map((r) => [`${r.method} /v1${r.url}`, r]));
    for (const route of routes) {
      const op = operation(route);
      const codes = documentedCodes(op);
      expect({ route, codes }).toEqual({ route, codes: expect.arrayContaining(EVERY_ROUTE) });
      const hasInput = !!(op.parameters?.length || op.requestBody);
      expect({ route, validation: codes.includes(2001) }).toEqual({ route, validation: hasInput });
      const rpcRoute = rpc.get(route);
      const write = rpcRoute ? accessOf(rpcRoute.rpc) === Access.WRITE : UPLOADS.includes(route);
      expect({ route, planExpired: codes.includes(1003) }).toEqual({ route, planExpired: write });
    }
  });

  it('documents 1005, 1007 and the platform codes where the route can give them', () => {
    expect(documentedCodes(operation('GET /v1/seats'))).toEqual([1001, 1002, 2002, 5000]);
    expect(documentedCodes(operation('DELETE /v1/videos/:id'))).toEqual([1001, 1002, 1003, 1005, 2001, 2002, 5000]);
    expect(documentedCodes(operation('GET /v1/webhook-endpoints'))).toEqual([1001, 1002, 2002, 5000]);
    expect(documentedCodes(operation('POST /v1/vplat/v1.3/business/video/publish'))).toEqual([
      1001, 1002, 1003, 1005, 1007, 2001, 2002, 3001, 3002, 5000,
    ]);
    expect(documentedCodes(operation('GET /v1/vplat/v1.3/business/publish/status'))).toEqual([
      1001, 1002, 1005, 1007, 2001, 2002, 3001, 3002, 5000,
    ]);
    // Read from the database only: the platform is not called while the caller waits.
    expect(documentedCodes(operation('GET /v1/publish/records'))).not.toContain(3001);
  });

  it('renders each code as an envelope example under its HTTP status, with Retry-After on 429', () => {
    for (const route of routes) {
      for (const [status, response] of Object.entries(operation(route).responses)) {
        if (status === '200') continue;
        const media = response.content!['application/json']!;
        const codes = media.schema.properties!.code!.enum as ErrorCode[];
        for (const code of codes) {
          expect(ERROR_CODES[code].http).toBe(Number(status));
          expect(media.examples?.[String(code)]?.value).toEqual({ code, message: ERROR_CODES[code].message, data: {} });
          expect(response.description).toContain(`${code}: ${ERROR_CODES[code].message}`);
        }
      }
      expect(operation(route).responses['429']!.headers).toHaveProperty('Retry-After');
    }
  });

  it('marks the deprecated routes, and only those', () => {
    const deprecated = routes.filter((r) => operation(r).deprecated === true).sort();
    expect(deprecated).toEqual(['GET /v1/publish/stats', 'GET /v1/publish/vplat/status', 'POST /v1/publish/vplat']);
  });

  it('declares the bearer scheme and tells the reader to paste the bare key', () => {
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.securitySchemes.apiKey!.description).toMatch(/bare key/);
    expect(doc.info.description).toMatch(/bare API key/);
    expect(doc.info.description).toMatch(/adds the `Bearer ` prefix itself/);
    expect(doc.info.description).toMatch(/refused with 1001/);
  });

  it('serves Swagger UI at /docs from the package, locking the page to its own origin', async () => {
    const page = await app.inject({ method: 'GET', url: '/docs' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toMatch(/default-src 'self'.*script-src 'self'/);
    const sources = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(sources).toEqual(expect.arrayContaining(['/docs/static/swagger-ui-bundle.js', '/docs/static/swagger-ui.css']));
    for (const source of sources) {
      const asset = await app.inject({ method: 'GET', url: source });
      expect({ source, status: asset.statusCode }).toEqual({ source, status: 200 });
    }
    const init = await app.inject({ method: 'GET', url: '/docs/static/initializer.js' });
    expect(init.body).toContain('"url":"/openapi.json"');
    expect(init.body).toContain('"persistAuthorization":false');
    expect(init.body).toContain('"tryItOutEnabled":true');
  });
});
