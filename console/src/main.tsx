/**
 * The console: checks the session once, then shows sign-in or the signed-in shell with the page
 * the URL names. The session's CSRF token lives only in memory (api.ts), so a reload asks again.
 */
import { render, type JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, setCsrfToken, UNAUTHENTICATED, whenUnauthenticated } from './api';
import { ErrorNote, Loading } from './components/feedback';
import { Shell } from './components/layout';
import { toApiError } from './components/load';
import { DeliveriesPage } from './pages/deliveries';
import { EventDetailPage } from './pages/event-detail';
import { EventsPage } from './pages/events';
import { KeysPage } from './pages/keys';
import { PublishRecordsPage } from './pages/publish-records';
import { SeatsPage } from './pages/seats';
import { SignIn } from './pages/sign-in';
import { holdConnectCallback } from './pending-connect';
import { WebhooksPage } from './pages/webhooks';
import { match, navigate, useLocation, Link, type Location } from './router';
import { App, type AppContext } from './session';
import type { ConsoleConfig, Session } from './types';
import './styles.css';

const HOME = '/keys';
const SIGN_IN = '/sign-in';

function Page({ location }: { location: Location }): JSX.Element {
  const { path } = location;
  if (path === '/keys') return <KeysPage />;
  if (path === '/seats') return <SeatsPage />;
  if (path === '/webhooks') return <WebhooksPage />;
  if (path === '/deliveries') return <DeliveriesPage location={location} />;
  if (path === '/events') return <EventsPage location={location} />;
  const event = match('/events/:id', path);
  if (event) return <EventDetailPage id={event.id!} />;
  if (path === '/publish') return <PublishRecordsPage location={location} />;
  return (
    <>
      <h1>Not found</h1>
      <p>
        Nothing lives at <code>{path}</code>. <Link to={HOME}>Go to API keys</Link>.
      </p>
    </>
  );
}

/** Until /console/config.json answers, or if it cannot: no Temporal links. */
const NO_CONFIG: ConsoleConfig = { temporalUiUrl: null, temporalNamespace: 'default' };

async function loadConfig(): Promise<ConsoleConfig> {
  try {
    const res = await fetch('/console/config.json', { credentials: 'same-origin' });
    return res.ok ? { ...NO_CONFIG, ...((await res.json()) as Partial<ConsoleConfig>) } : NO_CONFIG;
  } catch (err) {
    // Only the Temporal links depend on it; the console works without them.
    console.warn('console config unavailable', err);
    return NO_CONFIG;
  }
}

function Console(): JSX.Element {
  const location = useLocation();
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [config, setConfig] = useState<ConsoleConfig>(NO_CONFIG);
  const [bootError, setBootError] = useState<ApiError | null>(null);
  const lastPath = useRef<string>(location.path);

  const signedIn = (s: Session) => {
    setCsrfToken(s.csrfToken);
    setSession(s);
  };
  const signedOut = () => {
    setCsrfToken(null);
    setSession(null);
  };

  useEffect(() => {
    whenUnauthenticated(signedOut);
    void loadConfig().then(setConfig);
    api<Session>('GET', '/console/api/session').then(signedIn, (err: unknown) => {
      const error = toApiError(err);
      if (error.code !== UNAUTHENTICATED) setBootError(error);
    });
  }, []);

  // Signed out anywhere: go to sign-in, remembering where to come back to.
  useEffect(() => {
    if (session === null && location.path !== SIGN_IN)
      navigate(`${SIGN_IN}?next=${encodeURIComponent(location.path + window.location.search)}`, { replace: true });
    if (session && (location.path === SIGN_IN || location.path === '/')) navigate(nextPath(location), { replace: true });
  }, [session, location.path]);

  // A new page moves focus to its content, so keyboard and screen-reader users start there.
  useEffect(() => {
    if (lastPath.current !== location.path) document.getElementById('main')?.focus();
    lastPath.current = location.path;
  }, [location.path]);

  if (bootError) {
    return (
      <main id="main" class="sign-in">
        <div class="card">
          <h1>The console cannot start</h1>
          <ErrorNote error={bootError} />
          <button type="button" class="primary" onClick={() => window.location.reload()}>
            Try again
          </button>
        </div>
      </main>
    );
  }
  if (session === undefined) return <Loading />;
  if (session === null) return <SignIn onSignedIn={signedIn} />;

  const signOut = async () => {
    try {
      await api('DELETE', '/console/api/session');
    } catch (err) {
      // Signed out locally either way; the server session expires on its own.
      console.warn('sign-out request failed', err);
    }
    signedOut();
  };
  const app: AppContext = { session, config };
  return (
    <App.Provider value={app}>
      <Shell path={location.path} onSignOut={() => void signOut()}>
        <Page location={location} />
      </Shell>
    </App.Provider>
  );
}

/** Where to go after sign-in: the page that asked for it, if it is one of ours. */
function nextPath(location: Location): string {
  const next = location.params.get('next');
  return next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith(SIGN_IN) ? next : HOME;
}

// Before anything can navigate (to sign-in, say) and drop the fragment with the platform's code.
holdConnectCallback();
render(<Console />, document.getElementById('app')!);
