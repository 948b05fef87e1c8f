// `product-cost-export load-csv <table> <file>`: loads one contract table from CSV text with
// a header line naming its columns (any order; an empty unquoted cell is null). The text
// arrives in pieces and rows are upserted by primary key in batches, so memory stays bounded
// whatever the file's size; all batches run in one transaction, so a failed load changes
// nothing. With --replace the table is emptied first (an ETL-style reload), in the same
// transaction. A value PostgreSQL rejects is traced to its line and column.

import postgres from "postgres";
import type { Sql } from "../database/client.ts";
import { CsvError, CsvReader, type CsvRecord } from "./csv.ts";

interface TableSpec {
  columns: Record<string, string>; // column → SQL type its text is cast to
  /** The primary key: the columns every file must name (the upsert's conflict target). */
  key: string[];
}

export const TABLES: Record<string, TableSpec> = {
  products: {
    columns: { product_id: "bigint", erp_product_id: "bigint", erp_sku: "text", product_name: "text", is_sample: "boolean" },
    key: ["product_id"],
  },
  product_daily_costs: {
    columns: {
      product_id: "bigint",
      cost_date: "date",
      purchase_cost_usd: "numeric",
      inbound_freight_usd: "numeric",
      shipping_to_customer_usd: "numeric",
      warehouse_fees_usd: "numeric",
    },
    key: ["product_id", "cost_date"],
  },
};

export class LoadError extends Error {}

export interface LoadReport {
  /** Data records read (after the header). */
  rows: number;
  /** Rows that were new, and rows that replaced one with the same key. */
  inserted: number;
  updated: number;
}

export interface LoadOptions {
  replace: boolean;
  /** Called after each batch with the records loaded so far. */
  onBatch?: (rows: number) => void;
  /** Rows per statement (5,000: about 1 MB of parameters). */
  batchSize?: number;
}

/**
 * A statement's characters of values at most, besides its last row: rows of the widest values
 * the reader lets through (csv.ts: two of 1 Mi characters in a product) go a few at a time, not
 * 5,000 at once (10 G characters). 4 Mi is about ten times a batch of ordinary rows (5,000 of
 * 60 to 100 characters), so it never cuts one short.
 */
const BATCH_CHARS = 4_194_304;

type Row = { line: number; values: (string | null)[] };

/**
 * The fixed-shape upsert for one table and one header: only names from TABLES reach the
 * SQL. Every column travels as text[] and is cast by PostgreSQL, so values are parsed by the
 * server's own rules (exact numerics, dates, booleans) and never by the driver. It answers
 * how many rows were new (xmax = 0: no earlier version of the row) and how many updated.
 */
function upsertSql(table: string, spec: TableSpec, header: string[]): string {
  const cols = header.map((c) => `"${c}"`).join(", ");
  const arrays = header.map((_, i) => `$${i + 1}::text[]`).join(", ");
  const aliases = header.map((_, i) => `c${i + 1}`).join(", ");
  const casts = header.map((c, i) => `c${i + 1}::${spec.columns[c]}`).join(", ");
  const updates = header.filter((c) => !spec.key.includes(c)).map((c) => `"${c}" = excluded."${c}"`);
  const conflict = `on conflict (${spec.key.join(", ")}) ` + (updates.length ? `do update set ${updates.join(", ")}` : "do nothing");
  return (
    `with written as (insert into ${table} (${cols}) select ${casts} from unnest(${arrays}) as t(${aliases}) ${conflict} returning xmax = 0 as inserted) ` +
    `select count(*) filter (where inserted)::int as inserted, count(*) filter (where not inserted)::int as updated from written`
  );
}

function checkHeader(table: string, spec: TableSpec, header: string[]): void {
  for (const c of header) {
    // Its first 64 characters are enough to recognize it (no column's name has 30): a field may hold 1 Mi.
    const shown = c.length > 64 ? `${JSON.stringify(c.slice(0, 64)).slice(0, -1)}…"` : JSON.stringify(c);
    if (!(c in spec.columns)) throw new LoadError(`line 1: unknown column ${shown} for ${table} (columns: ${Object.keys(spec.columns).join(", ")})`);
  }
  if (new Set(header).size !== header.length) throw new LoadError("line 1: a column is named twice in the header");
  for (const c of spec.key) if (!header.includes(c)) throw new LoadError(`line 1: the header lacks the column ${c}`);
}

