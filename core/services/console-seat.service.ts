import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type {
  CompleteSeatConnectRequest,
  ConsoleSeatService,
  StartSeatConnectRequest,
  UnbindSeatRequest,
} from '../../gen/vps/console/v1/console_seats_pb';
import { customerOf } from '../context';
import * as seatsRepo from '../db/repositories/seats';
import { invalidField } from '../errors';
import type { TokenSigner } from '../media/signed-tokens';
import { toSeat } from '../mappers/accounts';
import { bindAccount, seatNotFound, type BindingDeps } from '../seats/binding';
import { issueConnectState, openConnectState } from '../seats/connect-state';
import { CONNECTORS } from '../seats/connectors';
import type { Upstream } from '../upstream';

/** Where the platform sends the browser back: a gateway route under the console. */
export const CONNECT_CALLBACK_PATH = '/console/oauth/callback';

export interface ConsoleSeatDeps extends BindingDeps {
  upstream: Upstream;
  signer: TokenSigner;
  /** The gateway's public origin: the redirect_uri must be an address the browser reaches. */
  publicUrl: string;
  /** How long a connect may take from the consent page to the callback. */
  stateTtlMs: number;
}

const BAD_STATE = 'is invalid or expired; start connecting the seat again';

/** A customer's own seats, connected through the platform's consent page by a console user. */
export class ConsoleSeatHandlers implements ServiceImpl<typeof ConsoleSeatService> {
  constructor(private readonly deps: ConsoleSeatDeps) {}

  private get redirectUri(): string {
    return this.deps.publicUrl + CONNECT_CALLBACK_PATH;
  }

  async startSeatConnect(req: StartSeatConnectRequest, ctx: HandlerContext) {
    const { customerId, userId } = customerOf(ctx);
    const seat = await this.ownSeat(customerId, req.seatId);
    const state = issueConnectState(this.deps.signer, { customerId, userId, seatId: seat.id }, this.deps.stateTtlMs);
    return { authorizeUrl: CONNECTORS[seat.track].authorizeUrl(this.deps.upstream, { redirectUri: this.redirectUri, state }) };
  }

  async completeSeatConnect(req: CompleteSeatConnectRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    if (!req.code) throw invalidField('code', 'is required');
    const claims = openConnectState(this.deps.signer, req.state);
    if (!claims) throw invalidField('state', BAD_STATE);
    // Another customer's state (a link passed on, or a callback replayed in another browser) names
    // a seat this caller may not touch: answered as if the seat did not exist.
    if (claims.customerId !== customerId) throw seatNotFound(claims.seatId);
    const seat = await this.ownSeat(customerId, claims.seatId);
    // Exchanged only once the state is good: a code is single use, and a forged request must not burn it.
    const granted = await CONNECTORS[seat.track].exchange(this.deps.upstream, {
      code: req.code,
      redirectUri: this.redirectUri,
      nowMs: Date.now(),
    });
    const row = await bindAccount(this.deps, { seatId: seat.id, customerId, ...granted });
    return { seat: toSeat(row) };
  }

  async unbindSeat(req: UnbindSeatRequest, ctx: HandlerContext) {
    const seat = await this.ownSeat(customerOf(ctx).customerId, req.seatId);
    const row = await seatsRepo.unbindSeat(this.deps.db, seat.id);
    if (!row) throw seatNotFound(req.seatId);
    return { seat: toSeat(row) };
  }

  /** Another customer's seat is answered like a missing one. */
  private async ownSeat(customerId: string, seatId: string): Promise<seatsRepo.SeatRow> {
    const seat = seatId ? await seatsRepo.findSeat(this.deps.db, seatId) : undefined;
    if (!seat || seat.customerId !== customerId) throw seatNotFound(seatId);
    return seat;
  }
}
