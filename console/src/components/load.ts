import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api';

export type Loaded<T> = { state: 'loading'; data?: T } | { state: 'ok'; data: T } | { state: 'error'; error: ApiError; data?: T };

/**
 * Loads data for a page and reloads it when `key` changes or on demand. A reload keeps the
 * previous data on screen (no flash of "Loading"), and an answer that arrives after a newer
 * request started is dropped, so fast filter changes never show stale rows.
 */
export function useLoad<T>(load: () => Promise<T>, key: string): Loaded<T> & { reload: () => Promise<void> } {
  const [result, setResult] = useState<Loaded<T>>({ state: 'loading' });
  const generation = useRef(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  const reload = useCallback(async () => {
    const mine = ++generation.current;
    setResult((prev) => ({ state: 'loading', data: prev.data }));
    try {
      const data = await loadRef.current();
      if (mine === generation.current) setResult({ state: 'ok', data });
    } catch (err) {
      if (mine === generation.current) setResult((prev) => ({ state: 'error', error: toApiError(err), data: prev.data }));
    }
  }, []);

  useEffect(() => {
    void reload();
  }, [key, reload]);

  return { ...result, reload };
}

/**
 * A write a page runs on a click: `busy` while it runs (its buttons disabled), its refusal kept in
 * `error` to show. An action that leaves the page on success (`leaves`) stays busy, so it cannot
 * be started twice while the browser navigates.
 */
export function useAction(): {
  busy: boolean;
  error: ApiError | null;
  setError: (e: ApiError | null) => void;
  run: (work: () => Promise<void>, opts?: { leaves?: boolean }) => Promise<void>;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const run = async (work: () => Promise<void>, opts: { leaves?: boolean } = {}) => {
    setBusy(true);
    setError(null);
    try {
      await work();
      if (!opts.leaves) setBusy(false);
    } catch (err) {
      setError(toApiError(err));
      setBusy(false);
    }
  };
  return { busy, error, setError, run };
}

export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  return new ApiError(-1, err instanceof Error ? err.message : String(err));
}
