import type { JSX } from 'preact';
import { api } from '../api';
import { ErrorNote } from '../components/feedback';
import { useAction } from '../components/load';
import { connectIsHeld } from '../pending-connect';
import type { Session } from '../types';

export function SignIn(props: { onSignedIn: (session: Session) => void }): JSX.Element {
  const { busy, error, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    // Signed in, the console replaces this page.
    return run(
      async () =>
        props.onSignedIn(await api<Session>('POST', '/console/api/session', { email: form.get('email'), password: form.get('password') })),
      { leaves: true },
    );
  };
  return (
    <main id="main" class="sign-in">
      <form class="card" onSubmit={submit} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Sign in</h1>
        {connectIsHeld() ? (
          <p class="note" role="status">
            Your session ended while you were on the platform’s page. Sign in to finish connecting the account.
          </p>
        ) : null}
        <label class="field">
          <span>Email</span>
          <input name="email" type="email" autocomplete="username" required autofocus />
        </label>
        <label class="field">
          <span>Password</span>
          <input name="password" type="password" autocomplete="current-password" required />
        </label>
        <ErrorNote error={error} />
        <button type="submit" class="primary wide" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
