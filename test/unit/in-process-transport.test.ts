import { getEventListeners } from 'node:events';
import { Code, type ConnectRouter, type Interceptor } from '@connectrpc/connect';
import { SeatService, Track } from '../../gen/vps/seat/v1/seat_pb';
import { createInProcessTransport, NO_SIGNAL } from '../../core/in-process-transport';
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
