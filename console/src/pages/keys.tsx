import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../api';
import { Confirm } from '../components/dialog';
import { Badge, Empty, ErrorNote, Loading, Time } from '../components/feedback';
import { PageTitle } from '../components/layout';
import { useAction, useLoad } from '../components/load';
import { SecretDialog } from '../components/secret-dialog';
import type { ApiKey, CreatedApiKey } from '../types';

export function KeysPage(): JSX.Element {
  const keys = useLoad(() => api<{ items: ApiKey[] }>('GET', '/console/api/keys'), 'keys');
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const { busy, error, run } = useAction();

  const create = (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    return run(async () => {
      setCreated(await api<CreatedApiKey>('POST', '/console/api/keys', { name: String(new FormData(form).get('name')).trim() }));
      form.reset();
      await keys.reload();
    });
  };

  const revoke = (key: ApiKey) =>
    run(async () => {
      try {
        await api<ApiKey>('POST', `/console/api/keys/${encodeURIComponent(key.id)}/revoke`);
      } finally {
        setRevoking(null);
      }
      await keys.reload();
    });

  return (
    <>
      <PageTitle title="API keys" />
      <p class="lead">
        Programs call the API with <code>Authorization: Bearer &lt;key&gt;</code>. Revoking a key takes effect immediately.
      </p>
      <form class="inline-form" onSubmit={create}>
        <label class="field">
          <span>New key name</span>
          <input name="name" required maxLength={100} placeholder="e.g. production server" />
        </label>
        <button type="submit" class="primary" disabled={busy}>
          Create key
        </button>
      </form>
      <ErrorNote error={error ?? (keys.state === 'error' ? keys.error : null)} />
      {keys.data ? <KeyTable keys={keys.data.items} onRevoke={setRevoking} /> : keys.state === 'loading' ? <Loading /> : null}
      {created ? (
        <SecretDialog title={`Key “${created.name}” created`} label="API key" secret={created.key} onClose={() => setCreated(null)} />
      ) : null}
      {revoking ? (
        <Confirm
          title="Revoke this key?"
          action="Revoke key"
          busy={busy}
          onCancel={() => setRevoking(null)}
          onConfirm={() => void revoke(revoking)}
        >
          <p>
            Requests with <strong>{revoking.name}</strong> (<code>{revoking.prefix}…</code>) will be refused from now on. This cannot be
            undone.
          </p>
        </Confirm>
      ) : null}
    </>
  );
}

function KeyTable(props: { keys: ApiKey[]; onRevoke: (key: ApiKey) => void }): JSX.Element {
  if (props.keys.length === 0) return <Empty>No keys yet. Create one above.</Empty>;
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th>Name</th>
            <th>Prefix</th>
            <th>Created</th>
            <th>Last used</th>
            <th>Status</th>
            <th>
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {props.keys.map((key) => (
            <tr key={key.id} class={key.revokedAt ? 'dim' : undefined}>
              <td>{key.name}</td>
              <td>
                <code>{key.prefix}…</code>
              </td>
              <td>
                <Time iso={key.createdAt} />
              </td>
              <td>{key.lastUsedAt ? <Time iso={key.lastUsedAt} /> : <span class="muted">never</span>}</td>
              <td>
                {key.revokedAt ? (
                  <span title={key.revokedAt}>
                    <Badge tone="neutral">revoked</Badge>
                  </span>
                ) : (
                  <Badge tone="ok">active</Badge>
                )}
              </td>
              <td class="row-actions">
                {key.revokedAt ? null : (
                  <button type="button" class="danger small" onClick={() => props.onRevoke(key)}>
                    Revoke
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
