import type { JSX } from 'preact';
import { api } from '../api';
import { Badge, Empty, ErrorNote, Loading, Time } from '../components/feedback';
import { PageTitle } from '../components/layout';
import { useLoad } from '../components/load';
import type { Seat } from '../types';

const AUTHORIZATION: Record<Seat['authorizationStatus'], { tone: 'ok' | 'bad' | 'neutral'; label: string }> = {
  active: { tone: 'ok', label: 'authorized' },
  reauthorization_required: { tone: 'bad', label: 'reauthorization required' },
  unbound: { tone: 'neutral', label: 'unbound' },
};

export function SeatsPage(): JSX.Element {
  const seats = useLoad(() => api<{ items: Seat[] }>('GET', '/v1/seats'), 'seats');
  return (
    <>
      <PageTitle title="Seats">
        <button type="button" onClick={() => void seats.reload()}>
          Refresh
        </button>
      </PageTitle>
      <p class="lead">Each seat is bound to one platform account. Seats are added and bound by your administrator.</p>
      <ErrorNote error={seats.state === 'error' ? seats.error : null} />
      {seats.data ? <SeatTable seats={seats.data.items} /> : seats.state === 'loading' ? <Loading /> : null}
    </>
  );
}

function SeatTable({ seats }: { seats: Seat[] }): JSX.Element {
  if (seats.length === 0) return <Empty>No seats yet.</Empty>;
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th>Name</th>
            <th>Track</th>
            <th>Bound account</th>
            <th>Authorization</th>
            <th>Bound at</th>
          </tr>
        </thead>
        <tbody>
          {seats.map((seat) => {
            const auth = AUTHORIZATION[seat.authorizationStatus];
            return (
              <tr key={seat.id}>
                <td>
                  {seat.name}
                  <div class="muted mono small">{seat.id}</div>
                </td>
                <td>{seat.track === 'video' ? 'Video' : 'Shop'}</td>
                <td>
                  {seat.capabilityAccountId ? (
                    <>
                      {seat.accountUsername ?? <span class="muted">no username</span>}
                      <div class="muted mono small" title={seat.track === 'video' ? 'businessId' : 'creatorUserOpenId'}>
                        {seat.capabilityAccountId}
                      </div>
                    </>
                  ) : (
                    <span class="muted">not bound</span>
                  )}
                </td>
                <td>
                  <Badge tone={auth.tone}>{auth.label}</Badge>
                </td>
                <td>
                  <Time iso={seat.boundAt} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
