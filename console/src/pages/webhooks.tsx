import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../api';
import { Confirm } from '../components/dialog';
import { EndpointDialog } from '../components/endpoint-dialog';
import { Badge, Empty, ErrorNote, Loading, Time } from '../components/feedback';
import { PageTitle } from '../components/layout';
import { toApiError, useAction, useLoad } from '../components/load';
import { usePollWhile } from '../components/poll';
import { SecretDialog } from '../components/secret-dialog';
import { formatDuration, parsePatterns } from '../format';
import { Link } from '../router';
import type { CreatedWebhookEndpoint, Delivery, DeliveryPage, EventType, ServiceEvent, WebhookEndpoint } from '../types';

/** How long a test's delivery is followed on screen; a retrying one is left to the delivery log. */
const TEST_FOLLOW_MS = 10_000;
/** A receiver usually answers within a second: read the delivery back often while it is followed. */
const TEST_POLL_MS = 500;

/** A test sent from this page: its delivery as last read, followed until it ends or `until`. */
interface SentTest {
  delivery: Delivery;
  until: number;
}

function following(test: SentTest): boolean {
  return test.delivery.status === 'pending' && Date.now() < test.until;
}

/** "Delivered: HTTP 200 in 34 ms", or why not, from the delivery's last attempt. */
function testOutcome(d: Delivery): string {
  const last = d.attempts[d.attempts.length - 1];
  const answer = last ? `${last.statusCode ? `HTTP ${last.statusCode}` : 'no response'} in ${formatDuration(last.durationMs)}` : '';
  switch (d.status) {
    case 'succeeded':
      return `Delivered: ${answer}`;
    case 'failed':
      return `Failed after ${d.attempts.length} attempt${d.attempts.length === 1 ? '' : 's'}: ${last?.error ?? answer}`;
    case 'cancelled':
      return 'Cancelled: the endpoint was disabled or deleted before an attempt';
    case 'pending':
      return last ? `Attempt ${last.attempt} failed (${last.error ?? answer}); retrying on the schedule` : 'Sending…';
  }
}

/**
 * Every type a subscription may name, offered as suggestions. A record keyed by the catalogue's
 * type makes the build fail when a type is added to the catalogue and not here.
 */
const SUBSCRIBABLE: Record<EventType, true> = {
  'vplat.comment.created': true,
  'vplat.comment.deleted': true,
  'vplat.comment.visibility_changed': true,
  'vplat.message.received': true,
  'vplat.message.sent': true,
  'vplat.publish.status_changed': true,
  'vplat.publish.unconfirmed': true,
  'vplat.video.available': true,
  'vplat.video.failed': true,
  'vplat.account.authorization_removed': true,
  'service.endpoint.disabled': true,
};
const KNOWN_EVENT_TYPES = Object.keys(SUBSCRIBABLE);

