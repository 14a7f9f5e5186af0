import { safeError } from '../../core/logger';
import { Code, ConnectError } from '@connectrpc/connect';
import { ApiError, ERROR_CODES, httpStatusOf, isErrorCode, renderConnectError, type ErrorCode } from '../../core/errors';

/** The code table of the spec: code → HTTP status. */
const SPEC_STATUS: Record<number, number> = {
  1001: 401,
  1002: 403,
  1003: 403,
  1004: 403,
  1005: 404,
  1006: 409,
  1007: 409,
  1008: 409,
  2001: 422,
  2002: 429,
  2005: 422,
  3001: 502,
  3002: 504,
  5000: 500,
};

describe('ERROR_CODES', () => {
  it('holds exactly the codes of the spec table', () => {
    expect(Object.keys(ERROR_CODES).map(Number).sort()).toEqual(Object.keys(SPEC_STATUS).map(Number).sort());
  });

  it.each(Object.entries(SPEC_STATUS).map(([code, status]) => [Number(code), status]))('maps %i to HTTP %i', (code, status) => {
    expect(isErrorCode(code)).toBe(true);
    expect(httpStatusOf(code as ErrorCode)).toBe(status);
  });

  it('does not recognise codes outside the table', () => {
    expect(isErrorCode(0)).toBe(false);
    expect(isErrorCode(2003)).toBe(false);
    expect(isErrorCode(NaN)).toBe(false);
  });
});

describe('ApiError across Connect', () => {
  it('keeps code, message, retryAfterSeconds and data through toConnectError and renderConnectError', () => {
    const err = new ApiError(2002, 'rate limit exceeded: 60 requests per minute', {
      retryAfterSeconds: 7,
      data: { limit: 60, nested: { field: 'x' } },
    });

    const rendered = renderConnectError(err.toConnectError());

    expect(rendered).toEqual({
      code: 2002,
      message: 'rate limit exceeded: 60 requests per minute',
      httpStatus: 429,
      retryAfterSeconds: 7,
      data: { limit: 60, nested: { field: 'x' } },
    });
  });

  it('uses the table message by default and renders without retryAfterSeconds or data', () => {
    const rendered = renderConnectError(new ApiError(1005).toConnectError());

    expect(rendered).toEqual({ code: 1005, message: ERROR_CODES[1005].message, httpStatus: 404, data: {} });
    expect(rendered).not.toHaveProperty('retryAfterSeconds');
  });

  it.each(Object.keys(ERROR_CODES).map(Number) as ErrorCode[])('carries code %i with its Connect code', (code) => {
    const connectErr = new ApiError(code, 'boom').toConnectError();

    expect(connectErr.code).toBe(ERROR_CODES[code].connect);
    expect(renderConnectError(connectErr).code).toBe(code);
    expect(renderConnectError(connectErr).httpStatus).toBe(SPEC_STATUS[code]);
  });
});

describe('renderConnectError of a ConnectError without our code', () => {
  it('renders 5000 with the generic message, leaking nothing of the original', () => {
    const internal = 'connect ECONNREFUSED 10.0.0.5:5432 password authentication failed for user "vps"';
    const err = new ConnectError(internal, Code.Internal, new Headers({ 'retry-after': '30', 'vps-data': '{"secret":"x"}' }));

    const rendered = renderConnectError(err);

    expect(rendered).toEqual({ code: 5000, message: 'internal error', httpStatus: 500, data: {} });
    expect(JSON.stringify(rendered)).not.toContain('10.0.0.5');
  });

  it('renders 5000 when the code header is not one of ours', () => {
    const err = new ConnectError('upstream said no', Code.Unavailable, new Headers({ 'vps-code': '9999' }));

    expect(renderConnectError(err)).toEqual({ code: 5000, message: 'internal error', httpStatus: 500, data: {} });
  });

  it("renders a core that cannot be reached or is closing (Unavailable, no code of ours) as a retryable 5000 with the table's 500 and Retry-After", () => {
    const err = new ConnectError('connect ECONNREFUSED 127.0.0.1:1', Code.Unavailable);
    expect(renderConnectError(err)).toEqual({
      code: 5000,
      message: expect.stringMatching(/briefly unavailable/),
      httpStatus: 500,
      retryAfterSeconds: 1,
      data: { retryable: true },
    });
  });
});

describe('logged errors', () => {
  it('drops the SQL and parameters of a failed query, keeping the database message and SQLSTATE', () => {
    const cause = Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021' });
    const err = Object.assign(new Error('Failed query: insert into "webhook_endpoints" values ($1)\nparams: sigkey-secret-value'), {
      name: 'DrizzleQueryError',
      cause,
      query: 'insert into "webhook_endpoints" values ($1)',
      params: ['sigkey-secret-value'],
    });
    const logged = safeError(err) as Record<string, unknown>;
    expect(JSON.stringify(logged)).not.toContain('sigkey-secret-value');
    expect(logged).toMatchObject({
      type: 'DrizzleQueryError',
      sqlState: '22021',
      message: expect.stringContaining('invalid byte sequence'),
    });
  });

  it('logs other errors in full', () => {
    const logged = safeError(new Error('boom')) as Record<string, unknown>;
    expect(logged).toMatchObject({ message: 'boom', type: 'Error' });
  });
});

describe('envelope data across Connect', () => {
  it("carries data that echoes a caller's non-ASCII text", () => {
    const err = new ApiError(1007, 'account: € is not bound', { data: { field: 'account', account: '€ ü 😀' } });
    expect(renderConnectError(err.toConnectError())).toMatchObject({ code: 1007, data: { field: 'account', account: '€ ü 😀' } });
  });
});
