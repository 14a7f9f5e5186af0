import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from '../api';
import { Confirm } from '../components/dialog';
import { Badge, Empty, ErrorNote, Loading, Time } from '../components/feedback';
import { PageTitle } from '../components/layout';
import { toApiError, useAction, useLoad } from '../components/load';
import { takeConnectCallback } from '../pending-connect';
import { navigate, useLocation } from '../router';
import type { Seat } from '../types';

const AUTHORIZATION: Record<Seat['authorizationStatus'], { tone: 'ok' | 'bad' | 'neutral'; label: string }> = {
  active: { tone: 'ok', label: 'authorized' },
  reauthorization_required: { tone: 'bad', label: 'reauthorization required' },
  unbound: { tone: 'neutral', label: 'unbound' },
};

/** Platform errors the callback passes on (gateway/routes/console-seats.ts), in words. */
const DECLINED: Record<string, string> = { access_denied: 'The connection was cancelled on the platform’s page; the seat is unchanged.' };

export function SeatsPage(): JSX.Element {
  const seats = useLoad(() => api<{ items: Seat[] }>('GET', '/v1/seats'), 'seats');
  const { params } = useLocation();
  const { busy, error, setError, run } = useAction();
  const [completing, setCompleting] = useState(false);
  const [unbinding, setUnbinding] = useState<Seat | null>(null);

  useEffect(() => {
    // The platform's callback, held since the console loaded (and through a sign-in, if the session
    // expired on the platform's page): completed here, same-site, with the session and CSRF token.
    const fragment = takeConnectCallback();
    if (!fragment) return;
    const declined = fragment.get('connect_error');
    if (declined) {
      setError(new ApiError(0, DECLINED[declined] ?? `The platform did not connect the account: ${declined}`));
      return;
    }
    setCompleting(true);
    api<Seat>('POST', '/console/api/seats/oauth/complete', { code: fragment.get('connect_code'), state: fragment.get('connect_state') })
      .then((seat) => {
        navigate(`/seats?connected=${encodeURIComponent(seat.id)}`, { replace: true });
        return seats.reload();
      })
      .catch((err: unknown) => setError(toApiError(err)))
      .finally(() => setCompleting(false));
    // Once, on arrival from the platform: the callback is handed over only once.
  }, []);

  const connect = (seat: Seat) =>
    run(
      async () => {
        const { authorizeUrl } = await api<{ authorizeUrl: string }>('POST', `/console/api/seats/${encodeURIComponent(seat.id)}/connect`);
        // Leaves the console for the platform's consent page, which sends the browser back to the callback.
        window.location.assign(authorizeUrl);
      },
      { leaves: true },
    );

  const unbind = (seat: Seat) =>
    run(async () => {
      await api<Seat>('POST', `/console/api/seats/${encodeURIComponent(seat.id)}/unbind`);
      setUnbinding(null);
      await seats.reload();
    });

  const connected = params.get('connected');
  const connectedSeat = connected ? seats.data?.items.find((s) => s.id === connected) : undefined;
  return (
    <>
      <PageTitle title="Seats">
        <button type="button" onClick={() => void seats.reload()}>
          Refresh
        </button>
      </PageTitle>
      <p class="lead">
        Each seat is bound to one platform account. Connect an account by signing in to the platform and approving this service.
      </p>
      {completing ? (
        <p class="muted" role="status" aria-live="polite">
          Connecting the account…
        </p>
      ) : null}
      {connected && !error ? (
        <p class="note ok-text" role="status">
          Connected {connectedSeat?.accountUsername ?? connectedSeat?.capabilityAccountId ?? 'the account'} to seat{' '}
          {connectedSeat?.name ?? connected}.
        </p>
      ) : null}
      <ErrorNote error={error ?? (seats.state === 'error' ? seats.error : null)} />
      {seats.data ? (
        <SeatTable seats={seats.data.items} busy={busy || completing} onConnect={(s) => void connect(s)} onUnbind={setUnbinding} />
      ) : seats.state === 'loading' ? (
        <Loading />
      ) : null}
      {unbinding ? (
        <Confirm
          title="Unbind this seat?"
          action="Unbind seat"
          busy={busy}
          onCancel={() => setUnbinding(null)}
          onConfirm={() => void unbind(unbinding)}
        >
          <p>
            {unbinding.accountUsername ?? unbinding.capabilityAccountId} will no longer publish through seat{' '}
            <strong>{unbinding.name}</strong>. You can connect an account again later.
          </p>
        </Confirm>
      ) : null}
    </>
  );
}

function SeatActions({
  seat,
  busy,
  onConnect,
  onUnbind,
}: {
  seat: Seat;
  busy: boolean;
  onConnect: (s: Seat) => void;
  onUnbind: (s: Seat) => void;
}): JSX.Element {
  return (
    <div class="actions">
      {!seat.bound ? (
        <button type="button" disabled={busy} onClick={() => onConnect(seat)}>
          Connect
        </button>
      ) : null}
      {seat.authorizationStatus === 'reauthorization_required' ? (
        <button type="button" disabled={busy} onClick={() => onConnect(seat)}>
          Reconnect
        </button>
      ) : null}
      {seat.bound ? (
        <button type="button" class="danger" disabled={busy} onClick={() => onUnbind(seat)}>
          Unbind
        </button>
      ) : null}
    </div>
  );
}

function SeatTable(props: { seats: Seat[]; busy: boolean; onConnect: (s: Seat) => void; onUnbind: (s: Seat) => void }): JSX.Element {
  if (props.seats.length === 0) return <Empty>No seats yet.</Empty>;
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
            <th>Actions</th>
          </tr>
        </thead>
        <tbody>
          {props.seats.map((seat) => {
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
                <td>
                  <SeatActions seat={seat} busy={props.busy} onConnect={props.onConnect} onUnbind={props.onUnbind} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
