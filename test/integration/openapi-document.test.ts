/**
 * The OpenAPI document as a reader's tools fetch it, over HTTP from a listening gateway: a relative
 * server, so "Try it out" and generated clients call whatever origin served it; an operationId on
 * every operation, unique; the shared schemas as components that operations refer to; the push as
 * the 3.1 `webhooks` entry with its signature header, and beside it every event type of the
 * catalogue with its platform and event name; and Redocly's linter passing it with the
 * repository's redocly.yaml. This test is what runs the lint in CI.
 */
import { execFile } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Transport } from '@connectrpc/connect';
import type { FastifyInstance } from 'fastify';
import { createLogger } from '../../core/logger';
import { FolderMediaStore } from '../../core/media/folder-store';
import { EVENT_CATALOGUE } from '../../core/events/event-types';
import { buildApp } from '../../gateway/app';
import { REPO_ROOT } from '../helpers/processes';

const run = promisify(execFile);

interface Operation {
  operationId?: string;
  parameters?: { name: string; in: string; required?: boolean; description?: string; schema?: { pattern?: string } }[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Record<string, unknown> }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: Record<string, unknown> }> }>;
  security?: unknown[];
}
interface Document {
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }> };
}

interface LintReport {
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** Every place in `value` where an object has exactly these property names: an inlined copy of a schema. */
function inlinedCopies(value: unknown, names: string[], at = '#'): string[] {
  if (!value || typeof value !== 'object') return [];
  const own = (value as { properties?: object }).properties;
  const here = own && Object.keys(own).sort().join() === [...names].sort().join() ? [at] : [];
  return [...here, ...Object.entries(value).flatMap(([key, v]) => inlinedCopies(v, names, `${at}/${key}`))];
}

describe('the OpenAPI document over HTTP', () => {
  let app: FastifyInstance;
  let documentUrl: string;
  let doc: Document;
  const operations = () =>
    Object.entries(doc.paths).flatMap(([p, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ route: `${method.toUpperCase()} ${p}`, op })),
    );

  beforeAll(async () => {
    // Routes reach core only when called: serving the document needs no core behind the transport.
    // A public URL is configured, as in production, and must not become the document's server.
    app = await buildApp({
      transport: {} as Transport,
      logger: createLogger('silent', 'test'),
      media: new FolderMediaStore(os.tmpdir()),
      maxUploadBytes: 1024,
      publicUrl: 'https://api.example.com',
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    documentUrl = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/openapi.json`;
    const res = await fetch(documentUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    doc = (await res.json()) as Document;
  });
  afterAll(() => app?.close());

  it('names a relative server, so calls go to whichever origin served the document', () => {
    expect(doc.servers.map((s) => s.url)).toEqual(['/']);
    expect(JSON.stringify(doc)).not.toContain('api.example.com');
  });

  it('gives every operation a readable operationId, unique across the document and its webhooks', () => {
    const ids = [
      ...operations(),
      ...Object.values(doc.webhooks).flatMap((ops) => Object.values(ops).map((op) => ({ route: 'webhook', op }))),
    ].map(({ route, op }) => ({ route, id: op.operationId }));
    expect(ids.length).toBeGreaterThan(50);
    for (const { route, id } of ids) expect({ route, id }).toEqual({ route, id: expect.stringMatching(/^[a-z][A-Za-z0-9]*$/) });
    const seen = ids.map((i) => i.id);
    expect(seen.filter((id, i) => seen.indexOf(id) !== i)).toEqual([]);
    // Derived from method and path, so they stay put as long as the route does.
    expect(doc.paths['/v1/seats']!.get!.operationId).toBe('getSeats');
    expect(doc.paths['/v1/videos/{id}']!.delete!.operationId).toBe('deleteVideosById');
    expect(doc.paths['/v1/vplat/v1.3/business/comment/reply/create']!.post!.operationId).toBe('postBusinessCommentReplyCreate');
    expect(doc.paths['/v1/webhook-endpoints/{id}/rotate-secret']!.post!.operationId).toBe('postWebhookEndpointsByIdRotateSecret');
  });

  it('declares the envelope, error, event and delivery once, as components the operations refer to', () => {
    const schemas = doc.components.schemas;
    expect(Object.keys(schemas)).toEqual(expect.arrayContaining(['Envelope', 'Error', 'Event', 'Delivery', 'DeliveryAttempt']));
    expect(schemas.Envelope!.required).toEqual(['code', 'message', 'data']);
    expect(Object.keys(schemas.Event!.properties!).sort()).toEqual([
      'data',
      'event',
      'id',
      'occurred_at',
      'platform',
      'received_at',
      'seat_id',
      'type',
    ]);
    expect(schemas.Delivery!.properties!.attempts).toEqual({ type: 'array', items: ref('DeliveryAttempt') });

    const json = (route: string, status: string) => {
      const [method, p] = route.split(' ') as [string, string];
      return doc.paths[p]![method.toLowerCase()]!.responses[status]!.content!['application/json']!.schema as {
        allOf?: unknown[];
        properties: Record<string, any>;
      };
    };
    for (const { route, op } of operations()) {
      for (const [status, response] of Object.entries(op.responses)) {
        const schema = response.content?.['application/json']?.schema as { allOf?: unknown[] } | undefined;
        if (!schema) continue; // the event stream and the media bytes are not envelopes
        expect({ route, status, allOf: schema.allOf }).toEqual({ route, status, allOf: [ref(status === '200' ? 'Envelope' : 'Error')] });
      }
    }
    expect(json('GET /v1/events', '200').properties.data.properties.items).toEqual({ type: 'array', items: ref('Event') });
    expect(json('GET /v1/events/{id}', '200').properties.data).toEqual(ref('Event'));
    expect(json('GET /v1/events/{id}/deliveries', '200').properties.data.properties.items).toEqual({
      type: 'array',
      items: ref('Delivery'),
    });
    expect(json('POST /v1/webhook-endpoints/{id}/test', '200').properties.data.properties).toEqual({
      event: ref('Event'),
      delivery: ref('Delivery'),
    });
    expect(json('GET /v1/seats', '401').properties.code).toEqual({ type: 'integer', enum: [1001] });

    // Nowhere else is the event or the delivery spelled out again.
    const outsideComponents = { paths: doc.paths, webhooks: doc.webhooks };
    expect(inlinedCopies(outsideComponents, Object.keys(schemas.Event!.properties!))).toEqual([]);
    expect(inlinedCopies(outsideComponents, Object.keys(schemas.Delivery!.properties!))).toEqual([]);
  });

  it('describes the push as a webhook: a signed POST of the event object, not called with an API key', () => {
    const push = doc.webhooks.event!.post!;
    expect(push.operationId).toBe('receiveEvent');
    expect(push.security).toEqual([]);
    expect(push.requestBody).toEqual({ required: true, content: { 'application/json': { schema: ref('Event') } } });
    const signature = push.parameters!.find((p) => p.name.toLowerCase() === 'x-service-signature');
    expect(signature).toMatchObject({ in: 'header', required: true });
    expect(signature!.description).toMatch(/t=<unix seconds>,v1=/);
    expect(new RegExp(signature!.schema!.pattern!).test(`t=1795334400,v1=${'ab'.repeat(32)},v1=${'cd'.repeat(32)}`)).toBe(true);
    expect(push.parameters!.map((p) => p.name.toLowerCase())).toEqual(
      expect.arrayContaining(['x-service-event-id', 'x-service-delivery-id']),
    );
    expect(Object.keys(push.responses)).toEqual(expect.arrayContaining(['2XX', '410']));
  });

  it('lists the whole event catalogue in webhooks: each type with its platform, its event name and what data holds', () => {
    expect(Object.keys(doc.webhooks)).toEqual(['event', ...Object.keys(EVENT_CATALOGUE)]);
    const push = doc.webhooks.event!.post!;
    const named = (type: string) => {
      const op = doc.webhooks[type]!.post! as Operation & { description: string };
      const schema = op.requestBody!.content['application/json']!.schema as {
        allOf: unknown[];
        properties: Record<string, { const?: string; description?: string }>;
      };
      expect(schema.allOf).toEqual([ref('Event')]);
      // Pushed like any event: the same signature headers and answers.
      expect(op.parameters).toEqual(push.parameters);
      expect(op.responses).toEqual(push.responses);
      expect(op.security).toEqual([]);
      return {
        operationId: op.operationId,
        platform: schema.properties.platform!.const,
        type: schema.properties.type!.const,
        event: schema.properties.event!.const,
        data: schema.properties.data!.description,
        description: op.description,
      };
    };
    expect(named('vplat.comment.created')).toMatchObject({
      operationId: 'receiveVplatCommentCreated',
      platform: 'vplat',
      type: 'vplat.comment.created',
      event: 'comment.update',
      data: expect.stringMatching(/parent_comment_id is the number 0 for a top-level comment/),
    });
    expect(named('vplat.message.sent')).toMatchObject({
      platform: 'vplat',
      event: 'im_send_msg',
      description: expect.stringContaining('`message.send`'),
    });
    // Made by the service: no official original, so the event is the type.
    expect(named('vplat.publish.status_changed')).toMatchObject({
      platform: 'vplat',
      event: 'vplat.publish.status_changed',
      data: expect.stringContaining('previous_status'),
    });
    expect(named('vplat.account.authorization_removed')).toMatchObject({ platform: 'vplat', event: 'vplat.account.authorization_removed' });
    expect(named('service.endpoint.disabled')).toMatchObject({
      platform: 'service',
      event: 'service.endpoint.disabled',
      data: 'endpoint_id, url, reason',
    });
    expect(named('service.endpoint.test')).toMatchObject({
      platform: 'service',
      event: 'service.endpoint.test',
      description: expect.stringContaining('includeTest=true'),
    });
    // The Event component says where the catalogue is and what `event` holds for the service's own events.
    const fields = doc.components.schemas.Event!.properties as Record<string, { description: string }>;
    expect(fields.type!.description).toContain('webhooks');
    expect(fields.event!.description).toMatch(/makes itself/);
  });

  it('passes npx redocly lint with the repository configuration', async () => {
    const bin = path.join(REPO_ROOT, 'node_modules', '.bin', 'redocly');
    // The linter fetches the document from the server like any tool; redocly.yaml turns telemetry
    // off, and the variables keep it from looking for updates.
    const { stdout } = await run(bin, ['lint', documentUrl, '--config', path.join(REPO_ROOT, 'redocly.yaml'), '--format', 'json'], {
      cwd: REPO_ROOT,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      maxBuffer: 16 * 1024 * 1024,
    }).catch((err: { stdout?: string; stderr?: string }) => {
      // Errors make it exit non-zero; the report is on stdout all the same.
      if (!err.stdout) throw err;
      return { stdout: err.stdout };
    });
    const report = JSON.parse(stdout) as LintReport;
    const problems = report.problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);
    expect({ errors: problems.filter((p) => p.startsWith('error')) }).toEqual({ errors: [] });
    // Warnings do not fail the run; they are shown so that they get looked at.
    const warnings = problems.filter((p) => !p.startsWith('error'));
    if (warnings.length > 0) console.warn(`redocly lint: ${warnings.length} warnings\n${warnings.join('\n')}`);
  }, 60_000);
});
