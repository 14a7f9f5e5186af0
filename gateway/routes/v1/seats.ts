import { SeatService } from '../../../gen/vps/seat/v1/seat_pb';
import { seatJson } from '../../presenters/accounts';
import { listOf, okEnvelope } from '../../schemas/common';
import { SeatJson } from '../../schemas/seats';
import { defineRoute } from '../../rpc-route';

export const seatRoutes = [
  defineRoute({
    method: 'GET',
    url: '/seats',
    summary: 'List the seats with their bindings',
    rpc: SeatService.method.listSeats,
    schema: { response: { 200: okEnvelope(listOf(SeatJson)) } },
    toRequest: () => ({}),
    toData: (res) => ({ items: res.seats.map(seatJson) }),
  }),
];
