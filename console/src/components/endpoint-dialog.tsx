import type { JSX } from 'preact';
import { api } from '../api';
import { Dialog } from './dialog';
import { ErrorNote, Loading } from './feedback';
import { useAction, useLoad } from './load';
import { parsePatterns } from '../format';
import type { WebhookEndpoint } from '../types';

/**
 * Edits an endpoint: read afresh (GET), so the form starts from what the service holds, not from a
 * list that may be a minute old; saved with one PATCH. The secret is not part of it: an edit never
 * changes it. Unchecking "Receives pushes" disables the endpoint and cancels its pending deliveries;
 * checking it enables one, whether it was disabled here or by the service.
 */
export function EndpointDialog(props: { id: string; onClose: () => void; onSaved: () => void }): JSX.Element {
  const loaded = useLoad(() => api<WebhookEndpoint>('GET', `/v1/webhook-endpoints/${encodeURIComponent(props.id)}`), props.id);
  const { busy, error, run } = useAction();
  const endpoint = loaded.data;

  const save = (e: Event) => {
    e.preventDefault();
    const fields = new FormData(e.currentTarget as HTMLFormElement);
    return run(async () => {
      await api('PATCH', `/v1/webhook-endpoints/${encodeURIComponent(props.id)}`, {
        url: String(fields.get('url')).trim(),
        eventTypes: parsePatterns(String(fields.get('eventTypes'))),
        description: String(fields.get('description')).trim(),
        enabled: fields.get('enabled') === 'on',
      });
      props.onSaved();
    });
  };

  return (
    <Dialog title="Edit endpoint" onClose={props.onClose}>
      <ErrorNote error={error ?? (loaded.state === 'error' ? loaded.error : null)} />
      {endpoint ? (
        <form class="stack-form" onSubmit={save}>
          <p class="muted mono small">{endpoint.id}</p>
          <label class="field">
            <span>URL</span>
            <input name="url" type="url" required defaultValue={endpoint.url} />
          </label>
          <label class="field">
            <span>Event types</span>
            <input name="eventTypes" required defaultValue={endpoint.eventTypes.join(', ')} />
          </label>
          <label class="field">
            <span>Description</span>
            <input name="description" maxLength={500} defaultValue={endpoint.description ?? ''} placeholder="What receives these events" />
          </label>
          <label class="check">
            <input name="enabled" type="checkbox" defaultChecked={!endpoint.disabledAt} /> Receives pushes
          </label>
          {endpoint.disabledAt ? <p class="muted small">Disabled: {endpoint.disabledReason ?? 'no reason recorded'}</p> : null}
          <p class="muted small">The signing secret stays as it is.</p>
          <div class="actions">
            <button type="button" onClick={props.onClose}>
              Cancel
            </button>
            <button type="submit" class="primary" disabled={busy}>
              Save
            </button>
          </div>
        </form>
      ) : loaded.state === 'loading' ? (
        <Loading />
      ) : (
        <div class="actions">
          <button type="button" onClick={props.onClose}>
            Close
          </button>
        </div>
      )}
    </Dialog>
  );
}
