import type { JSX } from 'preact';
import { api } from '../api';
import { DeliveryTable } from '../components/delivery-table';
import { ErrorNote, Loading } from '../components/feedback';
import { PageTitle } from '../components/layout';
import { useAction, useLoad } from '../components/load';
import { usePollWhile } from '../components/poll';
import { Link } from '../router';
import type { DeliveryPage, ServiceEvent, WebhookEndpoint } from '../types';

export function EventDetailPage({ id }: { id: string }): JSX.Element {
  const path = `/v1/events/${encodeURIComponent(id)}`;
  const event = useLoad(() => api<ServiceEvent>('GET', path), id);
  const deliveries = useLoad(() => api<DeliveryPage>('GET', `${path}/deliveries?limit=100`), id);
  const endpoints = useLoad(() => api<{ items: WebhookEndpoint[] }>('GET', '/v1/webhook-endpoints'), 'endpoints');
  usePollWhile(deliveries.data?.items.some((d) => d.status === 'pending') ?? false, deliveries.reload);
  const { busy, error, run } = useAction();

  const resendAll = () =>
    run(async () => {
      await api('POST', `${path}/redeliver`, {});
      await deliveries.reload();
    });

  return (
    <>
      <p class="crumbs">
        <Link to="/events">← Events</Link>
      </p>
      <PageTitle title={event.data?.type ?? 'Event'} />
      <p class="mono muted">{id}</p>
      <ErrorNote error={event.state === 'error' ? event.error : null} />
      {event.data ? (
        <pre class="json" tabIndex={0} aria-label="Event JSON">
          {JSON.stringify(event.data, null, 2)}
        </pre>
      ) : event.state === 'loading' ? (
        <Loading />
      ) : null}
      <div class="page-title">
        <h2>Deliveries</h2>
        <div class="tools">
          <button type="button" onClick={() => void deliveries.reload()}>
            Refresh
          </button>
          <button
            type="button"
            disabled={busy}
            onClick={() => void resendAll()}
            title="A new delivery to every endpoint whose patterns match this event"
          >
            Resend to all matching endpoints
          </button>
        </div>
      </div>
      <ErrorNote error={error ?? (deliveries.state === 'error' ? deliveries.error : null)} />
      {deliveries.data ? (
        <DeliveryTable
          deliveries={deliveries.data.items}
          endpoints={endpoints.data?.items}
          showEvent={false}
          onChanged={deliveries.reload}
        />
      ) : deliveries.state === 'loading' ? (
        <Loading />
      ) : null}
    </>
  );
}
