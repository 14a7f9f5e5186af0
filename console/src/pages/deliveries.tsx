import type { JSX } from 'preact';
import { useEffect } from 'preact/hooks';
import { api, query } from '../api';
import { DeliveryTable, OUTCOMES } from '../components/delivery-table';
import { Empty, ErrorNote, Loading } from '../components/feedback';
import { PageTitle } from '../components/layout';
import { useLoad } from '../components/load';
import { usePollWhile } from '../components/poll';
import { navigate, type Location } from '../router';
import type { DeliveryPage, DeliveryStatus, WebhookEndpoint } from '../types';

/**
 * One endpoint's delivery log. Filters and paging run on the server (the route's `status`,
 * `types` and `cursor`), so a filtered page is as full as an unfiltered one.
 */
export function DeliveriesPage({ location }: { location: Location }): JSX.Element {
  const p = location.params;
  const endpointId = p.get('endpoint') ?? '';
  const status = (OUTCOMES as string[]).includes(p.get('status') ?? '') ? (p.get('status') as DeliveryStatus) : '';
  const type = p.get('type') ?? '';
  const cursor = p.get('cursor') ?? '';
  const set = (changes: Record<string, string>, replace = true) => navigate(`/deliveries${query({ endpoint: endpointId, status, type, cursor, ...changes })}`, { replace });

  const endpoints = useLoad(() => api<{ items: WebhookEndpoint[] }>('GET', '/v1/webhook-endpoints'), 'endpoints');
  const first = endpoints.data?.items[0];
  useEffect(() => {
    if (!endpointId && first) set({ endpoint: first.id });
  }, [endpointId, first?.id]);

  const deliveries = useLoad(
    () => (endpointId ? api<DeliveryPage>('GET', `/v1/webhook-endpoints/${encodeURIComponent(endpointId)}/deliveries${query({ status, types: type, cursor, limit: 50 })}`) : Promise.resolve(null)),
    `${endpointId}|${status}|${type}|${cursor}`,
  );
  const items = deliveries.data?.items ?? [];
  usePollWhile(items.some((d) => d.status === 'pending'), deliveries.reload);
  const seenTypes = [...new Set(items.map((d) => d.eventType))].sort();

  return (
    <>
      <PageTitle title="Delivery log">
        <button type="button" onClick={() => void deliveries.reload()}>
          Refresh
        </button>
      </PageTitle>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label class="field grow">
          <span>Endpoint</span>
          <select value={endpointId} onChange={(e) => set({ endpoint: e.currentTarget.value, cursor: '' })}>
            {endpoints.data?.items.map((ep) => (
              <option key={ep.id} value={ep.id}>
                {ep.url}
              </option>
            ))}
          </select>
        </label>
        <label class="field">
          <span>Outcome</span>
          <select value={status} onChange={(e) => set({ status: e.currentTarget.value, cursor: '' })}>
            <option value="">any</option>
            {OUTCOMES.map((o) => (
              <option key={o} value={o}>
                {o}
              </option>
            ))}
          </select>
        </label>
        <label class="field">
          <span>Event type</span>
          <input type="search" list="delivery-event-types" placeholder="any, or a pattern such as vplat.*" value={type} onChange={(e) => set({ type: e.currentTarget.value.trim(), cursor: '' })} />
          <datalist id="delivery-event-types">
            {seenTypes.map((t) => (
              <option key={t} value={t} />
            ))}
          </datalist>
        </label>
      </form>
      <ErrorNote error={endpoints.state === 'error' ? endpoints.error : deliveries.state === 'error' ? deliveries.error : null} />
      {endpoints.data && endpoints.data.items.length === 0 ? <Empty>No webhook endpoints: add one on the Webhooks page to see its deliveries here.</Empty> : null}
      {deliveries.data ? (
        <DeliveryTable deliveries={items} endpoints={endpoints.data?.items} showEvent onChanged={deliveries.reload} />
      ) : endpointId && deliveries.state === 'loading' ? (
        <Loading />
      ) : null}
      <nav class="pager" aria-label="Pages">
        {cursor ? (
          <button type="button" onClick={() => set({ cursor: '' }, false)}>
            First page
          </button>
        ) : null}
        {deliveries.data?.nextCursor ? (
          <button type="button" onClick={() => set({ cursor: deliveries.data!.nextCursor! }, false)}>
            Next page
          </button>
        ) : null}
      </nav>
    </>
  );
}
