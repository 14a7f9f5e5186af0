/**
 * Connecting the customer's seats from the console through the platform's consent page, and
 * unbinding them. Each /console/api route is one ConsoleSeatService call with the session cookie.
 *
 * The platform sends the browser back to GET /console/oauth/callback by a cross-site top-level
 * navigation, which does not carry our SameSite=Strict session cookie. So the callback completes
 * nothing itself: it redirects to the console's seats page with the code and state in the URL
 * fragment (never sent to a server, kept out of logs and Referer headers), and that page, now a
 * same-site document, posts them to /console/api/seats/oauth/complete with the cookie and the CSRF
 * token like any other write. The cookie keeps its Strict setting, and the completing request is
 * authenticated exactly like every other console write.
 */
import type { Transport } from '@connectrpc/connect';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ConsoleSeatService } from '../../gen/vps/console/v1/console_seats_pb';
import type { Seat } from '../../gen/vps/seat/v1/seat_pb';
import { CONNECT_CALLBACK_PATH } from '../../core/services/console-seat.service';
import { seatJson } from '../presenters/accounts';
import { forwardedHeaders, forwardResponseHeaders } from '../rpc-route';
import { okEnvelope } from '../schemas/common';
import { SeatJson } from '../schemas/seats';
import { CONSOLE_API_PREFIX } from './console-api';

/** The console page that finishes a connect; console/src/pages/seats.tsx reads these fragment names. */
export const CONNECT_RESULT_PAGE = '/console/seats';

const SeatParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });
type SeatParams = Static<typeof SeatParams>;

const CompleteBody = Type.Object(
  {
    code: Type.String({ minLength: 1, maxLength: 2_000, description: 'The code the platform returned to the callback' }),
    state: Type.String({ minLength: 1, maxLength: 4_000, description: 'The state the platform returned to the callback' }),
  },
  { additionalProperties: false },
);
type CompleteBody = Static<typeof CompleteBody>;

// What the platform appends: code and state, or error (access_denied) when the person declined.
const CallbackQuery = Type.Object({
  code: Type.Optional(Type.String({ maxLength: 2_000 })),
  state: Type.Optional(Type.String({ maxLength: 4_000 })),
  error: Type.Optional(Type.String({ maxLength: 200 })),
});
type CallbackQuery = Static<typeof CallbackQuery>;

const ok = (data: Record<string, unknown>) => ({ code: 0 as const, message: 'ok' as const, data });
const seatData = (seat: Seat | undefined) => {
  // Every ConsoleSeatService answer carries the seat; its absence is a wiring bug.
  if (!seat) throw new Error('ConsoleSeatService answered without a seat');
  return ok(seatJson(seat));
};

export async function registerConsoleSeats(app: FastifyInstance, opts: { transport: Transport }): Promise<void> {
  const { transport } = opts;
  const m = ConsoleSeatService.method;

  app.get<{ Querystring: CallbackQuery }>(
    CONNECT_CALLBACK_PATH,
    // The redirect carries the platform's authorization code.
    { config: { carriesSecret: true }, schema: { hide: true, querystring: CallbackQuery } },
    async (req, reply) => {
      const q = req.query;
      const fragment = new URLSearchParams(
        q.code && q.state
          ? { connect_code: q.code, connect_state: q.state }
          : { connect_error: q.error || 'the platform returned neither a code nor an error' },
      );
      // 303: the follow-up is a plain GET of the console page, whatever brought the browser here.
      return reply.header('referrer-policy', 'no-referrer').redirect(`${CONNECT_RESULT_PAGE}#${fragment.toString()}`, 303);
    },
  );

  await app.register(
    async (api) => {
      api.post<{ Params: SeatParams }>(
        '/seats/:id/connect',
        {
          // The authorize URL holds the connect's signed state, a one-time capability.
          config: { carriesSecret: true },
          schema: {
            summary: "Start connecting a platform account to one of the customer's seats",
            params: SeatParams,
            response: { 200: okEnvelope(Type.Object({ authorizeUrl: Type.String() })) },
          },
        },
        async (req, reply) => {
          const { id } = req.params;
          const res = await transport.unary(m.startSeatConnect, undefined, undefined, forwardedHeaders(req), { seatId: id });
          forwardResponseHeaders(res.header, reply);
          return ok({ authorizeUrl: res.message.authorizeUrl });
        },
      );

      api.post<{ Body: CompleteBody }>(
        '/seats/oauth/complete',
        {
          schema: {
            summary: 'Finish a connect with what the platform returned; binds the account',
            body: CompleteBody,
            response: { 200: okEnvelope(SeatJson) },
          },
        },
        async (req, reply) => {
          const body = req.body;
          const res = await transport.unary(m.completeSeatConnect, undefined, undefined, forwardedHeaders(req), body);
          forwardResponseHeaders(res.header, reply);
          return seatData(res.message.seat);
        },
      );

      api.post<{ Params: SeatParams }>(
        '/seats/:id/unbind',
        { schema: { summary: "Unbind one of the customer's seats", params: SeatParams, response: { 200: okEnvelope(SeatJson) } } },
        async (req, reply) => {
          const { id } = req.params;
          const res = await transport.unary(m.unbindSeat, undefined, undefined, forwardedHeaders(req), { seatId: id });
          forwardResponseHeaders(res.header, reply);
          return seatData(res.message.seat);
        },
      );
    },
    { prefix: CONSOLE_API_PREFIX },
  );
}
