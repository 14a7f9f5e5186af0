import type { ErrorObject } from 'ajv';
import { formatValidationErrors } from '../../gateway/plugins/envelope';

/** An ajv error as Fastify's validator hands it over. */
function ajvError(overrides: Partial<ErrorObject> & Pick<ErrorObject, 'keyword' | 'params'>): ErrorObject {
  return { instancePath: '', schemaPath: `#/${overrides.keyword}`, ...overrides };
}

describe('formatValidationErrors', () => {
  it('names a missing root field', () => {
    const errors = [ajvError({ keyword: 'required', params: { missingProperty: 'url' }, message: "must have required property 'url'" })];

    expect(formatValidationErrors(errors, 'body').message).toBe('url: is required');
  });

  it('names a missing nested field with its parent path', () => {
    const errors = [
      ajvError({
        keyword: 'required',
        instancePath: '/filter',
        params: { missingProperty: 'status' },
        message: "must have required property 'status'",
      }),
    ];

    expect(formatValidationErrors(errors, 'body').message).toBe('filter.status: is required');
  });

  it('writes array indexes in brackets', () => {
    const errors = [ajvError({ keyword: 'type', instancePath: '/eventTypes/0', params: { type: 'string' }, message: 'must be string' })];

    expect(formatValidationErrors(errors, 'body').message).toBe('eventTypes[0]: must be string');
  });

  it('joins object keys with dots, and unescapes JSON-pointer segments', () => {
    const errors = [ajvError({ keyword: 'type', instancePath: '/headers/a~1b~0c', params: { type: 'string' }, message: 'must be string' })];

    expect(formatValidationErrors(errors, 'body').message).toBe('headers.a/b~c: must be string');
  });

  it('names an unknown field', () => {
    const errors = [
      ajvError({
        keyword: 'additionalProperties',
        params: { additionalProperty: 'extra' },
        message: 'must NOT have additional properties',
      }),
    ];

    expect(formatValidationErrors(errors, 'body').message).toBe('extra: is not a known field');
  });

  it('prefixes query string fields with "query parameter "', () => {
    const errors = [ajvError({ keyword: 'type', instancePath: '/limit', params: { type: 'integer' }, message: 'must be integer' })];

    expect(formatValidationErrors(errors, 'querystring').message).toBe('query parameter limit: must be integer');
  });

  it('prefixes path fields with "path parameter "', () => {
    const errors = [
      ajvError({ keyword: 'pattern', instancePath: '/id', params: { pattern: '^seat_' }, message: 'must match pattern "^seat_"' }),
    ];

    expect(formatValidationErrors(errors, 'params').message).toBe('path parameter id: must match pattern "^seat_"');
  });

  it('names the body itself when the error is at the root', () => {
    const errors = [ajvError({ keyword: 'type', params: { type: 'object' }, message: 'must be object' })];

    expect(formatValidationErrors(errors, 'body').message).toBe('body: must be object');
  });

  it('reports only the first error', () => {
    const errors = [
      ajvError({ keyword: 'required', params: { missingProperty: 'url' }, message: "must have required property 'url'" }),
      ajvError({ keyword: 'required', params: { missingProperty: 'eventTypes' }, message: "must have required property 'eventTypes'" }),
    ];

    expect(formatValidationErrors(errors, 'body').message).toBe('url: is required');
  });

  it('falls back to "is invalid" when ajv gives no message', () => {
    const errors = [ajvError({ keyword: 'format', instancePath: '/url', params: { format: 'uri' } })];

    expect(formatValidationErrors(errors, 'body').message).toBe('url: is invalid');
  });

  it('says the input is invalid when there are no errors to describe', () => {
    expect(formatValidationErrors([], 'body').message).toBe('body: invalid');
  });
});