export function WebhooksPage(): JSX.Element {
  const endpoints = useLoad(() => api<{ items: WebhookEndpoint[] }>('GET', '/v1/webhook-endpoints'), 'endpoints');
  const [created, setCreated] = useState<CreatedWebhookEndpoint | null>(null);
  const [deleting, setDeleting] = useState<WebhookEndpoint | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const { busy, error, setError, run } = useAction();
  const [tests, setTests] = useState<Record<string, SentTest>>({});

  const sendTest = async (endpoint: WebhookEndpoint) => {
    setError(null);
    try {
      const sent = await api<{ event: ServiceEvent; delivery: Delivery }>(
        'POST',
        `/v1/webhook-endpoints/${encodeURIComponent(endpoint.id)}/test`,
      );
      setTests((t) => ({ ...t, [endpoint.id]: { delivery: sent.delivery, until: Date.now() + TEST_FOLLOW_MS } }));
    } catch (err) {
      setError(toApiError(err));
    }
  };

  const refreshTests = async () => {
    const followed = Object.entries(tests).filter(([, t]) => following(t));
    try {
      const read = await Promise.all(
        followed.map(async ([endpointId, t]) => {
          const page = await api<DeliveryPage>('GET', `/v1/events/${encodeURIComponent(t.delivery.eventId)}/deliveries`);
          return [endpointId, page.items.find((d) => d.id === t.delivery.id) ?? t.delivery] as const;
        }),
      );
      setTests((t) => ({ ...t, ...Object.fromEntries(read.map(([id, delivery]) => [id, { ...t[id]!, delivery }])) }));
    } catch (err) {
      setError(toApiError(err));
      // Stop following: the outcome stays readable in the delivery log.
      setTests((t) => Object.fromEntries(Object.entries(t).map(([id, x]) => [id, { ...x, until: 0 }])));
    }
  };
  usePollWhile(Object.values(tests).some(following), refreshTests, TEST_POLL_MS);

  const create = (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const fields = new FormData(form);
    return run(async () => {
      setCreated(
        await api<CreatedWebhookEndpoint>('POST', '/v1/webhook-endpoints', {
          url: String(fields.get('url')).trim(),
          eventTypes: parsePatterns(String(fields.get('eventTypes'))),
          description: String(fields.get('description')).trim() || undefined,
        }),
      );
      form.reset();
      await endpoints.reload();
    });
  };

  const remove = (endpoint: WebhookEndpoint) =>
    run(async () => {
      try {
        await api('DELETE', `/v1/webhook-endpoints/${encodeURIComponent(endpoint.id)}`);
        await endpoints.reload();
      } finally {
        setDeleting(null);
      }
    });

  return (
    <>
      <PageTitle title="Webhook endpoints" />
      <p class="lead">
        Events are POSTed, signed, to each endpoint whose patterns match: <code>*</code> for all, <code>vplat.*</code> for the platform, or
        exact types. <em>Send test event</em> pushes a <code>service.endpoint.test</code> event to that endpoint alone, whatever its types.
      </p>
      <form class="inline-form" onSubmit={create}>
        <label class="field grow">
          <span>URL</span>
          <input name="url" type="url" required placeholder="https://example.com/hooks/vps" />
        </label>
        <label class="field">
          <span>Event types</span>
          <input name="eventTypes" required defaultValue="*" list="known-event-types" aria-describedby="event-types-help" />
          <datalist id="known-event-types">
            {['*', 'vplat.*', ...KNOWN_EVENT_TYPES].map((t) => (
              <option key={t} value={t} />
            ))}
          </datalist>
        </label>
        <label class="field">
          <span>Description</span>
          <input name="description" maxLength={500} placeholder="optional" />
        </label>
        <button type="submit" class="primary" disabled={busy}>
          Add endpoint
        </button>
      </form>
      <p id="event-types-help" class="muted small">
        Several patterns: separate them with commas.
      </p>
      <ErrorNote error={error ?? (endpoints.state === 'error' ? endpoints.error : null)} />
      {endpoints.data ? (
        <EndpointTable
          endpoints={endpoints.data.items}
          tests={tests}
          onTest={(ep) => void sendTest(ep)}
          onEdit={(ep) => setEditing(ep.id)}
          onDelete={setDeleting}
        />
      ) : endpoints.state === 'loading' ? (
        <Loading />
      ) : null}
      {created ? (
        <SecretDialog title="Endpoint added" label="Signing secret" secret={created.secret} onClose={() => setCreated(null)} />
      ) : null}
      {editing ? (
        <EndpointDialog
          id={editing}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            void endpoints.reload();
          }}
        />
      ) : null}
      {deleting ? (
        <Confirm
          title="Delete this endpoint?"
          action="Delete endpoint"
          busy={busy}
          onCancel={() => setDeleting(null)}
          onConfirm={() => void remove(deleting)}
        >
          <p>
            <code>{deleting.url}</code> will receive no more events.
          </p>
        </Confirm>
      ) : null}
    </>
  );
}

