import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifySchema } from 'fastify';

/** ISO 8601 UTC timestamp, or null when the moment has not happened. */
export const Timestamp = Type.String({ format: 'date-time', examples: ['2026-11-22T08:00:00.000Z'] });
// A type list rather than a union: the response serializer writes a type list directly, but tries a
// union's branches one by one with the validator, which cost more than the rest of a seat's JSON.
export const NullableTimestamp = Type.Unsafe<string | null>({ type: ['string', 'null'], format: 'date-time', examples: ['2026-11-22T08:00:00.000Z'] });

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
export function deprecated(schema: FastifySchema): FastifySchema {
  return { ...schema, deprecated: true } as FastifySchema;
}
