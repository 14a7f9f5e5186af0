import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifySchema } from 'fastify';

/** ISO 8601 UTC timestamp, or null when the moment has not happened. */
export const Timestamp = Type.String({ format: 'date-time', examples: ['2026-11-22T08:00:00.000Z'] });
// A type list rather than a union: the response serializer writes a type list directly, but tries a
// union's branches one by one with the validator, which cost more than the rest of a seat's JSON.
export const NullableTimestamp = Type.Unsafe<string | null>({
  type: ['string', 'null'],
  format: 'date-time',
  examples: ['2026-11-22T08:00:00.000Z'],
});

/**
 * The envelope every /v1 answer is (spec, Errors: Envelope), as the OpenAPI document's shared
 * `Envelope` component. A route's own response schema stays `okEnvelope(data)`, which is what the
 * serializer compiles; the document refers to this one instead of repeating it per route.
 */
export const Envelope = Type.Object(
  {
    code: Type.Integer({
      description: '0 on success; otherwise the code of the failure. The HTTP status follows the code, but rely on code',
    }),
    message: Type.String({ description: '"ok" on success; otherwise the reason, `field: reason` when input is refused' }),
    data: Type.Record(Type.String(), Type.Unknown(), {
      description: 'The result on success; on failure details such as the refused field, often empty',
    }),
  },
  { description: 'Every answer: `{code, message, data}`; code 0 with message ok is success and data holds the result' },
);

/** The success envelope around a route's data. */
export function okEnvelope<T extends TSchema>(data: T) {
  return Type.Object({
    code: Type.Literal(0),
    message: Type.Literal('ok'),
    data,
  });
}

/** Every list answers `data.items`, so one client helper reads them all. */
export function listOf<T extends TSchema>(item: T) {
  return Type.Object({ items: Type.Array(item) });
}

/** OpenAPI's flag for the spec's deprecated routes, which Fastify's schema type does not name. */
export function deprecated<S extends FastifySchema>(schema: S): S & { deprecated: true } {
  return { ...schema, deprecated: true };
}
