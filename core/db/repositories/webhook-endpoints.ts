import { and, asc, count, eq, isNotNull, isNull, ne, or, sql } from 'drizzle-orm';
import { rawQuery, type Db, type Executor } from '../client';
import { rowReader } from '../row-reader';
import { webhookEndpoints } from '../schema';
import { newId } from '../../ids';

export type WebhookEndpointRow = typeof webhookEndpoints.$inferSelect;

const readEndpoint = rowReader(webhookEndpoints);

const live = (customerId: string) => and(eq(webhookEndpoints.customerId, customerId), isNull(webhookEndpoints.deletedAt));

export async function countLiveEndpoints(db: Executor, customerId: string): Promise<number> {
  const [row] = await db.select({ n: count() }).from(webhookEndpoints).where(live(customerId));
  return row?.n ?? 0;
}

export async function insertEndpoint(
  db: Executor,
  input: {
    id?: string;
    customerId: string;
    url: string;
    eventTypes: string[];
    description?: string | null;
    signingKey: string;
    standardKey: string | null;
  },
): Promise<WebhookEndpointRow> {
  const [row] = await db
    .insert(webhookEndpoints)
    .values({ ...input, id: input.id ?? newId('we') })
    .returning();
  return row!;
}

export async function listLiveEndpoints(db: Executor, customerId: string): Promise<WebhookEndpointRow[]> {
  return db.select().from(webhookEndpoints).where(live(customerId)).orderBy(asc(webhookEndpoints.id));
}

/** What routing reads of an endpoint (not its URL or sealed keys, which deliveries read afresh). */
export type EndpointRoute = Pick<WebhookEndpointRow, 'id' | 'eventTypes' | 'disabledAt'>;

/** Where a customer's events go, and the routes version it was read at (see customers.routes_version). */
export interface CustomerRoutes {
  version: string;
  endpoints: EndpointRoute[];
}

/**
 * The live endpoints of several customers, each with its customer's routes version, read in one
 * statement so that each list and its version belong together. A customer with no row is absent.
 * Fixed text: intake runs it whenever it meets a customer whose routes it does not hold.
 */
export async function readCustomerRoutes(db: Db, customerIds: readonly string[]): Promise<Map<string, CustomerRoutes>> {
  if (customerIds.length === 0) return new Map();
  const rows = await rawQuery<{ id: string; version: string; endpoints: Array<Record<string, unknown>> }>(db, CUSTOMER_ROUTES, [
    [...customerIds],
  ]);
  return new Map(
    rows.map((r) => [
      r.id,
      {
        version: r.version,
        endpoints: r.endpoints.map(readEndpoint).map(({ id, eventTypes, disabledAt }) => ({ id, eventTypes, disabledAt })),
      },
    ]),
  );
}

const CUSTOMER_ROUTES = `
  select c.id, c.routes_version::text as version,
    coalesce((select json_agg(json_build_object('id', e.id, 'event_types', e.event_types, 'disabled_at', e.disabled_at) order by e.id)
      from webhook_endpoints e where e.customer_id = c.id and e.deleted_at is null), '[]'::json) as endpoints
  from customers c where c.id = any($1::text[])`;

/** Soft delete; returns undefined when the endpoint is not a live endpoint of the customer. */
export async function deleteEndpoint(db: Executor, customerId: string, id: string): Promise<WebhookEndpointRow | undefined> {
  const [row] = await db
    .update(webhookEndpoints)
    .set({ deletedAt: new Date() })
    .where(and(live(customerId), eq(webhookEndpoints.id, id)))
    .returning();
  return row;
}

/** Any endpoint by id, deleted or not: deliveries look theirs up to see whether it still takes pushes. */
export async function findEndpoint(db: Executor, id: string): Promise<WebhookEndpointRow | undefined> {
  const [row] = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id));
  return row;
}

/**
 * New keys (sealed: the spec's signing key, and the standard key or null); the current ones keep
 * signing beside them until `previousUntil`, or, when that is null, are dropped at once with any
 * earlier ones still in their grace.
 */
export async function rotateSigningKey(
  db: Executor,
  customerId: string,
  id: string,
  keys: { signingKey: string; standardKey: string | null },
  previousUntil: Date | null,
): Promise<WebhookEndpointRow | undefined> {
  const previous = previousUntil
    ? {
        previousSigningKey: sql`${webhookEndpoints.signingKey}`,
        previousStandardKey: sql`${webhookEndpoints.standardKey}`,
        previousKeyExpiresAt: previousUntil,
      }
    : { previousSigningKey: null, previousStandardKey: null, previousKeyExpiresAt: null };
  const [row] = await db
    .update(webhookEndpoints)
    .set({ ...keys, ...previous })
    .where(and(live(customerId), eq(webhookEndpoints.id, id)))
    .returning();
  return row;
}

/** POST …/enable: what an update with `enabled: true` does. */
export async function enableEndpoint(db: Executor, customerId: string, id: string): Promise<WebhookEndpointRow | undefined> {
  return updateEndpoint(db, customerId, id, { enabled: true });
}

/** What an update changes; an absent field is kept. */
export interface EndpointChanges {
  url?: string;
  eventTypes?: string[];
  /** null clears it. */
  description?: string | null;
  /** true clears any disable, as enableEndpoint does; false disables, keeping an earlier disable's time and reason. */
  enabled?: boolean;
}

