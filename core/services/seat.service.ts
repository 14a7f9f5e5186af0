import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type { SeatService } from '../../gen/vps/seat/v1/seat_pb';
import { customerOf } from '../context';
import type { Db } from '../db/client';
import { listSeatsOfCustomer } from '../db/repositories/seats';
import { toSeat } from '../mappers/accounts';

export class SeatHandlers implements ServiceImpl<typeof SeatService> {
  constructor(private readonly deps: { db: Db }) {}

  async listSeats(_req: unknown, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    const rows = await listSeatsOfCustomer(this.deps.db, customerId);
    return { seats: rows.map(toSeat) };
  }
}
