import { useEffect } from 'preact/hooks';

/** Reloads every `ms` while `active`: deliveries in flight settle on screen without a click. */
export function usePollWhile(active: boolean, reload: () => Promise<void>, ms = 2000): void {
  useEffect(() => {
    if (!active) return;
    const timer = window.setTimeout(() => void reload(), ms);
    return () => window.clearTimeout(timer);
  });
}
