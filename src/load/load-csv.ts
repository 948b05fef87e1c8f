// `product-cost-export load-csv <table> <file>`: loads one contract table from a CSV
// file with a header line naming its columns (any order; an empty unquoted cell is null).
// Rows are upserted by primary key in batches, inside one transaction, so a failed load
// changes nothing. With --replace the table is emptied first (an ETL-style reload).

import postgres from "postgres";
import type { Sql } from "../db/client.ts";
import { parseCsv, CsvError } from "./csv.ts";

interface TableSpec {
  columns: Record<string, string>; // column → SQL type its text is cast to
  key: string[];
  required: string[];
}

export const TABLES: Record<string, TableSpec> = {
  products: {
    columns: { product_id: "bigint", erp_product_id: "bigint", erp_sku: "text", product_name: "text", is_sample: "boolean" },
    key: ["product_id"],
    required: ["product_id"],
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
    required: ["product_id", "cost_date"],
  },
};

export class LoadError extends Error {}

const BATCH = 5000;

/**
 * Builds the fixed-shape upsert for one table and one header: only names from TABLES reach
 * the SQL. Every column travels as text[] and is cast by PostgreSQL, so values are parsed
 * by the server's own rules (exact numerics, dates, booleans) and never by the driver.
 */
function upsertSql(table: string, spec: TableSpec, header: string[]): string {
  const cols = header.map((c) => `"${c}"`).join(", ");
  const arrays = header.map((_, i) => `$${i + 1}::text[]`).join(", ");
  const aliases = header.map((_, i) => `c${i + 1}`).join(", ");
  const casts = header.map((c, i) => `c${i + 1}::${spec.columns[c]}`).join(", ");
  const updates = header.filter((c) => !spec.key.includes(c)).map((c) => `"${c}" = excluded."${c}"`);
  const conflict = `on conflict (${spec.key.join(", ")}) ` + (updates.length ? `do update set ${updates.join(", ")}` : "do nothing");
  return `insert into ${table} (${cols}) select ${casts} from unnest(${arrays}) as t(${aliases}) ${conflict}`;
}

export async function loadCsv(sql: Sql, table: string, text: string, options: { replace: boolean }): Promise<number> {
  const spec = TABLES[table];
  if (!spec) throw new LoadError(`unknown table ${JSON.stringify(table)} (expected ${Object.keys(TABLES).join(" or ")})`);
  const records = parseCsv(text);
  const first = records.next();
  if (first.done) throw new LoadError("the file is empty (expected a header line)");
  const header = first.value.map((f) => f.value.trim());
  for (const c of header) {
    if (!(c in spec.columns)) throw new LoadError(`unknown column ${JSON.stringify(c)} for ${table} (columns: ${Object.keys(spec.columns).join(", ")})`);
  }
  if (new Set(header).size !== header.length) throw new LoadError("a column is named twice in the header");
  for (const c of spec.required) if (!header.includes(c)) throw new LoadError(`the header lacks the column ${c}`);

  const statement = upsertSql(table, spec, header);
  let loaded = 0;
  await sql.begin(async (tx) => {
    if (options.replace) {
      await tx.unsafe(table === "products" ? "truncate product_daily_costs, products" : `truncate ${table}`);
    }
    let columns: (string | null)[][] = header.map(() => []);
    let recordNo = 0; // data records after the header
    const flush = async () => {
      if (!columns[0]!.length) return;
      const first = recordNo - columns[0]!.length + 1;
      try {
        await tx.unsafe(statement, columns as never[]);
      } catch (err) {
        // A value PostgreSQL rejects (bad number or date, unknown product_id): name the records.
        if (err instanceof postgres.PostgresError) throw new LoadError(`records ${first}-${recordNo}: ${err.message}`);
        throw err;
      }
      loaded += columns[0]!.length;
      columns = header.map(() => []);
    };
    try {
      for (const record of records) {
        recordNo++;
        if (record.length !== header.length) {
          throw new LoadError(`record ${recordNo}: ${record.length} fields, the header has ${header.length}`);
        }
        record.forEach((f, i) => columns[i]!.push(f.value === "" && !f.quoted ? null : f.value));
        if (columns[0]!.length >= BATCH) await flush();
      }
      await flush();
    } catch (err) {
      if (err instanceof CsvError) throw new LoadError(`record ${recordNo + 1}: ${err.message}`);
      throw err;
    }
  });
  return loaded;
}
