import type { JSX } from 'preact';
import { api, query } from '../api';
import { Empty, ErrorNote, Loading, Time } from '../components/feedback';
import { PageTitle } from '../components/layout';
import { useLoad } from '../components/load';
import { isoToLocalInput, localInputToIso } from '../format';
import { Link, navigate, type Location } from '../router';
import type { EventPage } from '../types';

const RECENT = [
  { label: 'Last hour', ms: 3_600_000 },
  { label: 'Last 24 hours', ms: 86_400_000 },
  { label: 'Last 7 days', ms: 7 * 86_400_000 },
];

/** Events oldest first, as GET /v1/events pages them; "since" is the quick way to the recent ones. */
export function EventsPage({ location }: { location: Location }): JSX.Element {
  const p = location.params;
  // Test events (service.endpoint.test) are left out of reads unless asked for, as in the API.
  const filters = {
    types: p.get('types') ?? '',
    since: p.get('since') ?? '',
    until: p.get('until') ?? '',
    includeTest: p.get('includeTest') === 'true' ? 'true' : '',
  };
  const cursor = p.get('cursor') ?? '';
  const go = (changes: Record<string, string>, replace = false) =>
    navigate(`/events${query({ ...filters, cursor, ...changes })}`, { replace });

  const page = useLoad(
    () => api<EventPage>('GET', `/v1/events${query({ ...filters, cursor, limit: 50 })}`),
    `${filters.types}|${filters.since}|${filters.until}|${filters.includeTest}|${cursor}`,
  );

  const apply = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    go({
      types: String(form.get('types'))
        .split(/[\s,]+/)
        .filter(Boolean)
        .join(','),
      since: localInputToIso(String(form.get('since'))) ?? '',
      until: localInputToIso(String(form.get('until'))) ?? '',
      includeTest: form.get('includeTest') ? 'true' : '',
      cursor: '',
    });
  };

  return (
    <>
      <PageTitle title="Events">
        <button type="button" onClick={() => void page.reload()}>
          Refresh
        </button>
      </PageTitle>
      {/* Keyed by the URL's filters so Back and the quick ranges refill the inputs. */}
      <form key={`${filters.types}|${filters.since}|${filters.until}|${filters.includeTest}`} class="filters" onSubmit={apply}>
        <label class="field grow">
          <span>Types</span>
          <input name="types" defaultValue={filters.types} placeholder="vplat.comment.created, vplat.message.received" />
        </label>
        <label class="field">
          <span>Since</span>
          <input name="since" type="datetime-local" defaultValue={isoToLocalInput(filters.since)} />
        </label>
        <label class="field">
          <span>Until</span>
          <input name="until" type="datetime-local" defaultValue={isoToLocalInput(filters.until)} />
        </label>
        <label class="check">
          <input name="includeTest" type="checkbox" defaultChecked={filters.includeTest === 'true'} />
          <span>Test events</span>
        </label>
        <button type="submit" class="primary">
          Apply
        </button>
      </form>
      <div class="quick">
        {RECENT.map((r) => (
          <button
            key={r.label}
            type="button"
            class="small"
            onClick={() => go({ since: new Date(Date.now() - r.ms).toISOString(), until: '', cursor: '' })}
          >
            {r.label}
          </button>
        ))}
        {filters.types || filters.since || filters.until || filters.includeTest ? (
          <button type="button" class="small link" onClick={() => go({ types: '', since: '', until: '', includeTest: '', cursor: '' })}>
            Clear filters
          </button>
        ) : null}
      </div>
      <ErrorNote error={page.state === 'error' ? page.error : null} />
      {page.data ? (
        page.data.items.length === 0 ? (
          <Empty>No events match.</Empty>
        ) : (
          <EventTable page={page.data} />
        )
      ) : page.state === 'loading' ? (
        <Loading />
      ) : null}
      <nav class="pager" aria-label="Pages">
        {cursor ? (
          <button type="button" onClick={() => go({ cursor: '' })}>
            First page
          </button>
        ) : null}
        {page.data?.hasMore ? (
          <button type="button" onClick={() => go({ cursor: page.data!.nextCursor })}>
            Next page
          </button>
        ) : null}
      </nav>
    </>
  );
}

function EventTable({ page }: { page: EventPage }): JSX.Element {
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th>Type</th>
            <th>Event id</th>
            <th>Seat</th>
            <th>Occurred</th>
            <th>Received</th>
          </tr>
        </thead>
        <tbody>
          {page.items.map((e) => (
            <tr key={e.id}>
              <td>
                <code>{e.type}</code>
                <div class="muted small">{e.event}</div>
              </td>
              <td>
                <Link class="mono" to={`/events/${encodeURIComponent(e.id)}`}>
                  {e.id}
                </Link>
              </td>
              <td class="mono small">{e.seat_id ?? <span class="muted">—</span>}</td>
              <td>
                <Time iso={e.occurred_at} />
              </td>
              <td>
                <Time iso={e.received_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
