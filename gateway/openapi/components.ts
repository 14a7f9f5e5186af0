/**
 * The OpenAPI document's shared schemas (`components.schemas`) and the rewriting that makes
 * operations refer to them. One table maps each component name to the very schema object the
 * routes use, so a route's response is rewritten by identity, not by likeness: a schema that merely
 * looks like an event stays inline, and a route that uses EventJson always gets the $ref. The
 * routes' own schemas are never changed; what Fastify validates and serializes stays as it is.
 */
import type { TSchema } from '@sinclair/typebox';
import { Envelope } from '../schemas/common';
import { DeliveryAttemptJson, DeliveryJson, EventJson } from '../schemas/events';

export const componentRef = (name: ComponentName) => ({ $ref: `#/components/schemas/${name}` });

/**
 * A refusal is the envelope with a non-zero code: written as a narrowing of Envelope, so the two
 * cannot drift apart. Each error response narrows it further to the codes it can carry.
 */
const ErrorEnvelope = {
  description: 'A refused or failed call: the envelope with a non-zero code. Branch on code, never on the HTTP status',
  allOf: [{ $ref: '#/components/schemas/Envelope' }],
  properties: {
    code: {
      type: 'integer',
      minimum: 1000,
      description: '1xxx the caller or account, 2xxx the input, 3xxx the official platform, 5000 internal',
    },
  },
};

/** Name → schema. The document lists them in this order. */
const COMPONENTS = {
  Envelope,
  Error: ErrorEnvelope,
  Event: EventJson,
  Delivery: DeliveryJson,
  DeliveryAttempt: DeliveryAttemptJson,
} as const;

export type ComponentName = keyof typeof COMPONENTS;

/** Schema object → component name, for the schemas routes use by identity (not the doc-only Error). */
const NAME_OF = new Map<object, ComponentName>(
  Object.entries(COMPONENTS)
    .filter(([name]) => name !== 'Error')
    .map(([name, schema]) => [schema, name as ComponentName]),
);

/**
 * The components as the document declares them: each schema with the components it contains
 * replaced by references (a delivery refers to DeliveryAttempt rather than repeating it).
 */
export function componentSchemas(): Record<ComponentName, object> {
  return Object.fromEntries(Object.entries(COMPONENTS).map(([name, schema]) => [name, withComponentRefs(schema, schema)])) as Record<
    ComponentName,
    object
  >;
}

/**
 * A copy of `schema` with every shared schema inside it replaced by its $ref. `self` is left in
 * place at the top, so a component is declared rather than referring to itself.
 */
export function withComponentRefs(schema: unknown, self?: unknown): unknown {
  if (Array.isArray(schema)) return schema.map((s) => withComponentRefs(s));
  if (!schema || typeof schema !== 'object') return schema;
  const name = schema === self ? undefined : NAME_OF.get(schema);
  if (name) return componentRef(name);
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, withComponentRefs(value)]));
}

/**
 * The success envelope a route declares (`okEnvelope(data)`), as the document shows it: the shared
 * Envelope narrowed to code 0, message ok and this route's data. Any other response is only
 * rewritten for the components inside it.
 */
export function documentedSuccess(schema: TSchema | Record<string, unknown>): unknown {
  const properties = (schema as { properties?: Record<string, { const?: unknown }> }).properties;
  const isOkEnvelope = properties?.code?.const === 0 && properties.message?.const === 'ok' && properties.data !== undefined;
  if (!isOkEnvelope) return withComponentRefs(schema);
  return {
    allOf: [componentRef('Envelope')],
    properties: { code: properties.code, message: properties.message, data: withComponentRefs(properties.data) },
  };
}
