/**
 * The SDK's endpoint table against the routes the gateway really registers: every /v1 route has
 * its entry and every entry its route, so a route added without a client method (or a method left
 * behind by a removed route) fails here. The SSE stream is the one route outside the table: it has
 * its own reader (sdk/event-stream.ts), since it answers with a stream rather than one envelope.
 */
import os from 'node:os';
import type { Transport } from '@connectrpc/connect';
import type { FastifyInstance } from 'fastify';
import { createLogger } from '../../core/logger';
import { FolderMediaStore } from '../../core/media/folder-store';
import { buildApp } from '../../gateway/app';
import type { Endpoint } from '../../sdk/endpoint';
import { ENDPOINTS } from '../../sdk/endpoints';

const OUTSIDE_THE_TABLE = ['GET /v1/events/stream'];
/** One route that takes either body (JSON with sourceUrl, or a multipart upload): one entry for each. */
const TWO_BODIES = ['POST /v1/videos'];

interface Entry {
  name: string;
  key: string;
  endpoint: Endpoint;
}

function entries(tree: object, prefix = ''): Entry[] {
  return Object.entries(tree).flatMap(([name, value]: [string, unknown]) => {
    const endpoint = value as Endpoint;
    if (typeof endpoint.method === 'string' && typeof endpoint.path === 'string')
      return [{ name: `${prefix}${name}`, key: `${endpoint.method} ${endpoint.path}`, endpoint }];
    return entries(value as object, `${prefix}${name}.`);
  });
}

/**
 * "METHOD /path" of every route, read from Fastify's printed route tree: each line is a path
 * segment under its parent (four columns per level) with the methods it answers.
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

describe('the SDK endpoint table', () => {
  let app: FastifyInstance;
  let routes: string[];
  const table = entries(ENDPOINTS);

  beforeAll(async () => {
    // Routes reach core only when called: registering them needs no core behind the transport.
    app = await buildApp({
      transport: {} as Transport,
      logger: createLogger('silent', 'test'),
      media: new FolderMediaStore(os.tmpdir()),
      maxUploadBytes: 1024,
    });
    await app.ready();
    routes = registeredRoutes(app).filter((r) => r.split(' ')[1]!.startsWith('/v1/'));
  });
  afterAll(() => app?.close());

  it('reads the registered routes (the check below is not vacuous)', () => {
    expect(routes.length).toBeGreaterThan(50);
    expect(routes).toEqual(
      expect.arrayContaining([
        'GET /v1/seats',
        'DELETE /v1/videos/:id',
        'POST /v1/vplat/v1.3/business/message/auto_message/status/update',
        ...OUTSIDE_THE_TABLE,
      ]),
    );
  });

  it('has exactly one entry for every /v1 route but the event stream', () => {
    const missing = routes.filter((r) => !OUTSIDE_THE_TABLE.includes(r) && !table.some((e) => e.key === r));
    expect(missing).toEqual([]);
    const repeated = routes.filter((r) => !TWO_BODIES.includes(r) && table.filter((e) => e.key === r).length > 1);
    expect(repeated).toEqual([]);
  });

  it('has one upload entry and one JSON entry for the route that takes both', () => {
    for (const route of TWO_BODIES) {
      expect(routes).toContain(route);
      expect(
        table
          .filter((e) => e.key === route)
          .map((e) => !!e.endpoint.upload)
          .sort(),
      ).toEqual([false, true]);
    }
  });

  it('has no entry without a route, and leaves the event stream out', () => {
    expect(table.filter((e) => !routes.includes(e.key)).map((e) => `${e.name}: ${e.key}`)).toEqual([]);
    expect(table.filter((e) => OUTSIDE_THE_TABLE.includes(e.key))).toEqual([]);
  });

  it('marks the multipart routes as uploads, and only the shop publish checks for an earlier attempt', () => {
    expect(
      table
        .filter((e) => e.endpoint.upload)
        .map((e) => e.key)
        .sort(),
    ).toEqual(['POST /v1/photos', 'POST /v1/videos', 'POST /v1/vplat/v1.3/business/message/media/upload']);
    expect(table.filter((e) => e.endpoint.checkEarlierAttempt).map((e) => e.name)).toEqual(['publish.shop']);
  });
});
