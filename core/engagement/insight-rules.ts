/**
 * The insight parameters' rules, pure so that they are tested without the stack: which fields a
 * caller may name, the daily series' date range, the post id filter, the page size and cursor,
 * the benchmark category, and the shop video list's title, time range and cursor. Each refusal is
 * 2001 naming the field (docs/decisions/engagement.md, "Insight fields").
 */
import { ApiError, invalidField } from '../errors';
import type { FieldTable } from '../upstream/mapping';
import { BUSINESS_CATEGORIES, type BusinessCategory } from '../upstream/vplat/insights';

/** The official look-back of business/get: start_date at most this many days before today (UTC). */
export const MAX_LOOKBACK_DAYS = 60;
/** The official page size limit of business/video/list, which is also our default. */
export const MAX_VIDEO_PAGE = 20;
/** Post ids in one `videoIds` filter: a filter never needs more than one page holds. */
export const MAX_VIDEO_IDS = 20;

const DAY_MS = 86_400_000;

/**
 * The official names of the fields asked for. Each entry may be the service name (camelCase, as in
 * the answer) or the official name; duplicates are dropped. Undefined when none is named.
 */
export function resolveFields(requested: readonly string[], table: FieldTable, field = 'fields'): string[] | undefined {
  if (requested.length === 0) return undefined;
  const byName = new Map<string, string>();
  for (const [service, official] of table) {
    byName.set(service, official);
    byName.set(official, official);
  }
  const out = new Set<string>();
  for (const name of requested) {
    if (name.trim() === '') throw invalidField(field, 'a field name is empty (fields are separated by single commas)');
    const official = byName.get(name.trim());
    if (official === undefined) {
      throw invalidField(field, `unknown field "${name}"; allowed: ${table.map(([service]) => service).join(', ')}`);
    }
    out.add(official);
  }
  return [...out];
}

function isCalendarDate(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const parsed = Date.parse(`${value}T00:00:00Z`);
  // Date.parse rolls 2026-02-30 over to March: compare the round trip.
  return !Number.isNaN(parsed) && new Date(parsed).toISOString().slice(0, 10) === value;
}

export function utcDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function addDays(date: string, days: number): string {
  return utcDate(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS);
}

/**
 * The daily series' range: both dates or neither. Days are UTC; the range ends before today (the
 * platform has no figures for today yet) and starts at most 60 days back, as the platform allows.
 */
export function dateRange(startDate: string, endDate: string, nowMs: number): { start: string; end: string } | undefined {
  if (!startDate && !endDate) return undefined;
  if (!startDate) throw invalidField('startDate', 'is required with endDate (a date range has both)');
  if (!endDate) throw invalidField('endDate', 'is required with startDate (a date range has both)');
  for (const [field, value] of [
    ['startDate', startDate],
    ['endDate', endDate],
  ] as const) {
    if (!isCalendarDate(value)) throw invalidField(field, 'must be a date written YYYY-MM-DD');
  }
  const today = utcDate(nowMs);
  const earliest = addDays(today, -MAX_LOOKBACK_DAYS);
  const latest = addDays(today, -1);
  if (startDate > endDate) throw invalidField('endDate', `must not be before startDate (${startDate})`);
  if (endDate > latest) throw invalidField('endDate', `must be ${latest} or earlier: today (UTC) has no figures yet`);
  if (startDate < earliest)
    throw invalidField('startDate', `must be ${earliest} or later: the platform looks back at most ${MAX_LOOKBACK_DAYS} days`);
  return { start: startDate, end: endDate };
}

/** Id kinds that are not post ids, each refused with 1005 naming the right kind (as the publish status query does). */
const WRONG_POST_ID_KINDS: ReadonlyArray<readonly [RegExp, string]> = [
  [/^pub_/, "is a publish record id; pass the record's postId"],
  [/^vid_/, 'is a video library record id; pass the postId of its publish record'],
];

/** Post ids (item_id): digits only, at most MAX_VIDEO_IDS of them, duplicates dropped. */
export function postIds(ids: readonly string[], field = 'videoIds'): string[] {
  const out = [...new Set(ids.map((id) => id.trim()))];
  if (out.length > MAX_VIDEO_IDS) throw invalidField(field, `at most ${MAX_VIDEO_IDS} post ids`);
  for (const id of out) {
    const wrong = WRONG_POST_ID_KINDS.find(([pattern]) => pattern.test(id));
    if (wrong) throw new ApiError(1005, `${field}: ${id} ${wrong[1]}`, { data: { field } });
    if (!/^\d{1,32}$/.test(id))
      throw invalidField(
        field,
        id ? `"${id}" is not a post id (item_id: digits only)` : 'a post id is empty (ids are separated by single commas)',
      );
  }
  return out;
}

