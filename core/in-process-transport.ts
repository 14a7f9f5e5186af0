/**
 * The transport of `--role all`: the gateway calls core's service implementations in this process,
 * through the same interceptors (authentication, rate limit, error normalisation) as over HTTP,
 * but without encoding messages. Connect's router transport encodes and decodes every message and
 * passes it through streams and abort signals; measured on GET /v1/seats, that cost more CPU than
 * the rest of the request. Messages are handed over by reference, so neither side may mutate them.
 */
import {
  create,
  isMessage,
  type DescMessage,
  type DescMethod,
  type DescMethodStreaming,
  type DescMethodUnary,
  type MessageInitShape,
} from '@bufbuild/protobuf';
import {
  Code,
  ConnectError,
  createContextValues,
  createHandlerContext,
  type ConnectRouter,
  type HandlerContext,
  type StreamRequest,
  type StreamResponse,
  type Transport,
  type UnaryRequest,
  type UnaryResponse,
} from '@connectrpc/connect';
import type { CoreHandlers } from './router';

/** A unary implementation returns its message; a server-streaming one, an async iterable of them. */
type Handler = (request: unknown, context: HandlerContext) => unknown;
type Next = (req: UnaryRequest | StreamRequest) => Promise<UnaryResponse | StreamResponse>;

/**
 * Stands in for "no signal" where the request type requires one; it is never aborted. Exported so a
 * test can check that calls never leave listeners on it.
 */
export const NO_SIGNAL = new AbortController().signal;

export function createInProcessTransport(core: CoreHandlers): Transport {
  const handlers = new Map<DescMethod, Handler>();
  const router = {
    service(desc: { methods: DescMethod[] }, impl: Record<string, Handler | undefined>) {
      for (const method of desc.methods) {
        const fn = impl[method.localName];
        if (fn) handlers.set(method, fn.bind(impl));
      }
      return router;
    },
    rpc(method: DescMethod, impl: Handler) {
      handlers.set(method, impl);
      return router;
    },
  };
  core.routes(router as unknown as ConnectRouter);

  const invoke: Next = async (req) => {
    const handler = handlers.get(req.method);
    if (!handler) throw new ConnectError(`${req.method.parent.typeName}/${req.method.name} is not implemented`, Code.Unimplemented);
    if (req.stream) return invokeServerStreaming(handler, req);
    const ctx = unaryHandlerContext(req as UnaryRequest, req.signal === NO_SIGNAL ? undefined : req.signal);
    const output = await handler(req.message, ctx);
    return {
      stream: false,
      service: req.service,
      method: req.method,
      header: ctx.responseHeader,
      trailer: ctx.responseTrailer,
      message: isMessage(output, req.method.output) ? output : create(req.method.output, output as MessageInitShape<DescMessage>),
    } as UnaryResponse;
  };
  // The first interceptor is the outermost, as in Connect's own chain.
  const chain = core.interceptors.reduceRight<Next>((next, interceptor) => interceptor(next) as Next, invoke);

  return {
    async unary<I extends DescMessage, O extends DescMessage>(
      method: DescMethodUnary<I, O>,
      signal: AbortSignal | undefined,
      _timeoutMs: number | undefined,
      header: ConstructorParameters<typeof Headers>[0] | undefined,
      input: MessageInitShape<I>,
      contextValues?: ReturnType<typeof createContextValues>,
    ) {
      const res = await chain({
        stream: false,
        service: method.parent,
        method,
        requestMethod: 'POST',
        url: `in-process:/${method.parent.typeName}/${method.name}`,
        signal: signal ?? NO_SIGNAL,
        // The caller's own Headers object is used as is: it is made for this one call.
        header: header instanceof Headers ? header : new Headers(header),
        contextValues: contextValues ?? createContextValues(),
        message: isMessage(input, method.input) ? input : create(method.input, input),
      } as unknown as UnaryRequest);
      return res as unknown as UnaryResponse<I, O>;
    },
    /**
     * Server streaming only (the only kind core serves). The handler's signal aborts when the
     * caller's does, when the caller stops reading early, and when the stream ends, so a handler
     * waiting for something to send (an event stream waiting for events) learns at once that
     * nobody is listening any more and can release what it holds.
     */
    async stream<I extends DescMessage, O extends DescMessage>(
      method: DescMethodStreaming<I, O>,
      signal: AbortSignal | undefined,
      _timeoutMs: number | undefined,
      header: ConstructorParameters<typeof Headers>[0] | undefined,
      input: AsyncIterable<MessageInitShape<I>>,
      contextValues?: ReturnType<typeof createContextValues>,
    ) {
      if (method.methodKind !== 'server_streaming') {
        throw new ConnectError(
          `${method.parent.typeName}/${method.name}: only server streaming is supported in process`,
          Code.Unimplemented,
        );
      }
      const call = new AbortController();
      const onAbort = () => call.abort(signal?.reason);
      if (signal?.aborted) call.abort(signal.reason);
      else signal?.addEventListener('abort', onAbort, { once: true });
      const end = () => {
        signal?.removeEventListener('abort', onAbort);
        call.abort();
      };
      try {
        const res = (await chain({
          stream: true,
          service: method.parent,
          method,
          requestMethod: 'POST',
          url: `in-process:/${method.parent.typeName}/${method.name}`,
          signal: call.signal,
          header: header instanceof Headers ? header : new Headers(header),
          contextValues: contextValues ?? createContextValues(),
          message: mapIterable(input, (m) => (isMessage(m, method.input) ? m : create(method.input, m))),
        } as unknown as StreamRequest)) as StreamResponse;
        return { ...res, message: endingWith(res.message, end) } as unknown as StreamResponse<I, O>;
      } catch (err) {
        end();
        throw err;
      }
    },
  };
}

