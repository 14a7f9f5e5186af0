import { getTableColumns, type Table } from 'drizzle-orm';

/**
 * Reads a table's rows as drizzle's select returns them, from a raw statement (`select * …`) whose
 * rows the driver keys by column name. drizzle checks each field's kind on every row it maps: on the
 * seat list, the hottest read, that cost the service more CPU than sending the statement. Here the
 * columns and their decoders are looked up once per table.
 */
export function rowReader<T extends Table>(table: T): (raw: Record<string, unknown>) => T['$inferSelect'] {
  const columns = Object.entries(getTableColumns(table)).map(([key, column]) => ({ key, name: column.name, column }));
  return (raw) => {
    const row: Record<string, unknown> = {};
    for (const { key, name, column } of columns) {
      const value = raw[name];
      row[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
    }
    return row as T['$inferSelect'];
  };
}
