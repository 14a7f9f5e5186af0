import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, type ApiError } from '../api';
import { formatDuration } from '../format';
import { Link } from '../router';
import type { Delivery, DeliveryStatus, WebhookEndpoint } from '../types';
import { Badge, Cut, Empty, ErrorNote, Time } from './feedback';
import { toApiError } from './load';

/** What a cut keeps of an id's end (its random part) and of a URL's (a last path segment, mostly). */
const ID_TAIL = 6;
const URL_TAIL = 20;

export const OUTCOMES: DeliveryStatus[] = ['succeeded', 'failed', 'pending', 'cancelled'];
const TONE: Record<DeliveryStatus, 'ok' | 'bad' | 'warn' | 'neutral'> = {
  succeeded: 'ok',
  failed: 'bad',
  pending: 'warn',
  cancelled: 'neutral',
};

/**
 * Deliveries with their attempts and a Resend button. Resend asks for a new delivery of the same
 * event to the same endpoint (the resent one stays in the log, as history); `onChanged` reloads.
 * Any delivery can be resent, as the spec's console offers ("failed or any delivery"): a pending
 * one keeps its own retries, and a receiver deduplicates the two by event id.
 *
 * Long values (endpoint URLs, ids, event types) stay on one line, cut with an ellipsis (URLs and
 * ids in the middle, keeping the end that tells them apart), with the whole value in the title and
 * in the text a screen reader or a copy gets: wrapped, a long URL would make rows of uneven height
 * that are hard to scan; unwrapped, it would push the table wider than the page.
 */
export function DeliveryTable(props: {
  deliveries: Delivery[];
  endpoints?: WebhookEndpoint[];
  showEvent: boolean;
  onChanged: () => Promise<void>;
}): JSX.Element {
  const [open, setOpen] = useState<Record<string, boolean>>({});
  const [resending, setResending] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const urlOf = new Map(props.endpoints?.map((e) => [e.id, e.url]));

  const resend = async (d: Delivery) => {
    setResending(d.id);
    setError(null);
    setNotice(null);
    try {
      const started = await api<{ items: Delivery[] }>('POST', `/v1/events/${encodeURIComponent(d.eventId)}/redeliver`, {
        endpointId: d.endpointId,
      });
      setNotice(
        started.items.length
          ? `Resent ${d.eventType}: a new delivery is on its way.`
          : 'Nothing was resent: the endpoint no longer matches this event.',
      );
      await props.onChanged();
    } catch (err) {
      setError(toApiError(err));
    } finally {
      setResending(null);
    }
  };

  if (props.deliveries.length === 0) return <Empty>No deliveries match.</Empty>;
  // Failed deliveries open by default: their attempts are what the reader came for.
  const isOpen = (d: Delivery) => open[d.id] ?? d.status === 'failed';
  return (
    <>
      <ErrorNote error={error} />
      <p class="muted" role="status" aria-live="polite">
        {notice}
      </p>
      <div class="table-wrap">
        <table class="deliveries">
          <thead>
            <tr>
              <th>
                <span class="sr-only">Attempts</span>
              </th>
              {props.showEvent ? <th>Event</th> : null}
              <th class="endpoint">Endpoint</th>
              <th>Outcome</th>
              <th>Attempts</th>
              <th>Started</th>
              <th>
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          {props.deliveries.map((d) => {
            const last = d.attempts[d.attempts.length - 1];
            return (
              <tbody key={d.id} class={`delivery ${d.status}`} data-delivery-id={d.id}>
                <tr>
                  <td>
                    <button
                      type="button"
                      class="toggle"
                      aria-expanded={isOpen(d)}
                      aria-label={`${isOpen(d) ? 'Hide' : 'Show'} attempts`}
                      onClick={() => setOpen({ ...open, [d.id]: !isOpen(d) })}
                    >
                      {isOpen(d) ? '▾' : '▸'}
                    </button>
                  </td>
                  {props.showEvent ? (
                    <td class="event">
                      <code class="ellipsis" title={d.eventType}>
                        {d.eventType}
                      </code>
                      <div class="small fill">
                        <Link class="mono" to={`/events/${encodeURIComponent(d.eventId)}`}>
                          <Cut value={d.eventId} keep={ID_TAIL} />
                        </Link>
                      </div>
                    </td>
                  ) : null}
                  <td class="clip endpoint">
                    <EndpointCell id={d.endpointId} url={urlOf.get(d.endpointId)} known={props.endpoints !== undefined} />
                  </td>
                  <td>
                    <Badge tone={TONE[d.status]}>{d.status}</Badge>
                    {d.reason === 'redeliver' ? <div class="muted small">resend</div> : null}
                  </td>
                  <td class="nowrap">
                    {d.attempts.length}
                    {last ? <span class="muted"> · last {last.statusCode ?? 'no answer'}</span> : null}
                  </td>
                  <td class="nowrap">
                    <Time iso={d.createdAt} />
                  </td>
                  <td class="row-actions">
                    <button
                      type="button"
                      class={d.status === 'failed' ? 'primary small' : 'small'}
                      title={
                        d.status === 'pending'
                          ? 'Send again now as a new delivery; this one keeps retrying'
                          : 'Send again as a new delivery'
                      }
                      disabled={resending !== null}
                      onClick={() => void resend(d)}
                    >
                      {resending === d.id ? 'Resending…' : 'Resend'}
                    </button>
                  </td>
                </tr>
                {isOpen(d) ? (
                  <tr class="attempts">
                    <td colSpan={props.showEvent ? 7 : 6}>
                      <Attempts delivery={d} />
                    </td>
                  </tr>
                ) : null}
              </tbody>
            );
          })}
        </table>
      </div>
    </>
  );
}

/** The endpoint's URL and id; an id the endpoint list lacks belongs to a deleted endpoint. */
function EndpointCell({ id, url, known }: { id: string; url: string | undefined; known: boolean }): JSX.Element {
  return (
    <>
      {url ? <Cut class="mono" value={url} keep={URL_TAIL} /> : known ? <span class="muted small">deleted endpoint</span> : null}
      <div class="muted mono small">
        <Cut value={id} keep={ID_TAIL} />
      </div>
    </>
  );
}

function Attempts({ delivery }: { delivery: Delivery }): JSX.Element {
  if (delivery.attempts.length === 0) return <p class="muted">No attempt yet.</p>;
  return (
    <table class="nested">
      <thead>
        <tr>
          <th>#</th>
          <th>Time</th>
          <th>Status code</th>
          <th>Duration</th>
          <th>Failure reason</th>
        </tr>
      </thead>
      <tbody>
        {delivery.attempts.map((a) => (
          <tr key={a.attempt}>
            <td>{a.attempt}</td>
            <td>
              <Time iso={a.startedAt} />
            </td>
            <td>{a.statusCode === null ? <span class="muted">no answer</span> : <StatusCode code={a.statusCode} />}</td>
            <td>{formatDuration(a.durationMs)}</td>
            <td class="break">{a.error ?? <span class="muted">—</span>}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function StatusCode({ code }: { code: number }): JSX.Element {
  return <span class={code >= 200 && code < 300 ? 'ok-text' : 'bad-text'}>{code}</span>;
}