/**
 * What a unary handler sees of its call. Connect's own context links a deadline signal and the
 * request's signal into a new controller and copies the request headers, on every call: on the
 * hottest reads that was a tenth of the service's CPU. In process there is no deadline and the
 * headers are made for this one call, so the caller's signal and headers serve as they are. With no
 * caller signal, a fresh one is made only if the handler asks, so no listener of a handler ever
 * lands on the shared placeholder.
 */
function unaryHandlerContext(req: UnaryRequest, callerSignal: AbortSignal | undefined): HandlerContext {
  let signal = callerSignal;
  return {
    service: req.service,
    method: req.method,
    protocolName: 'in-process',
    requestMethod: req.requestMethod,
    url: req.url,
    get signal() {
      return (signal ??= new AbortController().signal);
    },
    timeoutMs: () => undefined,
    requestHeader: req.header,
    responseHeader: new Headers(),
    responseTrailer: new Headers(),
    values: req.contextValues,
  };
}

/** What a streaming handler sees of its call, as Connect's own server would give it. */
function handlerContext(req: UnaryRequest | StreamRequest, signal: AbortSignal | undefined): HandlerContext {
  return createHandlerContext({
    service: req.service,
    method: req.method,
    protocolName: 'in-process',
    requestMethod: req.requestMethod,
    url: req.url,
    requestSignal: signal,
    requestHeader: req.header,
    contextValues: req.contextValues,
  });
}

async function invokeServerStreaming(handler: Handler, req: StreamRequest): Promise<StreamResponse> {
  if (req.method.methodKind !== 'server_streaming') {
    throw new ConnectError(
      `${req.method.parent.typeName}/${req.method.name}: only server streaming is supported in process`,
      Code.Unimplemented,
    );
  }
  const input = await single(req.message, req.method);
  const ctx = handlerContext(req, req.signal);
  const output = handler(input, ctx) as AsyncIterable<unknown>;
  const outputSchema = req.method.output;
  return {
    stream: true,
    service: req.service,
    method: req.method,
    header: ctx.responseHeader,
    trailer: ctx.responseTrailer,
    message: mapIterable(output, (m) => (isMessage(m, outputSchema) ? m : create(outputSchema, m as MessageInitShape<DescMessage>))),
  } as StreamResponse;
}

/** The one request message of a server-streaming call. */
async function single<T>(messages: AsyncIterable<T>, method: DescMethod): Promise<T> {
  const it = messages[Symbol.asyncIterator]();
  const first = await it.next();
  if (first.done) throw new ConnectError(`${method.parent.typeName}/${method.name}: missing request message`, Code.InvalidArgument);
  const second = await it.next();
  if (!second.done) throw new ConnectError(`${method.parent.typeName}/${method.name}: more than one request message`, Code.InvalidArgument);
  return first.value;
}

/** Maps each item lazily; returning early (a caller's `break`) reaches the source. */
function mapIterable<T, U>(source: AsyncIterable<T>, fn: (item: T) => U): AsyncIterable<U> {
  return {
    [Symbol.asyncIterator]() {
      const it = source[Symbol.asyncIterator]();
      return {
        async next() {
          const r = await it.next();
          return r.done ? r : { done: false, value: fn(r.value) };
        },
        async return(value?: unknown) {
          const r = await it.return?.(value);
          return r && !r.done ? { done: true, value: undefined } : { done: true, value: r?.value };
        },
      } as AsyncIterator<U>;
    },
  };
}

/**
 * Calls `end` once the messages are over for whatever reason: all read, failed, or the caller
 * stopped reading. `end` runs before the source is asked to return, because a source busy awaiting
 * (rather than parked at a yield) only sees that request after its pending step settles.
 */
function endingWith<T>(messages: AsyncIterable<T>, end: () => void): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator]() {
      const it = messages[Symbol.asyncIterator]();
      return {
        async next() {
          try {
            const r = await it.next();
            if (r.done) end();
            return r;
          } catch (err) {
            end();
            throw err;
          }
        },
        async return(value?: unknown) {
          end();
          return (await it.return?.(value)) ?? { done: true, value: undefined };
        },
      } as AsyncIterator<T>;
    },
  };
}
