/**
 * The business ids every workflow is tagged with, so an operator finds a customer's, a seat's or
 * a record's work in the Temporal UI with a query such as `CustomerId="cus_…"`. The embedded dev
 * server registers them at start; a Temporal cluster gets them from ensureSearchAttributes.
 */
import { defineSearchAttributeKey, SearchAttributeType, TypedSearchAttributes } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { ConnectionLike } from '@temporalio/client';

export const CUSTOMER_ID = defineSearchAttributeKey('CustomerId', SearchAttributeType.KEYWORD);
export const SEAT_ID = defineSearchAttributeKey('SeatId', SearchAttributeType.KEYWORD);
/** The service's id of what the workflow works on: a publish record, a video, a delivery. */
export const RECORD_ID = defineSearchAttributeKey('RecordId', SearchAttributeType.KEYWORD);

export const SEARCH_ATTRIBUTE_KEYS = [CUSTOMER_ID, SEAT_ID, RECORD_ID];

export function workSearchAttributes(ids: { customerId?: string; seatId?: string | null; recordId: string }): TypedSearchAttributes {
  return new TypedSearchAttributes([
    ...(ids.customerId ? [{ key: CUSTOMER_ID, value: ids.customerId }] : []),
    ...(ids.seatId ? [{ key: SEAT_ID, value: ids.seatId }] : []),
    { key: RECORD_ID, value: ids.recordId },
  ]);
}

/** Registers the attributes on a namespace that lacks them; one already there is left as it is. */
export async function ensureSearchAttributes(connection: Pick<ConnectionLike, 'operatorService'>, namespace: string): Promise<void> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = SEARCH_ATTRIBUTE_KEYS.filter((k) => !(k.name in (existing.customAttributes ?? {})));
  if (missing.length === 0) return;
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(missing.map((k) => [k.name, temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD])),
  });
}
