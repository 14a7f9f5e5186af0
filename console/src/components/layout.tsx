import type { ComponentChildren, JSX } from 'preact';
import { useEffect } from 'preact/hooks';
import { Link, navigate } from '../router';
import { useApp } from '../session';

/** The sections, in menu order; `key` is the second stroke of the "g <key>" shortcut. */
export const SECTIONS = [
  { path: '/keys', label: 'API keys', key: 'k' },
  { path: '/seats', label: 'Seats', key: 's' },
  { path: '/webhooks', label: 'Webhooks', key: 'w' },
  { path: '/deliveries', label: 'Delivery log', key: 'd' },
  { path: '/events', label: 'Events', key: 'e' },
  { path: '/publish', label: 'Publish records', key: 'p' },
] as const;

export function Shell(props: { path: string; onSignOut: () => void; children: ComponentChildren }): JSX.Element {
  const { session } = useApp();
  useGoShortcuts();
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">{session.customer.name}</span>
        <nav aria-label="Sections">
          {SECTIONS.map((s) => (
            <Link key={s.path} to={s.path} aria-current={props.path.startsWith(s.path) ? 'page' : undefined}>
              {s.label}
            </Link>
          ))}
        </nav>
        <span class="who" title={session.user.email}>
          {session.user.name || session.user.email}
        </span>
        <button type="button" class="link" onClick={props.onSignOut}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        {props.children}
      </main>
      <footer class="muted">
        Shortcuts: <kbd>g</kbd> then{' '}
        {SECTIONS.map((s) => (
          <span key={s.key}>
            <kbd>{s.key}</kbd> {s.label.toLowerCase()}{' '}
          </span>
        ))}
      </footer>
    </>
  );
}

/** "g" then a section's key moves there, unless the user is typing. */
function useGoShortcuts(): void {
  useEffect(() => {
    let armedUntil = 0;
    const onKey = (e: KeyboardEvent) => {
      if (e.metaKey || e.ctrlKey || e.altKey || isTyping(e.target)) return;
      if (e.key === 'g') {
        armedUntil = Date.now() + 1500;
        return;
      }
      const section = Date.now() < armedUntil ? SECTIONS.find((s) => s.key === e.key) : undefined;
      armedUntil = 0;
      if (section) navigate(section.path);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
}

function isTyping(target: EventTarget | null): boolean {
  return target instanceof HTMLElement && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName));
}

/** Each page's heading, also the window title, so history entries and tabs read well. */
export function PageTitle(props: { title: string; children?: ComponentChildren }): JSX.Element {
  useEffect(() => {
    document.title = `${props.title} · Console`;
  }, [props.title]);
  return (
    <div class="page-title">
      <h1>{props.title}</h1>
      {props.children ? <div class="tools">{props.children}</div> : null}
    </div>
  );
}
