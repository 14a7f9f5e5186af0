import type { JSX } from 'preact';
import { api, query } from '../api';
import { Badge, Empty, ErrorNote, Loading, Time } from '../components/feedback';
import { PageTitle } from '../components/layout';
import { useLoad } from '../components/load';
import { navigate, type Location } from '../router';
import { useApp } from '../session';
import { PUBLISH_STATUSES, type ConsoleConfig, type PublishRecord, type PublishStatus, type RecordPage } from '../types';

const TONE: Record<PublishStatus, 'ok' | 'bad' | 'warn' | 'neutral'> = {
  submitted: 'warn',
  publish_processing: 'warn',
  publish_complete: 'ok',
  publish_failed: 'bad',
  publish_draft_inbox: 'neutral',
  service_error: 'bad',
};

export function PublishRecordsPage({ location }: { location: Location }): JSX.Element {
  const { config } = useApp();
  const p = location.params;
  const status = (PUBLISH_STATUSES as readonly string[]).includes(p.get('status') ?? '') ? p.get('status')! : '';
  const cursor = p.get('cursor') ?? '';
  const go = (changes: Record<string, string>, replace = false) =>
    navigate(`/publish${query({ status, cursor, ...changes })}`, { replace });
  const records = useLoad(
    () => api<RecordPage>('GET', `/v1/publish/records${query({ status, cursor, limit: 50 })}`),
    `${status}|${cursor}`,
  );

  return (
    <>
      <PageTitle title="Publish records">
        <button type="button" onClick={() => void records.reload()}>
          Refresh
        </button>
      </PageTitle>
      <p class="lead">A snapshot of each publish as the service last saw it; the status query endpoints give the live answer.</p>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label class="field">
          <span>Status</span>
          <select value={status} onChange={(e) => go({ status: e.currentTarget.value, cursor: '' }, true)}>
            <option value="">any</option>
            {PUBLISH_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      </form>
      <ErrorNote error={records.state === 'error' ? records.error : null} />
      {records.data ? (
        records.data.items.length === 0 ? (
          <Empty>No publish records{status ? ` with status ${status}` : ''}.</Empty>
        ) : (
          <RecordTable records={records.data.items} config={config} />
        )
      ) : records.state === 'loading' ? (
        <Loading />
      ) : null}
      <nav class="pager" aria-label="Pages">
        {cursor ? (
          <button type="button" onClick={() => go({ cursor: '' })}>
            First page
          </button>
        ) : null}
        {records.data?.nextCursor ? (
          <button type="button" onClick={() => go({ cursor: records.data!.nextCursor! })}>
            Next page
          </button>
        ) : null}
      </nav>
    </>
  );
}

/** The workflow that followed the publish, in the Temporal UI. */
export function workflowUrl(temporalUiUrl: string, namespace: string, workflowId: string): string {
  return `${temporalUiUrl.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

function RecordTable({ records, config }: { records: PublishRecord[]; config: ConsoleConfig }): JSX.Element {
  const { temporalUiUrl } = config;
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th>Status</th>
            <th>Reason</th>
            <th>Share id / post id</th>
            <th>Track</th>
            <th>Created</th>
            {temporalUiUrl ? <th>Workflow</th> : null}
          </tr>
        </thead>
        <tbody>
          {records.map((r) => (
            <tr key={r.id}>
              <td>
                <Badge tone={TONE[r.status]}>{r.status}</Badge>
                {r.unconfirmed ? (
                  <>
                    {' '}
                    <Badge tone="warn">unconfirmed</Badge>
                  </>
                ) : null}
                <div class="muted mono small">{r.id}</div>
              </td>
              <td class="break">{r.reason ?? <span class="muted">—</span>}</td>
              <td class="mono small">
                {r.shareId === r.handle ? (
                  <div title="The service's handle: the platform has not given its id yet; status queries take either">
                    {r.handle} <span class="muted">(handle)</span>
                  </div>
                ) : (
                  <div title="shareId">{r.shareId}</div>
                )}
                <div title="postId">{r.postId ?? <span class="muted">no post id yet</span>}</div>
              </td>
              <td>
                {r.track === 'video' ? 'Video' : 'Shop'} · {r.kind === 'photo' ? 'photo post' : 'video'}
                <div class="muted mono small">{r.accountId}</div>
              </td>
              <td class="nowrap">
                <Time iso={r.createdAt} />
              </td>
              {temporalUiUrl ? (
                <td class="nowrap">
                  <a href={workflowUrl(temporalUiUrl, config.temporalNamespace, r.workflowId)} target="_blank" rel="noopener noreferrer">
                    Open in Temporal ↗
                  </a>
                </td>
              ) : null}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
