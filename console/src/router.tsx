/**
 * History routing under /console, in a few lines instead of a dependency: the gateway answers
 * index.html for any /console/* path, so every URL here can be bookmarked, reloaded and shared,
 * filters included (they live in the query string).
 */
import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

export const BASE = '/console';

export interface Location {
  /** The path below /console, starting with "/". */
  path: string;
  params: URLSearchParams;
}

function current(): Location {
  const { pathname, search } = window.location;
  const path = pathname.startsWith(BASE) ? pathname.slice(BASE.length) || '/' : pathname;
  return { path, params: new URLSearchParams(search) };
}

const listeners = new Set<() => void>();
window.addEventListener('popstate', () => listeners.forEach((l) => l()));

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  const url = BASE + to;
  if (opts.replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  listeners.forEach((l) => l());
}

export function useLocation(): Location {
  const [location, setLocation] = useState(current);
  useEffect(() => {
    const update = () => setLocation(current());
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  return location;
}

/** A real link (middle-click and copy-link work) that navigates in place on a plain click. */
export function Link(props: { to: string; class?: string; children: ComponentChildren; 'aria-current'?: 'page' }): JSX.Element {
  const onClick = (e: MouseEvent) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(props.to);
  };
  return (
    <a href={BASE + props.to} class={props.class} onClick={onClick} aria-current={props['aria-current']}>
      {props.children}
    </a>
  );
}

/** Matches "/events/:id" against a path; the captured segments, decoded, or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/');
  const got = path.replace(/\/+$/, '').split('/');
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    const g = got[i]!;
    if (w.startsWith(':')) params[w.slice(1)] = decodeURIComponent(g);
    else if (w !== g) return null;
  }
  return params;
}
