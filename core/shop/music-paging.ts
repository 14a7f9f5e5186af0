/**
 * Regular pages over the shop's irregular music search.
 *
 * The official search (and the emulator, which reproduces it) pages badly: later pages need the
 * first page's `search_id`; tracks not cleared for commerce are dropped after paging, so a page can
 * be short or even empty while `has_more` is true; the last page may repeat the previous page's
 * last item; and `next_page_token` may be set when `has_more` is false. Our rules:
 *
 * 1. A page holds exactly `pageSize` unique tracks unless the results end. To fill it we fetch
 *    official pages one after another, at most MAX_OFFICIAL_CALLS per request (a bound on the
 *    latency and the upstream calls one request can cost). Each official call asks for what is
 *    still missing plus one, so a full page usually also proves there is more.
 * 2. Tracks are de-duplicated by `id`: within the request, and against the last RECENT_IDS ids
 *    already delivered (carried in the cursor), which covers a repeat reaching back into the
 *    previous page of ours.
 * 3. Only `has_more` ends the official paging (a `next_page_token` without it is ignored); a
 *    `has_more` without a token ends it too, since there is nothing to ask for.
 * 4. Tracks fetched beyond this page (the surplus) travel in the cursor and open the next page, so
 *    none is lost and none is fetched twice.
 * 5. `nextCursor` is null exactly when nothing more exists: no surplus and the official results
 *    ended. When the page is full but nothing beyond it has been seen yet, one more official page
 *    is read to find out. Only when the call budget runs out can a page be short (or a cursor lead
 *    to an empty last page); the cursor is then non-null and the next request carries on.
 * 6. The cursor is opaque: JSON sealed with AES-256-GCM (the service's sealed box), with the seat
 *    and the query (keyword, region, language) as associated data. A cursor that was altered, is
 *    not ours, or belongs to another seat or query does not open: 2001 naming `cursor`. The page
 *    size may change from one page to the next. A cursor lives as long as the shop keeps its
 *    `search_id` (30 minutes on the emulator); after that the shop refuses it (3001).
 */
import type { SealedBox } from '../crypto/sealed-box';

export const MUSIC_PAGE_SIZE = { min: 1, max: 50, default: 20 } as const;
/** The official page size is 1 to 50. */
export const OFFICIAL_MAX_PAGE_SIZE = 50;
export const MAX_OFFICIAL_CALLS = 10;
/** A repeat reaches back at most one official page, and an official page holds at most 50 items. */
export const RECENT_IDS = OFFICIAL_MAX_PAGE_SIZE;

export interface MusicItem {
  id: string;
  [field: string]: unknown;
}

/** Where the next page starts. */
export interface MusicCursor {
  searchId: string;
  /** The official page token to continue with; null once the official results have ended. */
  pageToken: string | null;
  /** Ids delivered most recently (oldest first), to drop a repeated item. */
  recent: string[];
  /** Tracks fetched beyond the last page, delivered first on the next. */
  surplus: MusicItem[];
}

export interface OfficialPage {
  items: MusicItem[];
  hasMore: boolean;
  nextPageToken: string;
  searchId: string;
}

export type FetchOfficialPage = (req: { searchId?: string; pageToken?: string; pageSize: number }) => Promise<OfficialPage>;

export async function assemblePage(opts: {
  pageSize: number;
  cursor?: MusicCursor;
  fetchPage: FetchOfficialPage;
  maxCalls?: number;
}): Promise<{ items: MusicItem[]; next: MusicCursor | null; officialCalls: number }> {
  const { pageSize, cursor } = opts;
  const maxCalls = opts.maxCalls ?? MAX_OFFICIAL_CALLS;
  const seen = new Set(cursor?.recent ?? []);
  const delivered: string[] = [...(cursor?.recent ?? [])];
  const surplus = [...(cursor?.surplus ?? [])];
  const items = surplus.splice(0, pageSize);
  let searchId = cursor?.searchId;
  let pageToken = cursor ? cursor.pageToken : undefined;
  let more = cursor ? cursor.pageToken !== null : true;
  let calls = 0;
  for (const item of [...items, ...surplus]) seen.add(item.id);

  while (more && calls < maxCalls && (items.length < pageSize || surplus.length === 0)) {
    const wanted = Math.min(OFFICIAL_MAX_PAGE_SIZE, pageSize - items.length + 1);
    const page = await opts.fetchPage({ ...(searchId ? { searchId } : {}), ...(pageToken ? { pageToken } : {}), pageSize: wanted });
    calls += 1;
    searchId = page.searchId || searchId;
    for (const item of uniqueById(page.items, seen)) {
      delivered.push(item.id);
      (items.length < pageSize ? items : surplus).push(item);
    }
    more = page.hasMore && page.nextPageToken !== '';
    pageToken = more ? page.nextPageToken : null;
  }

  const ended = !more && surplus.length === 0;
  if (ended || searchId === undefined) return { items, next: null, officialCalls: calls };
  return {
    items,
    next: { searchId, pageToken: more ? (pageToken ?? null) : null, recent: delivered.slice(-RECENT_IDS), surplus },
    officialCalls: calls,
  };
}

/** The items whose id is not in `seen`, in order, each id once; `seen` grows with them. */
export function uniqueById<T extends { id: string }>(items: readonly T[], seen: Set<string>): T[] {
  const out: T[] = [];
  for (const item of items) {
    if (seen.has(item.id)) continue;
    seen.add(item.id);
    out.push(item);
  }
  return out;
}

/** Raised for a cursor that does not open; the service turns it into 2001 naming `cursor`. */
export class CursorRefused extends Error {}

export interface CursorScope {
  seatId: string;
  keyword: string;
  region: string;
  language: string;
}

const scopeOf = (scope: CursorScope) => JSON.stringify(['music-cursor/v1', scope.seatId, scope.keyword, scope.region, scope.language]);

export function encodeCursor(box: SealedBox, scope: CursorScope, cursor: MusicCursor): string {
  return box.seal(JSON.stringify(cursor), scopeOf(scope));
}

export function decodeCursor(box: SealedBox, scope: CursorScope, text: string): MusicCursor {
  let json: string;
  try {
    json = box.open(text, scopeOf(scope));
  } catch (err) {
    throw new CursorRefused(`does not open: ${(err as Error).message}`);
  }
  const value = JSON.parse(json) as unknown;
  if (!isCursor(value)) throw new CursorRefused('has an unexpected shape');
  return value;
}

function isCursor(value: unknown): value is MusicCursor {
  if (!value || typeof value !== 'object') return false;
  const c = value as Record<string, unknown>;
  return (
    typeof c.searchId === 'string' &&
    (c.pageToken === null || typeof c.pageToken === 'string') &&
    Array.isArray(c.recent) &&
    c.recent.every((id) => typeof id === 'string') &&
    Array.isArray(c.surplus) &&
    c.surplus.every((item) => !!item && typeof item === 'object' && typeof (item as MusicItem).id === 'string')
  );
}
