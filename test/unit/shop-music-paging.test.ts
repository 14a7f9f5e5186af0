import { randomBytes } from 'node:crypto';
import { SealedBox } from '../../core/crypto/sealed-box';
import {
  assemblePage,
  CursorRefused,
  decodeCursor,
  encodeCursor,
  uniqueById,
  type FetchOfficialPage,
  type MusicCursor,
  type MusicItem,
  type OfficialPage,
} from '../../core/shop/music-paging';
import { LIBRARY, MusicLibrary } from '../../sandbox/shop/music';

/** Every page of ours until nextCursor is null, as a client would page. */
async function pageAll(fetchPage: FetchOfficialPage, pageSize: number, maxCalls?: number) {
  const pages: MusicItem[][] = [];
  let cursor: MusicCursor | undefined;
  for (let i = 0; i < 200; i++) {
    const page = await assemblePage({ pageSize, cursor, fetchPage, ...(maxCalls ? { maxCalls } : {}) });
    pages.push(page.items);
    if (!page.next) return pages;
    // Through the codec, as between two requests.
    cursor = JSON.parse(JSON.stringify(page.next)) as MusicCursor;
  }
  throw new Error('paging did not end');
}

/** The emulator's own library, which plays the official quirks deterministically. */
function emulatorFetch(keyword: string): { fetchPage: FetchOfficialPage; calls: () => number } {
  const library = new MusicLibrary(() => 0, { cover: (id) => `c/${id}`, play: (id) => `p/${id}` });
  let calls = 0;
  return {
    calls: () => calls,
    fetchPage: async ({ searchId, pageToken, pageSize }) => {
      calls += 1;
      const res = library.search('creator', { keyword, pageSize, ...(searchId ? { searchId } : {}), ...(pageToken ? { pageToken } : {}) });
      return {
        items: res.music.map((m) => ({ ...m })),
        hasMore: res.has_more,
        nextPageToken: res.next_page_token,
        searchId: res.search_id,
      };
    },
  };
}

/** Scripted official pages, answered in order whatever is asked. */
function scripted(pages: Array<Omit<OfficialPage, 'searchId'>>): FetchOfficialPage {
  let i = 0;
  return async () => ({ searchId: 'S', ...pages[i++]! });
}
const items = (...ids: string[]) => ids.map((id) => ({ id, title: id }));

