/**
 * The transport of `--role all`: the gateway calls core's service implementations in this process,
 * through the same interceptors (authentication, rate limit, error normalisation) as over HTTP,
 * but without encoding messages. Connect's router transport encodes and decodes every message and
 * passes it through streams and abort signals; measured on GET /v1/seats, that cost more CPU than
 * the rest of the request. Messages are handed over by reference, so neither side may mutate them.
 */
import { create, isMessage, type DescMessage, type DescMethod, type DescMethodUnary, type MessageInitShape } from '@bufbuild/protobuf';
import {
  Code,
  ConnectError,
  createContextValues,
  createHandlerContext,
  type ConnectRouter,
  type HandlerContext,
  type Transport,
  type UnaryRequest,
  type UnaryResponse,
} from '@connectrpc/connect';
import type { CoreHandlers } from './router';

type UnaryHandler = (request: unknown, context: HandlerContext) => unknown;
type Next = (req: UnaryRequest) => Promise<UnaryResponse>;

/**
 * Stands in for "no signal" where the request type requires one; it is never aborted. Exported so a
 * test can check that calls never leave listeners on it.
 */
export const NO_SIGNAL = new AbortController().signal;

export function createInProcessTransport(core: CoreHandlers): Transport {
  const handlers = new Map<DescMethod, UnaryHandler>();
  const router = {
    service(desc: { methods: DescMethod[] }, impl: Record<string, UnaryHandler | undefined>) {
      for (const method of desc.methods) {
        const fn = impl[method.localName];
        if (fn) handlers.set(method, fn.bind(impl));
      }
      return router;
    },
    rpc(method: DescMethod, impl: UnaryHandler) {
      handlers.set(method, impl);
      return router;
    },
  };
  core.routes(router as unknown as ConnectRouter);

  const invoke: Next = async (req) => {
    const handler = handlers.get(req.method);
    if (!handler) throw new ConnectError(`${req.method.parent.typeName}/${req.method.name} is not implemented`, Code.Unimplemented);
    const ctx = createHandlerContext({
      service: req.service,
      method: req.method,
      protocolName: 'in-process',
      requestMethod: req.requestMethod,
      url: req.url,
      // Linking adds a listener to the signal; the shared placeholder must never collect them.
      requestSignal: req.signal === NO_SIGNAL ? undefined : req.signal,
      requestHeader: req.header,
      contextValues: req.contextValues,
    });
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
  const chain = core.interceptors.reduceRight<Next>((next, interceptor) => interceptor(next as never) as Next, invoke);

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
    stream() {
      // No streaming RPC exists yet; one added later needs a streaming path here too.
      return Promise.reject(new ConnectError('streaming RPCs are not supported in process', Code.Unimplemented));
    },
  };
}
