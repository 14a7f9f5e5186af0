/**
 * Renders every outcome as the spec's envelope `{code, message, data}` with the HTTP status of the
 * code table: successes, our errors, core's errors, malformed input, unknown routes, and even
 * requests too broken for HTTP parsing. Nothing a client sends reaches the caller as 5000.
 */
import type { Socket } from 'node:net';
import type { ErrorObject } from 'ajv';
import { ConnectError, type Transport } from '@connectrpc/connect';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, DependencyUnavailableError, httpStatusOf, renderConnectError, UNAVAILABLE, type RenderedError } from '../../core/errors';
import { authorizeCaller, inputRefusal } from '../rpc-route';
import { DEFAULT_HTTP_TIMEOUTS, durationText, timeoutAnswer } from '../../core/net/http-timeouts';

export function send(reply: FastifyReply, r: RenderedError): FastifyReply {
  if (r.retryAfterSeconds !== undefined) void reply.header('retry-after', String(r.retryAfterSeconds));
  return reply.code(r.httpStatus).send({ code: r.code, message: r.message, data: r.data });
}

export function fromApiError(err: ApiError): RenderedError {
  return {
    code: err.code,
    message: err.message,
    httpStatus: httpStatusOf(err.code),
    data: err.options.data ?? {},
    ...(err.options.retryAfterSeconds !== undefined ? { retryAfterSeconds: err.options.retryAfterSeconds } : {}),
  };
}

const INPUT_MESSAGES: Record<string, (err: FastifyError) => string> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => 'Content-Type: not supported here; send application/json',
  FST_ERR_CTP_EMPTY_JSON_BODY: () => 'body: empty, but Content-Type says application/json',
  FST_ERR_CTP_BODY_TOO_LARGE: () => 'body: too large',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => 'Content-Length: does not match the body',
  FST_ERR_CTP_INVALID_JSON_BODY: (e) => `body: malformed JSON (${e.message})`,
};

function inputMessage(err: FastifyError): string {
  const known = err.code ? INPUT_MESSAGES[err.code] : undefined;
  if (known) return known(err);
  if (err instanceof SyntaxError) return `body: malformed JSON (${err.message})`;
  return err.message;
}

/** A 4xx raised by Fastify itself (parsing, content type, size): the client's input is at fault. */
function isInputError(err: unknown): err is FastifyError {
  const status = (err as FastifyError).statusCode;
  return typeof status === 'number' && status >= 400 && status < 500;
}

/** `eventTypes[0]: must be string`: names the field the way the client wrote it. */
export function formatValidationErrors(errors: ErrorObject[], dataVar: string): Error {
  const e = errors[0];
  if (!e) return new Error(`${dataVar}: invalid`);
  const segments = e.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  let field = segments.reduce((acc, s) => (/^\d+$/.test(s) ? `${acc}[${s}]` : acc ? `${acc}.${s}` : s), '');
  let reason = e.message ?? 'is invalid';
  if (e.keyword === 'required') {
    const missing = (e.params as { missingProperty: string }).missingProperty;
    field = field ? `${field}.${missing}` : missing;
    reason = 'is required';
  } else if (e.keyword === 'additionalProperties') {
    const extra = (e.params as { additionalProperty: string }).additionalProperty;
    field = field ? `${field}.${extra}` : extra;
    reason = 'is not a known field';
  }
  const where = dataVar === 'querystring' ? 'query parameter ' : dataVar === 'params' ? 'path parameter ' : '';
  return new Error(field ? `${where}${field}: ${reason}` : `${dataVar === 'querystring' ? 'query' : dataVar}: ${reason}`);
}

export function registerEnvelope(app: FastifyInstance, transport: Transport): void {
  // Requests that arrive while the server closes get the envelope (Fastify's own 503 body is not
  // one): the retryable 5000, and the connection closes so the client's next try opens one to
  // another instance.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (_req, reply) => {
    if (!closing) return;
    void reply.header('connection', 'close');
    return send(reply, UNAVAILABLE);
  });
  app.setErrorHandler(async (err: unknown, req: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof ApiError) return send(reply, fromApiError(err));
    if (err instanceof DependencyUnavailableError) {
      req.log.warn({ err }, 'a dependency is unavailable');
      return send(reply, err.render());
    }
    if (err instanceof ConnectError) {
      const rendered = renderConnectError(err);
      if (rendered.code === 5000) req.log.error({ err }, 'core call failed');
      return send(reply, rendered);
    }
    if (req.is404) return send(reply, notFound(req));
    if (isInputError(err)) {
      const access = req.routeOptions.config?.access;
      if (access !== undefined) {
        try {
          await authorizeCaller(transport, req, access);
        } catch (authErr) {
          if (authErr instanceof ConnectError) return send(reply, renderConnectError(authErr));
          throw authErr;
        }
      }
      return send(reply, fromApiError(inputRefusal(inputMessage(err), err.validationContext)));
    }
    req.log.error({ err }, 'unhandled error');
    return send(reply, fromApiError(new ApiError(5000)));
  });
  app.setNotFoundHandler((req, reply) => send(reply, notFound(req)));
}

function notFound(req: FastifyRequest): RenderedError {
  const path = req.url.split('?')[0] ?? req.url;
  return { code: 1005, message: `no route ${req.method} ${path}`, httpStatus: 404, data: {} };
}

/**
 * For requests Node's HTTP parser rejects before Fastify sees them (bad header syntax, overflow),
 * and for a client whose headers did not arrive within `headersMs` (Node's headers timeout).
 */
export function clientErrorResponse(
  err: NodeJS.ErrnoException & { rawPacket?: unknown },
  socket: Socket,
  opts: { headersMs: number } = DEFAULT_HTTP_TIMEOUTS,
): void {
  if (!socket.writable) return;
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    socket.end(timeoutAnswer(`request: the headers did not arrive within ${durationText(opts.headersMs)}; the connection is closed`));
    return;
  }
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
  const body = JSON.stringify({ code: 2001, message: tooLarge ? 'headers: too large' : 'request: malformed HTTP', data: {} });
  const status = httpStatusOf(2001);
  // The answer to a HEAD has headers only: a client reading one takes anything after them for the
  // next response. The method is read from the raw bytes, since the parser gave up on the request.
  const head = Buffer.isBuffer(err.rawPacket) && err.rawPacket.subarray(0, 5).toString('latin1') === 'HEAD ';
  socket.end(
    `HTTP/1.1 ${status} ${status === 422 ? 'Unprocessable Entity' : 'Bad Request'}\r\nConnection: close\r\nContent-Type: application/json\r\nX-Content-Type-Options: nosniff\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${head ? '' : body}`,
  );
}