function TestNote({ endpointId, test }: { endpointId: string; test: SentTest }): JSX.Element {
  const d = test.delivery;
  const tone = d.status === 'succeeded' ? 'ok' : d.status === 'pending' ? 'warn' : 'bad';
  return (
    <div class="small" role="status">
      <Badge tone={tone}>test</Badge> {testOutcome(d)}
      {d.status === 'pending' && !following(test) ? ' (still pending: follow it in the delivery log)' : null}{' '}
      <Link to={`/deliveries?endpoint=${encodeURIComponent(endpointId)}`}>Delivery log</Link> ·{' '}
      <Link to={`/events/${encodeURIComponent(d.eventId)}`}>Event</Link>
    </div>
  );
}

/**
 * The endpoint's queue as `vps webhooks list` shows it: backlog, in flight, and how long the oldest
 * due delivery has waited; with none due, when the next retry is, so a backlog of retries reads as
 * waiting on its schedule rather than stuck.
 */
function QueueFigures({ queue }: { queue: WebhookEndpoint['queue'] }): JSX.Element {
  return (
    <>
      <div class="nowrap">
        Backlog {queue.backlog} · in flight {queue.inFlight}
      </div>
      <div class="muted small">
        {queue.oldestDueAt ? (
          <>
            oldest due <Time iso={queue.oldestDueAt} />
          </>
        ) : queue.nextDueAt ? (
          <>
            none due; next <Time iso={queue.nextDueAt} />
          </>
        ) : (
          'nothing pending'
        )}
      </div>
    </>
  );
}

function EndpointTable(props: {
  endpoints: WebhookEndpoint[];
  tests: Record<string, SentTest>;
  onTest: (e: WebhookEndpoint) => void;
  onEdit: (e: WebhookEndpoint) => void;
  onDelete: (e: WebhookEndpoint) => void;
}): JSX.Element {
  if (props.endpoints.length === 0) return <Empty>No endpoints yet. Events can still be pulled from the Events page or the API.</Empty>;
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th>URL</th>
            <th>Event types</th>
            <th>Status</th>
            <th title="Pending deliveries (backlog), those being sent (in flight), and since when the oldest due one has waited">
              Delivery queue
            </th>
            <th>Created</th>
            <th>
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {props.endpoints.map((ep) => (
            <tr key={ep.id}>
              <td class="break">
                <code>{ep.url}</code>
                {ep.description ? <div>{ep.description}</div> : null}
                <div class="muted mono small">{ep.id}</div>
                {props.tests[ep.id] ? <TestNote endpointId={ep.id} test={props.tests[ep.id]!} /> : null}
              </td>
              <td>
                {ep.eventTypes.map((t) => (
                  <code key={t} class="chip">
                    {t}
                  </code>
                ))}
              </td>
              <td>
                {ep.disabledAt ? (
                  <span title={ep.disabledReason ?? undefined}>
                    <Badge tone="bad">disabled</Badge>
                  </span>
                ) : (
                  <Badge tone="ok">enabled</Badge>
                )}
              </td>
              <td>
                <QueueFigures queue={ep.queue} />
              </td>
              <td>
                <Time iso={ep.createdAt} />
              </td>
              <td class="row-actions">
                <Link class="button small" to={`/deliveries?endpoint=${encodeURIComponent(ep.id)}`}>
                  Deliveries
                </Link>
                <button
                  type="button"
                  class="small"
                  disabled={Boolean(ep.disabledAt) || (props.tests[ep.id] ? following(props.tests[ep.id]!) : false)}
                  title={
                    ep.disabledAt
                      ? 'A disabled endpoint receives nothing, tests included: enable it first'
                      : 'Push a service.endpoint.test event to this endpoint only'
                  }
                  onClick={() => props.onTest(ep)}
                >
                  Send test event
                </button>
                <button type="button" class="small" onClick={() => props.onEdit(ep)}>
                  Edit
                </button>
                <button type="button" class="danger small" onClick={() => props.onDelete(ep)}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
