/**
 * The commercial music library behind Search Music (202602), with the pagination quirks the
 * service has to smooth over. The emulator plays exactly these, deterministically:
 *
 * 1. Search sessions. A call without `page_token` starts a new search and answers with a fresh
 *    `search_id` (any `search_id` sent with it is ignored). A call with `page_token` must send
 *    that `search_id` and the same `keyword`; a missing, unknown, expired (30 minutes of virtual
 *    time), other creator's or other keyword's `search_id` is refused with 36009004 naming
 *    `search_id`. Results are fixed when the search starts.
 * 2. Short pages. `page_size` counts candidates before the commercial-licence filter: every fifth
 *    track of the library (by position) is not cleared for commercial use and is dropped from the
 *    page after paging, so a page may hold fewer items than `page_size`, even none, while
 *    `has_more` is true.
 * 3. A repeated item. The last page, when it has room left, starts again with the last candidate
 *    of the previous page (unless that one was filtered out), so one item appears twice.
 * 4. `next_page_token` is the next offset as a decimal string and is present even when
 *    `has_more` is false (as in the platform's own example); only `has_more` ends the paging.
 *
 * `page_size` arrives as a string, 1 to 50, default 10. `keyword` matches case-insensitively
 * inside title or author. `region` (ISO 3166 alpha-2) and `language` (BCP 47) are checked for
 * form only; the library is the same everywhere.
 */
import { requestId, SHOP } from '../official-error';
import { stableNumber } from '../posts';

export interface Track {
  id: string;
  title: string;
  author: string;
  durationSeconds: number;
  /** Cleared for use in commercial (shoppable) content. */
  commercial: boolean;
}

export interface OfficialMusic {
  id: string;
  title: string;
  author: string;
  cover_thumb: { url_list: string[] };
  duration: string;
  play_url: { url_list: string[] };
}

const MOODS = ['Summer', 'Golden', 'Midnight', 'Electric', 'Lazy', 'Neon', 'Velvet', 'Paper'];
const THINGS = ['Market', 'Groove', 'Drive', 'Morning', 'Dreams', 'Waves', 'Beat', 'Haul'];
const AUTHORS = ['The Sandbox Band', 'Mira Vale', 'Loop Theory', 'Kasa Nova', 'Juniper Lane', 'DJ Placeholder'];

export const LIBRARY: readonly Track[] = MOODS.flatMap((mood, m) =>
  THINGS.map((thing, t) => {
    const index = m * THINGS.length + t;
    const title = `${mood} ${thing}`;
    return {
      id: `72${String(stableNumber(title, 1e9)).padStart(9, '0')}${String(index).padStart(8, '0')}`,
      title,
      author: AUTHORS[index % AUTHORS.length]!,
      durationSeconds: 15 + stableNumber(`${title}:d`, 166),
      commercial: index % 5 !== 3,
    };
  }),
);

const SESSION_TTL_MS = 30 * 60_000;
export const MUSIC_PAGE_SIZE = { min: 1, max: 50, default: 10 } as const;

interface Session {
  openId: string;
  keyword: string;
  candidates: Track[];
  startedAt: number;
}

export interface MusicQuery {
  keyword: string;
  searchId?: string;
  pageToken?: string;
  pageSize?: number;
}

export class MusicLibrary {
  private readonly sessions = new Map<string, Session>();

  constructor(
    private readonly now: () => number,
    private readonly urls: { cover: (id: string) => string; play: (id: string) => string },
  ) {}

  track(id: string): Track | undefined {
    return LIBRARY.find((t) => t.id === id);
  }

  search(openId: string, query: MusicQuery): { music: OfficialMusic[]; next_page_token: string; has_more: boolean; search_id: string } {
    const pageSize = query.pageSize ?? MUSIC_PAGE_SIZE.default;
    let searchId: string;
    let session: Session;
    let offset = 0;
    if (query.pageToken === undefined) {
      this.forgetExpired();
      const keyword = query.keyword.toLowerCase();
      session = {
        openId,
        keyword: query.keyword,
        candidates: LIBRARY.filter((t) => t.title.toLowerCase().includes(keyword) || t.author.toLowerCase().includes(keyword)),
        startedAt: this.now(),
      };
      // The platform's search ids look like its request ids: a timestamp, then upper-case hex.
      searchId = requestId();
      this.sessions.set(searchId, session);
    } else {
      if (query.searchId === undefined)
        throw SHOP.invalid('search_id', 'is required with page_token: pass the search_id of the first page');
      const found = this.sessions.get(query.searchId);
      if (!found || found.openId !== openId || this.now() - found.startedAt > SESSION_TTL_MS || found.keyword !== query.keyword) {
        throw SHOP.invalid('search_id', 'does not match this search');
      }
      if (!/^\d+$/.test(query.pageToken)) throw SHOP.invalid('page_token');
      searchId = query.searchId;
      session = found;
      offset = Number(query.pageToken);
    }

    const end = Math.max(offset, Math.min(offset + pageSize, session.candidates.length));
    const hasMore = end < session.candidates.length;
    let page = session.candidates.slice(offset, end).filter((t) => t.commercial);
    const previous = session.candidates[offset - 1];
    if (!hasMore && offset > 0 && page.length < pageSize && previous?.commercial) page = [previous, ...page];
    return {
      music: page.map((t) => this.official(t)),
      next_page_token: String(end),
      has_more: hasMore,
      search_id: searchId,
    };
  }

  private official(t: Track): OfficialMusic {
    return {
      id: t.id,
      title: t.title,
      author: t.author,
      cover_thumb: { url_list: [this.urls.cover(t.id)] },
      duration: String(t.durationSeconds),
      play_url: { url_list: [this.urls.play(t.id)] },
    };
  }

  private forgetExpired(): void {
    const now = this.now();
    for (const [id, s] of this.sessions) if (now - s.startedAt > SESSION_TTL_MS) this.sessions.delete(id);
  }
}
