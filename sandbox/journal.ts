/**
 * Every official call the emulator answered for an account, with its outcome: what a test reads to
 * prove that the service sent something once (a shop post, a publish), however its retries went.
 */
export interface JournalEntry {
  platform: 'business' | 'shop';
  method: string;
  /** The official path, without its query. */
  path: string;
  openId: string;
  /** 0 when the call was accepted, else the official error code. */
  code: number;
  at: string;
}

/** Old entries go first: the journal is a test aid, not a record. */
const MAX_ENTRIES = 10_000;

export class CallJournal {
  private readonly entries: JournalEntry[] = [];

  record(entry: JournalEntry): void {
    this.entries.push(entry);
    if (this.entries.length > MAX_ENTRIES) this.entries.shift();
  }

  list(filter: { path?: string; openId?: string }): JournalEntry[] {
    return this.entries.filter((e) => (!filter.path || e.path === filter.path) && (!filter.openId || e.openId === filter.openId));
  }
}