/** The request's reason for an endpoint it disables, shown where the automatic disables show theirs. */
export const DISABLED_BY_REQUEST = 'disabled by request';

export async function updateEndpoint(
  db: Executor,
  customerId: string,
  id: string,
  changes: EndpointChanges,
): Promise<WebhookEndpointRow | undefined> {
  const { enabled, ...fields } = changes;
  // The failure clock starts again for an endpoint enabled from disabled, or given another URL (a
  // new receiver). Enabling one that is enabled, or saving its URL unchanged, leaves it running, so
  // that an edit cannot keep a failing endpoint from being disabled.
  const restarts = [
    ...(enabled === true ? [isNotNull(webhookEndpoints.disabledAt)] : []),
    ...(fields.url !== undefined ? [ne(webhookEndpoints.url, fields.url)] : []),
  ];
  const clock =
    restarts.length > 0 ? { failingSince: sql`case when ${or(...restarts)} then null else ${webhookEndpoints.failingSince} end` } : {};
  const state =
    enabled === true
      ? { disabledAt: null, disabledReason: null }
      : enabled === false
        ? {
            disabledAt: sql`coalesce(${webhookEndpoints.disabledAt}, now())`,
            disabledReason: sql`coalesce(${webhookEndpoints.disabledReason}, ${DISABLED_BY_REQUEST})`,
          }
        : {};
  const [row] = await db
    .update(webhookEndpoints)
    // An update that changes nothing still answers the endpoint: `id = id` keeps the SET non-empty.
    .set({ id: sql`${webhookEndpoints.id}`, ...fields, ...state, ...clock })
    .where(and(live(customerId), eq(webhookEndpoints.id, id)))
    .returning();
  return row;
}

export async function findLiveEndpoint(db: Executor, customerId: string, id: string): Promise<WebhookEndpointRow | undefined> {
  const [row] = await db
    .select()
    .from(webhookEndpoints)
    .where(and(live(customerId), eq(webhookEndpoints.id, id)));
  return row;
}

/**
 * Remembers when an endpoint started failing (kept from its first failure until a success) and
 * returns that time, so the caller can tell how long it has been failing.
 */
export async function markEndpointFailing(db: Executor, id: string): Promise<Date> {
  const [row] = await db
    .update(webhookEndpoints)
    .set({ failingSince: sql`coalesce(${webhookEndpoints.failingSince}, now())` })
    .where(eq(webhookEndpoints.id, id))
    .returning({ failingSince: webhookEndpoints.failingSince });
  return row?.failingSince ?? new Date();
}

export async function markEndpointHealthy(db: Executor, id: string): Promise<void> {
  await db
    .update(webhookEndpoints)
    .set({ failingSince: null })
    .where(and(eq(webhookEndpoints.id, id), isNotNull(webhookEndpoints.failingSince)));
}

/** Disables the endpoint; true when this call did it (so its event is written once). */
export async function disableEndpoint(db: Executor, id: string, reason: string): Promise<boolean> {
  const rows = await db
    .update(webhookEndpoints)
    .set({ disabledAt: new Date(), disabledReason: reason })
    .where(and(eq(webhookEndpoints.id, id), isNull(webhookEndpoints.disabledAt)))
    .returning({ id: webhookEndpoints.id });
  return rows.length > 0;
}

/** The columns that hold an endpoint's sealed keys, by the name the re-seal sweep uses. */
const KEY_COLUMNS = {
  signingKey: webhookEndpoints.signingKey,
  standardKey: webhookEndpoints.standardKey,
  previousSigningKey: webhookEndpoints.previousSigningKey,
  previousStandardKey: webhookEndpoints.previousStandardKey,
} as const;

export type SealedKeyColumn = keyof typeof KEY_COLUMNS;
export const SEALED_KEY_COLUMNS = Object.keys(KEY_COLUMNS) as SealedKeyColumn[];

/**
 * Up to `limit` endpoints after `afterId` (by id), deleted ones included, any of whose keys does
 * not start with `prefix`, the start of what the current key seals (plain keys from before sealing
 * never do): the re-seal sweep's pages.
 */
export async function signingKeysNotUnder(
  db: Executor,
  prefix: string,
  afterId: string,
  limit: number,
): Promise<Array<{ id: string } & Record<SealedKeyColumn, string | null>>> {
  const notUnder = Object.values(KEY_COLUMNS).map(
    (column) => sql`(${column} is not null and left(${column}, ${prefix.length}) <> ${prefix})`,
  );
  return db
    .select({ id: webhookEndpoints.id, ...KEY_COLUMNS })
    .from(webhookEndpoints)
    .where(and(sql`${webhookEndpoints.id} > ${afterId}`, or(...notUnder)))
    .orderBy(asc(webhookEndpoints.id))
    .limit(limit);
}

/**
 * One of an endpoint's keys sealed anew, stored only if the column still holds the value that was
 * opened: a rotation meanwhile wrote a newer key, which wins. True when stored.
 */
export async function replaceSealedSigningKey(
  db: Executor,
  id: string,
  which: SealedKeyColumn,
  from: string,
  to: string,
): Promise<boolean> {
  const rows = await db
    .update(webhookEndpoints)
    .set({ [which]: to })
    .where(and(eq(webhookEndpoints.id, id), eq(KEY_COLUMNS[which], from)))
    .returning({ id: webhookEndpoints.id });
  return rows.length > 0;
}
