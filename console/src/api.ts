/**
 * Every call the console makes: same-origin with the session cookie, the CSRF token on writes, and
 * the envelope unwrapped. A 1001 anywhere means the session is gone, so the app is told to show
 * sign-in rather than each page handling it.
 */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export const UNAUTHENTICATED = 1001;

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

// In memory only: a token in storage would outlive the session and be readable by any script.
let csrfToken: string | null = null;
let onUnauthenticated: () => void = () => undefined;

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

export function whenUnauthenticated(handler: () => void): void {
  onUnauthenticated = handler;
}

export async function api<T>(method: Method, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  let res: Response;
  try {
    res = await fetch(path, { method, headers, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (err) {
    throw new ApiError(0, `The service could not be reached (${err instanceof Error ? err.message : String(err)})`);
  }
  const envelope = await readEnvelope(res);
  if (envelope.code !== 0) {
    if (envelope.code === UNAUTHENTICATED) onUnauthenticated();
    throw new ApiError(envelope.code, envelope.message);
  }
  return envelope.data as T;
}

interface Envelope {
  code: number;
  message: string;
  data: unknown;
}

async function readEnvelope(res: Response): Promise<Envelope> {
  const text = await res.text();
  try {
    const parsed = JSON.parse(text) as Partial<Envelope>;
    if (typeof parsed.code === 'number') return { code: parsed.code, message: parsed.message ?? '', data: parsed.data };
  } catch (err) {
    // A proxy's HTML error page lands here; the status line says more than the parser's message.
    console.warn(`unparsable answer from ${res.url}`, err);
  }
  return { code: -1, message: `Unexpected answer: HTTP ${res.status} ${res.statusText}`.trim(), data: null };
}

/** Query string from the set values only, so empty filters do not reach the server's validation. */
export function query(params: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params))
    if (value !== undefined && value !== null && value !== '') search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}
