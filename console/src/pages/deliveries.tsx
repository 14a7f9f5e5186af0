import type { JSX } from 'preact';
import { api, query } from '../api';
import { DeliveryTable, OUTCOMES } from '../components/delivery-table';
import { Empty, ErrorNote, Loading } from '../components/feedback';
import { PageTitle } from '../components/layout';
import { useLoad } from '../components/load';
import { usePollWhile } from '../components/poll';
import { navigate, type Location } from '../router';
import type { DeliveryPage, DeliveryStatus, WebhookEndpoint } from '../types';

/**
 * The delivery log of every endpoint (GET /v1/deliveries), or of the one chosen (`endpoint` in the
 * address). Filters and paging run on the server (the route's `status`, `types` and `cursor`), so a
 * filtered page is as full as an unfiltered one.
 */
export function DeliveriesPage({ location }: { location: Location }): JSX.Element {
  const p = location.params;
  const endpointId = p.get('endpoint') ?? '';
  const status = (OUTCOMES as string[]).includes(p.get('status') ?? '') ? (p.get('status') as DeliveryStatus) : '';
  const type = p.get('type') ?? '';
  const cursor = p.get('cursor') ?? '';
  const set = (changes: Record<string, string>, replace = true) =>
    navigate(`/deliveries${query({ endpoint: endpointId, status, type, cursor, ...changes })}`, { replace });

  const endpoints = useLoad(() => api<{ items: WebhookEndpoint[] }>('GET', '/v1/webhook-endpoints'), 'endpoints');
  const deliveries = useLoad(() => {
    const path = endpointId ? `/v1/webhook-endpoints/${encodeURIComponent(endpointId)}/deliveries` : '/v1/deliveries';
    return api<DeliveryPage>('GET', `${path}${query({ status, types: type, cursor, limit: 50 })}`);
  }, `${endpointId}|${status}|${type}|${cursor}`);
  const items = deliveries.data?.items ?? [];
  usePollWhile(
    items.some((d) => d.status === 'pending'),
    deliveries.reload,
  );
  // Deleted endpoints are not listed, but their deliveries stay in the log.
  const noEndpoints = endpoints.data?.items.length === 0;
  const seenTypes = [...new Set(items.map((d) => d.eventType))].sort();

  return (
    <>
      <PageTitle title="Delivery log">
        <button type="button" onClick={() => void Promise.all([endpoints.reload(), deliveries.reload()])}>
          Refresh
        </button>
      </PageTitle>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label class="field grow">
          <span>Endpoint</span>
          <select value={endpointId} onChange={(e) => set({ endpoint: e.currentTarget.value, cursor: '' })}>
            <option value="">All endpoints</option>
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
          <input
            type="search"
            list="delivery-event-types"
            placeholder="any, or a pattern such as vplat.*"
            value={type}
            onChange={(e) => set({ type: e.currentTarget.value.trim(), cursor: '' })}
          />
          <datalist id="delivery-event-types">
            {seenTypes.map((t) => (
              <option key={t} value={t} />
            ))}
          </datalist>
        </label>
      </form>
      <ErrorNote error={endpoints.state === 'error' ? endpoints.error : deliveries.state === 'error' ? deliveries.error : null} />
      {noEndpoints && items.length === 0 ? (
        <Empty>No webhook endpoints: add one on the Webhooks page to see its deliveries here.</Empty>
      ) : deliveries.data ? (
        <DeliveryTable deliveries={items} endpoints={endpoints.data?.items} showEvent onChanged={deliveries.reload} />
      ) : deliveries.state === 'loading' ? (
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
