/**
 * Request validation. Query strings, path parameters and headers arrive as text, so their schemas
 * coerce ("20" → 20, one value → an array). JSON bodies are typed already: coercing them would
 * accept 42 for a string or "*" for a list, so bodies are validated strictly. Unknown fields are
 * refused rather than stripped, so a misspelt option is an error the caller sees.
 */
import Ajv, { type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

const COMMON: Options = { removeAdditional: false, useDefaults: true, allErrors: false, strict: false };

function ajv(options: Options): Ajv {
  const instance = new Ajv({ ...COMMON, ...options });
  addFormats(instance);
  return instance;
}

export function validatorCompiler(): FastifySchemaCompiler<unknown> {
  const strict = ajv({ coerceTypes: false });
  const coercing = ajv({ coerceTypes: 'array' });
  return ({ schema, httpPart }) => (httpPart === 'body' ? strict : coercing).compile(schema as object);
}
