import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, type ApiError } from '../api';
import { Confirm } from '../components/dialog';
import { Badge, Empty, ErrorNote, Loading, Time } from '../components/feedback';
import { PageTitle } from '../components/layout';
import { toApiError, useLoad } from '../components/load';
import { SecretDialog } from '../components/secret-dialog';
import { Link } from '../router';
import type { CreatedWebhookEndpoint, WebhookEndpoint } from '../types';

/** The documented types, offered as suggestions; the service accepts any pattern it knows. */
const KNOWN_EVENT_TYPES = ['vplat.comment.created', 'vplat.comment.deleted', 'vplat.comment.visibility_changed', 'vplat.message.received'];

function parsePatterns(text: string): string[] {
  return [...new Set(text.split(/[\s,]+/).filter(Boolean))];
}

export function WebhooksPage(): JSX.Element {
  const endpoints = useLoad(() => api<{ items: WebhookEndpoint[] }>('GET', '/v1/webhook-endpoints'), 'endpoints');
  const [created, setCreated] = useState<CreatedWebhookEndpoint | null>(null);
  const [deleting, setDeleting] = useState<WebhookEndpoint | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);

  const create = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const fields = new FormData(form);
    setBusy(true);
    setError(null);
    try {
      setCreated(await api<CreatedWebhookEndpoint>('POST', '/v1/webhook-endpoints', { url: String(fields.get('url')).trim(), eventTypes: parsePatterns(String(fields.get('eventTypes'))) }));
      form.reset();
      await endpoints.reload();
    } catch (err) {
      setError(toApiError(err));
    } finally {
      setBusy(false);
    }
  };

  const remove = async (endpoint: WebhookEndpoint) => {
    setBusy(true);
    setError(null);
    try {
      await api('DELETE', `/v1/webhook-endpoints/${encodeURIComponent(endpoint.id)}`);
      await endpoints.reload();
    } catch (err) {
      setError(toApiError(err));
    } finally {
      setDeleting(null);
      setBusy(false);
    }
  };

  return (
    <>
      <PageTitle title="Webhook endpoints" />
      <p class="lead">
        Events are POSTed, signed, to each endpoint whose patterns match: <code>*</code> for all, <code>vplat.*</code> for the platform, or exact types.
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
        <button type="submit" class="primary" disabled={busy}>
          Add endpoint
        </button>
      </form>
      <p id="event-types-help" class="muted small">
        Several patterns: separate them with commas.
      </p>
      <ErrorNote error={error ?? (endpoints.state === 'error' ? endpoints.error : null)} />
      {endpoints.data ? <EndpointTable endpoints={endpoints.data.items} onDelete={setDeleting} /> : endpoints.state === 'loading' ? <Loading /> : null}
      {created ? <SecretDialog title="Endpoint added" label="Signing secret" secret={created.secret} onClose={() => setCreated(null)} /> : null}
      {deleting ? (
        <Confirm title="Delete this endpoint?" action="Delete endpoint" busy={busy} onCancel={() => setDeleting(null)} onConfirm={() => void remove(deleting)}>
          <p>
            <code>{deleting.url}</code> will receive no more events.
          </p>
        </Confirm>
      ) : null}
    </>
  );
}

function EndpointTable(props: { endpoints: WebhookEndpoint[]; onDelete: (e: WebhookEndpoint) => void }): JSX.Element {
  if (props.endpoints.length === 0) return <Empty>No endpoints yet. Events can still be pulled from the Events page or the API.</Empty>;
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th>URL</th>
            <th>Event types</th>
            <th>Status</th>
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
                <div class="muted mono small">{ep.id}</div>
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
                <Time iso={ep.createdAt} />
              </td>
              <td class="row-actions">
                <Link class="button small" to={`/deliveries?endpoint=${encodeURIComponent(ep.id)}`}>
                  Deliveries
                </Link>
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
