/**
 * The endpoints intake routes each customer's events to, kept in memory between batches. Reading
 * them for every batch was a statement of its own beside the insert, a third of intake's
 * statements, and on embedded PGlite a large share of its one thread. Keeping them is safe because
 * nothing trusts them blindly: the insert names the routes version each list was read at, and
 * stores nothing when a customer's version has moved on (an endpoint added, removed, enabled,
 * disabled or resubscribed since: migration 0019's trigger raises it). The batch is then routed
 * again from a fresh read. So an event is never routed by endpoints older than the ones a fresh
 * read at the insert statement's start would have found, in this process or any other. (The check
 * reads in that statement's snapshot, taken before it waits for the customer's lock: a change that
 * commits during that wait applies from the next event on, as it did when the endpoints were read
 * in a statement of their own.)
 */
import type { Db } from '../db/client';
import { readCustomerRoutes, type CustomerRoutes } from '../db/repositories/webhook-endpoints';
import { KeptMap } from '../kept-map';

/** Customers whose routes are kept; one more drops the one read longest ago, to be read again when met. */
const KEPT_CUSTOMERS = 10_000;

export class EventRoutes {
  private readonly kept = new KeptMap<string, CustomerRoutes>(KEPT_CUSTOMERS);

  constructor(private readonly db: Db) {}

  /** Each customer's routes: kept ones as they are, the others read in one statement. Absent: no such customer. */
  async of(customerIds: Iterable<string>): Promise<Map<string, CustomerRoutes>> {
    const found = new Map<string, CustomerRoutes>();
    const missing: string[] = [];
    for (const id of new Set(customerIds)) {
      const routes = this.kept.get(id);
      if (routes) found.set(id, routes);
      else missing.push(id);
    }
    for (const [id, routes] of await readCustomerRoutes(this.db, missing)) {
      this.kept.set(id, routes);
      found.set(id, routes);
    }
    return found;
  }

  /** Drops what is kept of these customers: the insert found their versions moved on. */
  forget(customerIds: Iterable<string>): void {
    for (const id of customerIds) this.kept.delete(id);
  }
}
