/**
 * Product query answers, reused for a short while per seat and query (the spec: 60 seconds).
 *
 * Why in memory, per core instance: the answer is a read of the shop's own list, and the spec
 * allows it to be up to the TTL old. Each instance keeps its own copy, so two instances may each
 * ask the shop once per TTL and may briefly disagree with each other, but no answer is ever older
 * than the TTL on any of them, which is all the cache promises. A shared store would add a
 * dependency and a network hop to save one upstream call per instance per minute.
 *
 * Bounded: past `maxEntries` the least recently stored entry goes first (a Map keeps insertion
 * order, and a refill re-inserts), so memory stays flat however many keywords callers try.
 */
export interface CachedAnswer<V> {
  value: V;
  /** When the value was read from the shop. */
  fetchedAt: Date;
}

export class TtlCache<V> {
  private readonly entries = new Map<string, CachedAnswer<V>>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 1_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** The entry if it is younger than the TTL; an expired one is dropped. */
  get(key: string): CachedAnswer<V> | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (this.now() - entry.fetchedAt.getTime() >= this.ttlMs) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  set(key: string, value: V, fetchedAt = new Date(this.now())): CachedAnswer<V> {
    const entry = { value, fetchedAt };
    this.entries.delete(key);
    this.entries.set(key, entry);
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
    return entry;
  }

  get size(): number {
    return this.entries.size;
  }
}
