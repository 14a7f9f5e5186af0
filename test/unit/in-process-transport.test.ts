import { getEventListeners } from 'node:events';
import { Code, ConnectError, type ConnectRouter, type HandlerContext, type Interceptor } from '@connectrpc/connect';
import { EventService, type WatchEventsRequest } from '../../gen/vps/event/v1/event_pb';
import { SeatService, Track } from '../../gen/vps/seat/v1/seat_pb';
import { invalidField, renderConnectError } from '../../core/errors';
import { createInProcessTransport, NO_SIGNAL } from '../../core/in-process-transport';
import { errorsInterceptor } from '../../core/interceptors/errors.interceptor';
import { createLogger } from '../../core/logger';
import type { CoreHandlers } from '../../core/router';

function coreWith(impl: Record<string, unknown>, interceptors: Interceptor[] = []): CoreHandlers {
  return { routes: (router: ConnectRouter) => void router.service(SeatService, impl), interceptors };
}

describe('in-process transport', () => {
  it('calls the implementation with the request headers and returns its message and response headers', async () => {
    const transport = createInProcessTransport(
      coreWith({
        listSeats: (_req: unknown, ctx: { requestHeader: Headers; responseHeader: Headers }) => {
          ctx.responseHeader.set('x-seen', ctx.requestHeader.get('authorization') ?? '');
          return { seats: [{ id: 'seat_1', track: Track.SHOP }] };
        },
      }),
    );
    const res = await transport.unary(SeatService.method.listSeats, undefined, undefined, { authorization: 'Bearer k' }, {});
    expect(res.message.seats.map((s) => [s.id, s.track])).toEqual([['seat_1', Track.SHOP]]);
    expect(res.header.get('x-seen')).toBe('Bearer k');
  });

  it('runs interceptors outermost first, as Connect does', async () => {
    const order: string[] = [];
    const tag =
      (name: string): Interceptor =>
      (next) =>
      async (req) => {
        order.push(`${name}:in`);
        const res = await next(req);
        order.push(`${name}:out`);
        return res;
      };
    const transport = createInProcessTransport(coreWith({ listSeats: () => ({ seats: [] }) }, [tag('outer'), tag('inner')]));
    await transport.unary(SeatService.method.listSeats, undefined, undefined, undefined, {});
    expect(order).toEqual(['outer:in', 'inner:in', 'inner:out', 'outer:out']);
  });

  it('leaves no listener behind on its placeholder signal, however many calls it serves', async () => {
    const transport = createInProcessTransport(coreWith({ listSeats: () => ({ seats: [] }) }));
    for (let i = 0; i < 200; i++) await transport.unary(SeatService.method.listSeats, undefined, undefined, undefined, {});
    expect(getEventListeners(NO_SIGNAL, 'abort')).toHaveLength(0);
  });

  it('answers Unimplemented for a method the core does not serve', async () => {
    const transport = createInProcessTransport(coreWith({}));
    await expect(transport.unary(SeatService.method.listSeats, undefined, undefined, undefined, {})).rejects.toMatchObject({
      code: Code.Unimplemented,
    });
  });
});

describe('in-process transport, server streaming', () => {
  const watch = EventService.method.watchEvents;

  function streamingCore(
    watchEvents: (req: WatchEventsRequest, ctx: HandlerContext) => AsyncIterable<unknown>,
    interceptors: Interceptor[] = [],
  ): CoreHandlers {
    return { routes: (router: ConnectRouter) => void router.service(EventService, { watchEvents } as never), interceptors };
  }

  async function* request(init: { afterEventId?: string; types?: string[] }) {
    yield init;
  }

  /** Resolves once `signal` aborts. */
  function aborted(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
  }

  it('hands the request to the handler and returns its messages as full messages, through the interceptors', async () => {
    const seen: string[] = [];
    const tag: Interceptor = (next) => async (req) => {
      seen.push(`${req.stream ? 'stream' : 'unary'}:${req.header.get('authorization')}`);
      return next(req);
    };
    const transport = createInProcessTransport(
      streamingCore(
        async function* (req) {
          yield {};
          yield { event: { id: `after-${req.afterEventId}`, type: req.types.join(',') } };
        },
        [tag],
      ),
    );
    const res = await transport.stream(
      watch,
      undefined,
      undefined,
      { authorization: 'Bearer k' },
      request({ afterEventId: 'evt_1', types: ['*'] }),
    );
    const messages = [];
    for await (const m of res.message) messages.push(m);
    expect(seen).toEqual(['stream:Bearer k']);
    expect(messages.map((m) => [m.$typeName, m.event?.id, m.event?.type])).toEqual([
      ['vps.event.v1.WatchEventsResponse', undefined, undefined],
      ['vps.event.v1.WatchEventsResponse', 'after-evt_1', '*'],
    ]);
  });

  it("ends a handler waiting for something to send when the caller's signal aborts", async () => {
    let finished = false;
    const transport = createInProcessTransport(
      streamingCore(async function* (_req, ctx) {
        try {
          yield {};
          await aborted(ctx.signal);
        } finally {
          finished = true;
        }
      }),
    );
    const caller = new AbortController();
    const res = await transport.stream(watch, caller.signal, undefined, undefined, request({}));
    const it = res.message[Symbol.asyncIterator]();
    await it.next();
    const pending = it.next();
    caller.abort();
    await expect(pending).resolves.toMatchObject({ done: true });
    expect(finished).toBe(true);
  });

  it('aborts the handler signal and runs its cleanup when the caller stops reading early', async () => {
    let handlerSignal: AbortSignal | undefined;
    let finished = false;
    const transport = createInProcessTransport(
      streamingCore(async function* (_req, ctx) {
        handlerSignal = ctx.signal;
        try {
          for (;;) yield {};
        } finally {
          finished = true;
        }
      }),
    );
    const res = await transport.stream(watch, undefined, undefined, undefined, request({}));
    for await (const _m of res.message) break;
    expect(handlerSignal?.aborted).toBe(true);
    expect(finished).toBe(true);
  });

  it("leaves no listener on the caller's signal once the stream is over", async () => {
    const transport = createInProcessTransport(
      streamingCore(async function* () {
        yield {};
      }),
    );
    const caller = new AbortController();
    for (let i = 0; i < 20; i++) {
      const res = await transport.stream(watch, caller.signal, undefined, undefined, request({}));
      for await (const _m of res.message);
    }
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
  });

  it("passes a handler's failure while streaming through the errors interceptor, with our code", async () => {
    const transport = createInProcessTransport(
      streamingCore(
        async function* (req) {
          if (req.types.includes('bad')) throw invalidField('types[0]', 'unknown event type or pattern "bad"');
          yield {};
        },
        [errorsInterceptor(createLogger('silent', 'test'))],
      ),
    );
    const res = await transport.stream(watch, undefined, undefined, undefined, request({ types: ['bad'] }));
    const failure = res.message[Symbol.asyncIterator]().next();
    await expect(failure).rejects.toBeInstanceOf(ConnectError);
    const err = await failure.catch((e: unknown) => e as ConnectError);
    expect(renderConnectError(err as ConnectError)).toMatchObject({
      code: 2001,
      httpStatus: 422,
      message: 'types[0]: unknown event type or pattern "bad"',
    });
  });

  it('answers Unimplemented for a streaming method the core does not serve', async () => {
    const transport = createInProcessTransport(coreWith({}));
    await expect(transport.stream(watch, undefined, undefined, undefined, request({}))).rejects.toMatchObject({ code: Code.Unimplemented });
  });
});
