import type { ComponentChildren, JSX } from 'preact';
import type { ApiError } from '../api';
import { formatTime } from '../format';

export function ErrorNote({ error }: { error: ApiError | null | undefined }): JSX.Element | null {
  if (!error) return null;
  return (
    <p class="note error" role="alert">
      {error.message}
      {error.code > 0 ? <span class="muted"> (code {error.code})</span> : null}
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }): JSX.Element {
  return <p class="empty">{children}</p>;
}

/** Screen readers hear progress; sighted users see a quiet line instead of a spinner. */
export function Loading(): JSX.Element {
  return (
    <p class="muted" role="status" aria-live="polite">
      Loading…
    </p>
  );
}

export function Badge({ tone, children }: { tone: 'ok' | 'bad' | 'warn' | 'neutral'; children: ComponentChildren }): JSX.Element {
  return <span class={`badge ${tone}`}>{children}</span>;
}

export function Time({ iso }: { iso: string | null | undefined }): JSX.Element {
  return iso ? (
    <time dateTime={iso} title={iso}>
      {formatTime(iso)}
    </time>
  ) : (
    <span class="muted">—</span>
  );
}

/**
 * A long value on one line, cut in the middle when it does not fit: the start (a URL's host, an
 * id's kind and time) and the last `keep` characters (a URL's last path segment, an id's random
 * tail) stay in view, which is what tells two values apart. The title, a copy and a screen reader
 * get the whole value.
 */
export function Cut({ value, keep, class: className }: { value: string; keep: number; class?: string }): JSX.Element {
  const at = Math.max(0, value.length - keep);
  return (
    <span class={className ? `cut ${className}` : 'cut'} title={value}>
      <span class="cut-head">{value.slice(0, at)}</span>
      <span class="cut-tail">{value.slice(at)}</span>
    </span>
  );
}
