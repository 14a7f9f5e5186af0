/**
 * The platform's consent page sends the browser back to the seats page with the connect's code and
 * state in the URL fragment (gateway/routes/console-seats.ts). The console takes them out of the
 * address bar before its first render, ahead of anything that could navigate away, and holds them
 * in memory until the seats page completes the connect. A session that expired while the person was
 * on the platform's page then costs a sign-in, not the connect. Nothing is written to storage: a
 * reload drops what is held, and the code is single use and the state short-lived either way.
 */

let held: URLSearchParams | null = null;

/** Called once, before the first render: moves a callback fragment from the address bar to memory. */
export function holdConnectCallback(): void {
  const hash = window.location.hash.slice(1);
  if (!hash) return;
  const fragment = new URLSearchParams(hash);
  if (!fragment.has('connect_code') && !fragment.has('connect_error')) return;
  // Out of the address bar and the history at once: a reload or Back must not resend the code.
  window.history.replaceState(null, '', window.location.pathname + window.location.search);
  held = fragment;
}

/** Whether an approved connect waits for the seats page, so sign-in can say why it is asked for. */
export function connectIsHeld(): boolean {
  return held?.has('connect_code') ?? false;
}

/** The held callback, handed over once. */
export function takeConnectCallback(): URLSearchParams | null {
  const fragment = held;
  held = null;
  return fragment;
}
