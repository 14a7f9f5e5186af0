/**
 * Requests Connect refuses before any of our code runs: a body that does not decode as the method's
 * message, a gRPC envelope marked compressed without an encoding. Connect labels these `internal`
 * (HTTP 500, gRPC status 13), which tells the caller the server failed, when it was the request.
 * Their answers are relabelled `invalid_argument` carrying our 2001, with Connect's own message. An
 * error that passed through our interceptors always carries our code, so only protocol-layer ones
 * are touched (and logged, so that a fault of the library itself stays visible).
 */
import type { UniversalServerResponse } from '@connectrpc/connect/protocol';
import { CODE_HEADER } from '../errors';

const INVALID_REQUEST_CODE = '2001';
const GRPC_INTERNAL = '13';
const GRPC_INVALID_ARGUMENT = '3';
/** The flag of a gRPC-Web frame that carries trailers rather than a message. */
const TRAILER_FRAME = 0x80;

export function relabelProtocolErrors(res: UniversalServerResponse, onRelabel: (message: string) => void): UniversalServerResponse {
  const body = res.body;
  const type = res.header?.get('content-type') ?? '';
  if (!body || res.header?.has(CODE_HEADER)) return res;
  if (type.startsWith('application/grpc-web')) return { ...res, body: relabelTrailerFrames(body, onRelabel) };
  if (type.startsWith('application/grpc')) return { ...res, body: relabelTrailersAfter(body, res.trailer, onRelabel) };
  // A Connect unary error: a small JSON body, complete by now, and nothing sent yet.
  if (res.status === 500 && type.startsWith('application/json')) {
    const relabelled: UniversalServerResponse = { ...res };
    relabelled.body = relabelConnectError(relabelled, body, onRelabel);
    return relabelled;
  }
  return res;
}

async function* relabelConnectError(
  res: UniversalServerResponse,
  body: AsyncIterable<Uint8Array>,
  onRelabel: (message: string) => void,
): AsyncGenerator<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  const bytes = Buffer.concat(chunks);
  const error = parseJson(bytes.toString('utf8')) as { code?: unknown; message?: unknown } | undefined;
  if (error?.code !== 'internal') return yield bytes;
  const message = typeof error.message === 'string' ? error.message : 'the request could not be read';
  onRelabel(message);
  // Read by Node when the first chunk arrives: headers go out after it.
  const relabelled = Buffer.from(JSON.stringify({ code: 'invalid_argument', message }));
  res.status = 400;
  res.header!.set(CODE_HEADER, INVALID_REQUEST_CODE);
  if (res.header!.has('content-length')) res.header!.set('content-length', String(relabelled.length));
  yield relabelled;
}

async function* relabelTrailersAfter(
  body: AsyncIterable<Uint8Array>,
  trailer: Headers | undefined,
  onRelabel: (message: string) => void,
): AsyncGenerator<Uint8Array> {
  yield* body;
  // Written by Node once the body has ended, so still ours to change here.
  if (trailer && trailer.get('grpc-status') === GRPC_INTERNAL && !trailer.has(CODE_HEADER)) {
    onRelabel(decodeURIComponent(trailer.get('grpc-message') ?? ''));
    trailer.set('grpc-status', GRPC_INVALID_ARGUMENT);
    trailer.set(CODE_HEADER, INVALID_REQUEST_CODE);
  }
}

async function* relabelTrailerFrames(body: AsyncIterable<Uint8Array>, onRelabel: (message: string) => void): AsyncGenerator<Uint8Array> {
  for await (const chunk of body) {
    const frame = Buffer.from(chunk);
    if (frame.length < 5 || !(frame[0]! & TRAILER_FRAME) || frame.readUInt32BE(1) !== frame.length - 5) {
      yield chunk;
      continue;
    }
    const lines = frame.subarray(5).toString('latin1').split('\r\n').filter(Boolean);
    const field = (name: string) =>
      lines
        .find((l) => l.toLowerCase().startsWith(`${name}:`))
        ?.slice(name.length + 1)
        .trim();
    if (field('grpc-status') !== GRPC_INTERNAL || field(CODE_HEADER) !== undefined) {
      yield chunk;
      continue;
    }
    onRelabel(decodeURIComponent(field('grpc-message') ?? ''));
    const relabelled = [
      ...lines.map((l) => (l.toLowerCase().startsWith('grpc-status:') ? `grpc-status: ${GRPC_INVALID_ARGUMENT}` : l)),
      `${CODE_HEADER}: ${INVALID_REQUEST_CODE}`,
    ];
    const text = Buffer.from(`${relabelled.join('\r\n')}\r\n`, 'latin1');
    const header = Buffer.alloc(5);
    header[0] = frame[0]!;
    header.writeUInt32BE(text.length, 1);
    yield Buffer.concat([header, text]);
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
