/**
 * How a /v1 route appears in the OpenAPI document: its resource (the tag), the bearer key, and the
 * error envelopes it can answer. The codes come from a few rules over what the route declares (its
 * access, its input fields, its resource), with statuses and messages read from core's code table,
 * so the document cannot drift from what the gateway renders.
 */
import type { FastifySchema, RouteOptions } from 'fastify';
import { Access } from '../../gen/vps/options/v1/options_pb';
import { ERROR_CODES, type ErrorCode } from '../../core/errors';
import { BUSINESS } from '../routes/v1/paths';
import { componentRef, documentedSuccess, withComponentRefs } from './components';

export const SECURITY_SCHEME = 'apiKey';

/**
 * Every /v1 route's resource, first match wins, what it is about (the tag's description), and
 * whether its calls reach the official platform while the caller waits (then 3001 and 3002 are
 * possible). A route no row matches fails the document, so a new route gets its row here.
 */
const RESOURCES: readonly { tag: string; about: string; paths: RegExp; callsPlatform: boolean }[] = [
  { tag: 'Seats', about: 'Your seats and the platform accounts bound to them', paths: /^\/v1\/seats$/, callsPlatform: false },
  { tag: 'Videos', about: 'The video library: uploads and their URLs, valid 7 days', paths: /^\/v1\/videos(\/|$)/, callsPlatform: false },
  {
    tag: 'Video publishing',
    about: 'Video and photo posts on the video track, their status, and aids for writing them',
    paths:
      /^\/v1\/(vplat\/v1\.3\/business\/((video|photo)\/publish|publish\/(status|location)|hashtag\/suggestion)|publish\/vplat(\/status)?)$/,
    callsPlatform: true,
  },
  { tag: 'Publish records', about: 'Every publish of both tracks, as a snapshot', paths: /^\/v1\/publish\/records$/, callsPlatform: false },
  // Before the shop publish row: a pre-check is queued to a workflow, the caller never waits on the platform.
  {
    tag: 'Shop pre-checks',
    about: 'Checks of a shop post before publishing, within a daily quota',
    paths: /^\/v1\/publish\/tts\/precheck(\/|$)/,
    callsPlatform: false,
  },
  {
    tag: 'Shop publishing',
    about: 'Product-linked videos on the shop track, and their status',
    paths: /^\/v1\/publish\/tts(\/status)?$/,
    callsPlatform: true,
  },
  {
    tag: 'Shop catalog',
    about: 'Products, commercial music and cover photos for shop posts',
    paths: /^\/v1\/(products\/query|music\/search|photos)$/,
    callsPlatform: true,
  },
  {
    tag: 'Comments',
    about: "Comments on the account's posts: list, reply, like, hide, delete",
    paths: /^\/v1\/vplat\/v1\.3\/business\/comment\//,
    callsPlatform: true,
  },
  {
    tag: 'Messages',
    about: 'Direct messages, their media, and automatic messages',
    paths: /^\/v1\/vplat\/v1\.3\/business\/message\//,
    callsPlatform: true,
  },
  {
    tag: 'Insights',
    about: 'Account and post metrics, benchmarks and publishing settings',
    paths: /^\/v1\/(vplat\/v1\.3\/business\/(get|benchmark|video\/(list|settings))|publish\/stats)$/,
    callsPlatform: true,
  },
  {
    tag: 'Webhook endpoints',
    about: 'Where events are pushed (see the webhook `event` for the push itself), and their delivery logs',
    paths: /^\/v1\/(webhook-endpoints(\/|$)|deliveries$)/,
    callsPlatform: false,
  },
  {
    tag: 'Events',
    about: 'Account events to pull, stream or redeliver, in the shape of a push',
    paths: /^\/v1\/events(\/|$)/,
    callsPlatform: false,
  },
];

export const TAGS = RESOURCES.map((r) => r.tag);

/** The document's tag list, in the table's order. */
export const TAG_OBJECTS = RESOURCES.map((r) => ({ name: r.tag, description: r.about }));

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
            // The shared Error envelope, narrowed to the codes of this status.
            schema: { allOf: [componentRef('Error')], properties: { code: { type: 'integer', enum: group } } },
            examples: Object.fromEntries(
              group.map((code) => [
                String(code),
                { summary: `${code}: ${ERROR_CODES[code].message}`, value: { code, message: ERROR_CODES[code].message, data: {} } },
              ]),
            ),
          },
        },
      },
    ]),
  );
}

type JsonSchema = {
  properties?: Record<string, unknown>;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  content?: Record<string, { schema: JsonSchema }>;
};

/** Property names of a params, query or body schema, through unions and per-content-type bodies. */
function fieldNames(schema: JsonSchema | undefined): string[] {
  if (!schema) return [];
  const nested = [
    ...(schema.anyOf ?? []),
    ...(schema.oneOf ?? []),
    ...(schema.allOf ?? []),
    ...Object.values(schema.content ?? {}).map((c) => c.schema),
  ];
  return [...Object.keys(schema.properties ?? {}), ...nested.flatMap(fieldNames)];
}

/**
 * Path prefixes and how operation ids spell them: `/v1` is every documented route's and says
 * nothing, and the official Business API mirror (`/v1/vplat/v1.3/business/…`) reads as `business`.
 * First match wins.
 */
const OPERATION_ID_PREFIXES: readonly [prefix: string, spelled: string][] = [
  [`/v1${BUSINESS}/`, 'business/'],
  ['/v1/', ''],
];

/**
 * A route's operationId, derived from its method and path so that it is unique (two routes cannot
 * share both, and no route lives under /v1/business to meet the abbreviation; the document test
 * checks), stable (it changes only when the path does, which breaks callers anyway) and needs no
 * name typed per route: the method, then each path segment in camel case, a parameter as
 * `By<Name>`. `DELETE /v1/videos/:id` is deleteVideosById, `GET /v1/vplat/v1.3/business/comment/list`
 * is getBusinessCommentList.
 */
export function operationIdOf(method: string, url: string): string {
  const [prefix, spelled] = OPERATION_ID_PREFIXES.find(([p]) => url.startsWith(p)) ?? ['', ''];
  const segments = (spelled + url.slice(prefix.length)).split('/').filter(Boolean);
  const words = segments.flatMap((segment) => (segment.startsWith(':') ? ['by', segment.slice(1)] : segment.split(/[-_.]/)));
  return [method.toLowerCase(), ...words.filter(Boolean).map((w) => w[0]!.toUpperCase() + w.slice(1))].join('');
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
  const documented = success && (documentedSuccess(success) as Record<string, unknown>);
  return {
    ...schema,
    operationId: operationIdOf(String(route.method), url),
    tags: [resource.tag],
    security: [{ [SECURITY_SCHEME]: [] }],
    response: {
      ...(withComponentRefs(schema.response) as object),
      ...(documented
        ? {
            200: success.description
              ? documented
              : { ...documented, 'x-response-description': 'code 0, message ok: data holds the result' },
          }
        : {}),
      ...errorResponses(codes),
    },
  } as FastifySchema;
}