export function maxCount(value: number | undefined): number {
  if (value === undefined) return MAX_VIDEO_PAGE;
  if (!Number.isInteger(value) || value < 1 || value > MAX_VIDEO_PAGE)
    throw invalidField('maxCount', `must be an integer from 1 to ${MAX_VIDEO_PAGE}`);
  return value;
}

/** The official cursor: creation time in UTC milliseconds, posts created before it. */
export function videoCursor(cursor: string): number | undefined {
  if (!cursor) return undefined;
  if (!/^\d{1,15}$/.test(cursor)) throw invalidField('cursor', 'must be the nextCursor of a previous page');
  return Number(cursor);
}

/**
 * The shop video list's title filter: the text as given, trimmed; absent when empty. (Its length
 * is capped in the route's schema at the longest title a shop post may have.)
 */
export function titleFilter(title: string): string | undefined {
  if (title === '') return undefined;
  const text = title.trim();
  if (!text) throw invalidField('title', "must contain text (a part of the video's title)");
  return text;
}

/** Case folded for matching: composed first, so an accented letter typed either way is one letter. */
const fold = (text: string) => text.normalize('NFC').toLowerCase();

/** The title filter's rule: a case-insensitive substring of the title as published. */
export function titleMatches(title: string, filter: string): boolean {
  return fold(title).includes(fold(filter));
}

/** RFC 3339 (ISO 8601): date, time (seconds and fraction optional) and zone, Z or ±hh:mm. */
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** An instant written in ISO 8601 with its zone, kept to the millisecond; 2001 naming the field otherwise. */
export function instant(field: string, value: string): Date {
  // An unencoded "+" of an offset reaches us as a space: say so rather than only refuse.
  const hint = / \d{2}:\d{2}$/.test(value) ? ' (send the "+" of an offset as %2B)' : '';
  const refuse = (why: string) => invalidField(field, `${why}, e.g. 2026-11-01T09:30:00Z or 2026-11-01T10:30:00+01:00${hint}`);
  const m = INSTANT.exec(value);
  if (!m) throw refuse('must be an ISO 8601 date and time with a zone');
  const part = (i: number) => Number(m[i] ?? 0);
  const [year, month, day, hour, minute, second, zoneHours, zoneMinutes] = [1, 2, 3, 4, 5, 6, 9, 10].map(part) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  // No video is older than 1970; Date.UTC would also read years below 100 as 19xx.
  if (year < 1970) throw refuse('is before 1970');
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) throw refuse('is not a calendar date');
  if (hour > 23 || minute > 59 || second > 59 || zoneHours > 23 || zoneMinutes > 59) throw refuse('is not a time of day');
  const ms = Number((m[7] ?? '').padEnd(3, '0').slice(0, 3));
  const offsetMinutes = (m[8] === '-' ? -1 : 1) * (zoneHours * 60 + zoneMinutes);
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second, ms) - offsetMinutes * 60_000);
}

/** The shop video list's time range: from inclusive, to exclusive, either may be left open. */
export function timeRange(from: string, to: string): { from?: Date; to?: Date } {
  const range = { ...(from ? { from: instant('from', from) } : {}), ...(to ? { to: instant('to', to) } : {}) };
  if (range.from && range.to && range.to <= range.from) throw invalidField('to', `must be after from (${range.from.toISOString()})`);
  return range;
}

/** The shop video list's cursor: the publish record id of the previous page's last video. */
export function shopVideoCursor(cursor: string): string | undefined {
  if (!cursor) return undefined;
  if (!/^pub_[0-9a-z]{26}$/.test(cursor))
    throw invalidField('cursor', "must be the nextCursor of a previous page of this shop account's list");
  return cursor;
}

export function businessCategory(category: string): BusinessCategory {
  const found = BUSINESS_CATEGORIES.find((c) => c === category);
  if (!found) throw invalidField('category', `must be one of ${BUSINESS_CATEGORIES.join(', ')}`);
  return found;
}