export async function loadCsv(sql: Sql, table: string, input: AsyncIterable<string> | string, options: LoadOptions): Promise<LoadReport> {
  const spec = TABLES[table];
  if (!spec) throw new LoadError(`unknown table ${JSON.stringify(table)} (expected ${Object.keys(TABLES).join(" or ")})`);
  const batchSize = options.batchSize ?? 5000;
  const report: LoadReport = { rows: 0, inserted: 0, updated: 0 };
  const reader = new CsvReader();

  await sql.begin(async (tx) => {
    let header: string[] | undefined;
    let statement = "";
    let keyIndexes: number[] = [];
    let batch: Row[] = [];
    let batchChars = 0;
    let keysInBatch = new Set<string>();
    let batches = 0;

    const flush = async () => {
      if (batch.length === 0) return;
      const columns = header!.map((_, i) => batch.map((r) => r.values[i]!));
      try {
        // A savepoint per batch: after a failure the transaction can still trace its cause.
        const [counts] = await tx.savepoint((sp) => sp.unsafe<{ inserted: number; updated: number }[]>(statement, columns as never[]));
        report.inserted += counts!.inserted;
        report.updated += counts!.updated;
      } catch (err) {
        if (err instanceof postgres.PostgresError) throw await explain(tx, statement, table, header!, batch, err);
        throw err;
      }
      report.rows += batch.length;
      batch = [];
      batchChars = 0;
      keysInBatch = new Set();
      options.onBatch?.(report.rows);
      // Each batch leaves a few MB of garbage (its strings and parameter arrays) that the
      // collector would let pile up to ~150 MB; collecting every 5 batches keeps a load of
      // any size near 100 MB of RSS for a few % of its time (measured on 24 and 96 MB files).
      if (++batches % 5 === 0) Bun.gc(true);
    };

    const take = async (record: CsvRecord) => {
      if (!header) {
        header = record.fields.map((f) => f.value.trim());
        checkHeader(table, spec, header);
        statement = upsertSql(table, spec, header);
        keyIndexes = spec.key.map((k) => header!.indexOf(k));
        if (options.replace) await tx.unsafe(table === "products" ? "truncate product_daily_costs, products" : `truncate ${table}`);
        return;
      }
      if (record.fields.length !== header.length) {
        throw new LoadError(`line ${record.line}: ${record.fields.length} fields, the header has ${header.length}`);
      }
      const values = record.fields.map((f) => (f.value === "" && !f.quoted ? null : f.value));
      // One statement cannot write a key twice: a key seen again goes into the next batch, so
      // the later line wins, as it would line by line.
      const key = keyIndexes.map((i) => values[i]).join("\u0000");
      if (keysInBatch.has(key)) await flush();
      keysInBatch.add(key);
      batch.push({ line: record.line, values });
      for (const f of record.fields) batchChars += f.value.length;
      if (batch.length >= batchSize || batchChars >= BATCH_CHARS) await flush();
    };

    try {
      for await (const piece of typeof input === "string" ? [input] : input) {
        for (const record of reader.push(piece)) await take(record);
      }
      for (const record of reader.end()) await take(record);
    } catch (err) {
      if (err instanceof CsvError) {
        // The field's column by the header's name (by its number on the header line itself, or past the header's columns).
        const column = err.field === undefined ? "" : `, column ${header?.[err.field] ?? err.field + 1}`;
        throw new LoadError(`line ${err.line}${column}: ${err.message}`);
      }
      throw err;
    }
    if (!header) throw new LoadError("the file is empty (expected a header line)");
    await flush();
  });
  return report;
}

/**
 * The line and column of a batch's failure: halves of the batch are tried (each in a
 * savepoint, rolled back) until one row fails alone, then that row's values are cast one by
 * one to their column's type. The whole transaction fails anyway: nothing tried here stays.
 */
async function explain(tx: postgres.TransactionSql<{}>, statement: string, table: string, header: string[], batch: Row[], first: postgres.PostgresError): Promise<LoadError> {
  const fails = async (rows: Row[]): Promise<postgres.PostgresError | undefined> => {
    try {
      await tx.savepoint((sp) => sp.unsafe(statement, header.map((_, i) => rows.map((r) => r.values[i]!)) as never[]));
      return undefined;
    } catch (err) {
      if (err instanceof postgres.PostgresError) return err;
      throw err;
    }
  };
  let rows = batch;
  let error = first;
  while (rows.length > 1) {
    const half = rows.slice(0, Math.ceil(rows.length / 2));
    const failure = await fails(half);
    if (failure) [rows, error] = [half, failure];
    else {
      rows = rows.slice(half.length);
      error = (await fails(rows)) ?? error;
    }
  }
  const row = rows[0]!;
  const column = await columnOf(tx, table, header, row, error);
  return new LoadError(`line ${row.line}${column ? `, column ${column}` : ""}: ${error.message}`);
}

/** The column whose value fails: a reference or constraint names it; else each value is cast to its column's type. */
async function columnOf(tx: postgres.TransactionSql<{}>, table: string, header: string[], row: Row, error: postgres.PostgresError): Promise<string | undefined> {
  const reported = (error as unknown as { column_name?: string }).column_name;
  if (reported) return reported;
  const named = /^Key \(([a-z_, ]+)\)=/.exec(error.detail ?? "")?.[1];
  if (named) return named;
  const types = await tx<{ name: string; type: string }[]>`
    select attname as name, format_type(atttypid, atttypmod) as type from pg_attribute
    where attrelid = ${table}::regclass and attnum > 0 and not attisdropped`;
  for (const [i, name] of header.entries()) {
    const value = row.values[i];
    const type = types.find((t) => t.name === name)?.type;
    if (value === null || value === undefined || !type) continue;
    try {
      // The type comes from the catalog, never from the file.
      await tx.savepoint((sp) => sp.unsafe(`select $1::text::${type}`, [value]));
    } catch (err) {
      if (err instanceof postgres.PostgresError) return name;
      throw err;
    }
  }
  return undefined;
}