describe('music paging', () => {
  const expectedFor = (keyword: string) =>
    LIBRARY.filter((t) => t.commercial && (t.title.toLowerCase().includes(keyword) || t.author.toLowerCase().includes(keyword))).map(
      (t) => t.id,
    );

  it.each([1, 2, 3, 5, 7, 10, 20, 50])(
    'fills pages of %d from the emulator: no duplicates, nothing lost, null cursor at the end',
    async (pageSize) => {
      for (const keyword of ['a', 'e', 'mira', 'summer']) {
        const { fetchPage } = emulatorFetch(keyword);
        const pages = await pageAll(fetchPage, pageSize);
        const ids = pages.flat().map((m) => m.id);
        expect(ids).toEqual([...new Set(ids)]);
        expect([...ids].sort()).toEqual([...expectedFor(keyword)].sort());
        for (const page of pages.slice(0, -1)) expect(page).toHaveLength(pageSize);
        expect(pages.at(-1)!.length).toBeGreaterThan(0);
      }
    },
  );

  it('drops the repeat of the last item of our previous page, across the cursor', async () => {
    const fetchPage = scripted([
      { items: items('a', 'b'), hasMore: true, nextPageToken: '2' },
      { items: items('b', 'c'), hasMore: false, nextPageToken: '4' },
    ]);
    const pages = await pageAll(fetchPage, 2, 1);
    expect(pages.map((p) => p.map((m) => m.id))).toEqual([['a', 'b'], ['c']]);
  });

  it('reads past short and empty pages while has_more is true, and ignores a token without has_more', async () => {
    const fetchPage = scripted([
      { items: items('a'), hasMore: true, nextPageToken: '3' },
      { items: [], hasMore: true, nextPageToken: '6' },
      { items: items('b', 'c', 'd'), hasMore: false, nextPageToken: '9' },
    ]);
    const page = await assemblePage({ pageSize: 3, fetchPage });
    expect(page.items.map((m) => m.id)).toEqual(['a', 'b', 'c']);
    expect(page.next).toMatchObject({ pageToken: null, surplus: [{ id: 'd' }] });
    const last = await assemblePage({
      pageSize: 3,
      cursor: page.next!,
      fetchPage: () => Promise.reject(new Error('no official call is needed')),
    });
    expect(last).toEqual({ items: [{ id: 'd', title: 'd' }], next: null, officialCalls: 0 });
  });

  it('looks one page ahead when a full page leaves no surplus, so the cursor is null exactly at the end', async () => {
    const fetchPage = scripted([
      { items: items('a', 'b'), hasMore: true, nextPageToken: '2' },
      { items: [], hasMore: false, nextPageToken: '' },
    ]);
    const page = await assemblePage({ pageSize: 2, fetchPage });
    expect(page).toMatchObject({ items: [{ id: 'a' }, { id: 'b' }], next: null, officialCalls: 2 });
  });

  it('stops at the call budget with a short page and a cursor to carry on', async () => {
    const empty = { items: [], hasMore: true, nextPageToken: 'n' };
    const fetchPage = scripted([
      { items: items('a'), hasMore: true, nextPageToken: '1' },
      empty,
      empty,
      { items: items('b', 'c'), hasMore: false, nextPageToken: '' },
    ]);
    const first = await assemblePage({ pageSize: 3, fetchPage, maxCalls: 3 });
    expect(first.items.map((m) => m.id)).toEqual(['a']);
    expect(first.next).toMatchObject({ searchId: 'S', pageToken: 'n', recent: ['a'] });
    const second = await assemblePage({ pageSize: 3, cursor: first.next!, fetchPage, maxCalls: 3 });
    expect(second.items.map((m) => m.id)).toEqual(['b', 'c']);
    expect(second.next).toBeNull();
  });

  it('keeps each id once, in order', () => {
    const seen = new Set(['x']);
    expect(uniqueById(items('a', 'x', 'b', 'a', 'c', 'b'), seen).map((m) => m.id)).toEqual(['a', 'b', 'c']);
    expect([...seen]).toEqual(['x', 'a', 'b', 'c']);
  });
});

describe('music cursor', () => {
  const box = new SealedBox(randomBytes(32));
  const scope = { seatId: 'seat_1', keyword: 'summer', region: '', language: '' };
  const cursor: MusicCursor = {
    searchId: 'search-id-of-the-shop',
    pageToken: '20',
    recent: ['1', '2'],
    surplus: [{ id: '3', title: 'Three' }],
  };

  it('round-trips, opaque', () => {
    const text = encodeCursor(box, scope, cursor);
    // Sealed: neither the text nor its decoded bytes show the shop's search id (a short string
    // could turn up in random ciphertext by chance; this one cannot).
    expect(text).not.toContain('search-id-of-the-shop');
    expect(Buffer.from(text.split('.').pop() ?? '', 'base64url').toString('latin1')).not.toContain('search-id-of-the-shop');
    expect(decodeCursor(box, scope, text)).toEqual(cursor);
  });

  it.each([
    ['another keyword', { ...scope, keyword: 'winter' }],
    ['another seat', { ...scope, seatId: 'seat_2' }],
    ['another region', { ...scope, region: 'GB' }],
    ['another language', { ...scope, language: 'en' }],
  ])('does not open for %s', (_what, other) => {
    expect(() => decodeCursor(box, other, encodeCursor(box, scope, cursor))).toThrow(CursorRefused);
  });

  it('refuses any change and any garbage', () => {
    const text = encodeCursor(box, scope, cursor);
    for (let i = 0; i < text.length; i += 7) {
      if (text[i] === '.') continue;
      const changed = text.slice(0, i) + (text[i] === 'A' ? 'B' : 'A') + text.slice(i + 1);
      expect(() => decodeCursor(box, scope, changed)).toThrow(CursorRefused);
    }
    for (const garbage of ['', 'x', 'v1.a.b.c', 'v9.' + text.slice(3)])
      expect(() => decodeCursor(box, scope, garbage)).toThrow(CursorRefused);
  });
});
