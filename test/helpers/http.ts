/** A thin HTTP client for the tests: real requests, the envelope and headers returned as they came. */
export interface Envelope<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: { code: number; message: string; data: T };
}

export async function call<T = Record<string, unknown>>(
  baseUrl: string,
  method: string,
  path: string,
  opts: { key?: string; authorization?: string; json?: unknown; body?: string; headers?: Record<string, string> } = {},
): Promise<Envelope<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.authorization !== undefined) headers.authorization = opts.authorization;
  else if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  let body: string | undefined = opts.body;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: Envelope<T>['body'];
  try {
    parsed = JSON.parse(text) as Envelope<T>['body'];
  } catch {
    throw new Error(`${method} ${path}: HTTP ${res.status} with a body that is not JSON: ${text.slice(0, 200)}`);
  }
  return { status: res.status, headers: res.headers, body: parsed };
}
