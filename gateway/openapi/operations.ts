/**
 * How a /v1 route appears in the OpenAPI document: its resource (the tag), the bearer key, and the
 * error envelopes it can answer. The codes come from a few rules over what the route declares (its
 * access, its input fields, its resource), with statuses and messages read from core's code table,
 * so the document cannot drift from what the gateway renders.
 */
import type { FastifySchema, RouteOptions } from 'fastify';
import { Access } from '../../gen/vps/options/v1/options_pb';
import { ERROR_CODES, type ErrorCode } from '../../core/errors';

export const SECURITY_SCHEME = 'apiKey';

/**
 * Every /v1 route's resource, first match wins, and whether its calls reach the official platform
 * while the caller waits (then 3001 and 3002 are possible). A route no row matches fails the
 * document, so a new route gets its row here.
 */
const RESOURCES: readonly { tag: string; paths: RegExp; callsPlatform: boolean }[] = [
  { tag: 'Seats', paths: /^\/v1\/seats$/, callsPlatform: false },
  { tag: 'Videos', paths: /^\/v1\/videos(\/|$)/, callsPlatform: false },
  { tag: 'Video publishing', paths: /^\/v1\/(vplat\/v1\.3\/business\/((video|photo)\/publish|publish\/(status|location)|hashtag\/suggestion)|publish\/vplat(\/status)?)$/, callsPlatform: true },
  { tag: 'Publish records', paths: /^\/v1\/publish\/records$/, callsPlatform: false },
  // Before the shop publish row: a pre-check is queued to a workflow, the caller never waits on the platform.
  { tag: 'Shop pre-checks', paths: /^\/v1\/publish\/tts\/precheck(\/|$)/, callsPlatform: false },
  { tag: 'Shop publishing', paths: /^\/v1\/publish\/tts(\/status)?$/, callsPlatform: true },
  { tag: 'Shop catalog', paths: /^\/v1\/(products\/query|music\/search|photos)$/, callsPlatform: true },
  { tag: 'Comments', paths: /^\/v1\/vplat\/v1\.3\/business\/comment\//, callsPlatform: true },
  { tag: 'Messages', paths: /^\/v1\/vplat\/v1\.3\/business\/message\//, callsPlatform: true },
  { tag: 'Insights', paths: /^\/v1\/(vplat\/v1\.3\/business\/(get|benchmark|video\/(list|settings))|publish\/stats)$/, callsPlatform: true },
  { tag: 'Webhook endpoints', paths: /^\/v1\/webhook-endpoints(\/|$)/, callsPlatform: false },
  { tag: 'Events', paths: /^\/v1\/events(\/|$)/, callsPlatform: false },
];

export const TAGS = RESOURCES.map((r) => r.tag);

/** Input fields naming the caller's account: the account must be bound to one of the caller's seats (1007). */
const ACCOUNT_FIELDS = new Set(['account', 'accountId']);
/** Input fields naming a resource by id (`id`, `videoId`, `postIds`): it may not exist or not be the caller's (1005). */
const ID_FIELD = /(^id|Ids?)$/;

/**
 * The codes a route documents. Every route: 1001, 1002 and 2002 (checked before anything else) and
 * 5000. With input: 2001. Writes: 1003. Naming an account: 1007; naming an id: 1005. Reaching the
 * platform: 3001, 3002. Listed in code order.
 */
function documentedErrors(route: { access: Access; fields: readonly string[]; hasInput: boolean; callsPlatform: boolean }): ErrorCode[] {
  const codes: ErrorCode[] = [1001, 1002, 2002, 5000];
  if (route.hasInput) codes.push(2001);
  if (route.access === Access.WRITE) codes.push(1003);
  if (route.fields.some((f) => ACCOUNT_FIELDS.has(f))) codes.push(1007);
  if (route.fields.some((f) => !ACCOUNT_FIELDS.has(f) && ID_FIELD.test(f))) codes.push(1005);
  if (route.callsPlatform) codes.push(3001, 3002);
  return codes.sort((a, b) => a - b);
}

/** One response per HTTP status, listing its codes, with one example envelope per code. */
function errorResponses(codes: readonly ErrorCode[]): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_CODES[code].http;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, group]) => [
      status,
      {
        description: group.map((code) => `${code}: ${ERROR_CODES[code].message}`).join('; '),
        ...(group.includes(2002)
          ? { headers: { 'Retry-After': { type: 'integer', minimum: 1, description: 'Whole seconds to wait before the next request' } } }
          : {}),
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['code', 'message', 'data'],
              properties: {
                code: { type: 'integer', enum: group },
                message: { type: 'string', description: 'The reason; `field: reason` when input is refused' },
                data: { type: 'object', description: 'Details, such as the refused field; often empty' },
              },
            },
            examples: Object.fromEntries(
              group.map((code) => [String(code), { summary: `${code}: ${ERROR_CODES[code].message}`, value: { code, message: ERROR_CODES[code].message, data: {} } }]),
            ),
          },
        },
      },
    ]),
  );
}

type JsonSchema = { properties?: Record<string, unknown>; anyOf?: JsonSchema[]; oneOf?: JsonSchema[]; allOf?: JsonSchema[]; content?: Record<string, { schema: JsonSchema }> };

/** Property names of a params, query or body schema, through unions and per-content-type bodies. */
function fieldNames(schema: JsonSchema | undefined): string[] {
  if (!schema) return [];
  const nested = [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? []), ...Object.values(schema.content ?? {}).map((c) => c.schema)];
  return [...Object.keys(schema.properties ?? {}), ...nested.flatMap(fieldNames)];
}

/** The document's view of a /v1 route; the route's own schema is left as Fastify uses it. */
export function v1Operation(url: string, route: RouteOptions): FastifySchema {
  const resource = RESOURCES.find((r) => r.paths.test(url));
  if (!resource) throw new Error(`${url}: no resource in gateway/openapi/operations.ts matches this route`);
  const access = route.config?.access;
  if (access === undefined) throw new Error(`${route.method} ${url}: a /v1 route declares its access in config.access`);
  const schema = (route.schema ?? {}) as FastifySchema & { response?: Record<string, Record<string, unknown>> };
  const inputs = [schema.params, schema.querystring, schema.body] as (JsonSchema | undefined)[];
  const codes = documentedErrors({
    access,
    fields: inputs.flatMap(fieldNames),
    hasInput: inputs.some((s) => s !== undefined),
    callsPlatform: resource.callsPlatform,
  });
  const success = schema.response?.[200];
  return {
    ...schema,
    tags: [resource.tag],
    security: [{ [SECURITY_SCHEME]: [] }],
    response: {
      ...schema.response,
      ...(success && !success.description ? { 200: { ...success, 'x-response-description': 'code 0, message ok: data holds the result' } } : {}),
      ...errorResponses(codes),
    },
  } as FastifySchema;
}
