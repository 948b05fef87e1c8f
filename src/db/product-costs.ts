// The read behind GET /external/v1/product-costs: runs sql/queries/product_costs.sql
// through a cursor so a large answer never sits in memory whole. The first batch is
// fetched before the caller commits to a 200, so a dead database is still a clean 503.

import productCostsQuery from "../../sql/queries/product_costs.sql" with { type: "text" };
import type { Sql } from "./client.ts";
import { DatabaseDeadlineError, isStaleConnection } from "./errors.ts";

/** One row as the database returns it: ids and amounts are exact decimal text, never floats. */
export interface ProductCostRow {
  erp_product_id: string | null;
  erp_sku: string | null;
  product_name: string | null;
  purchase_cost_usd: string | null;
  inbound_freight_usd: string | null;
  shipping_to_customer_usd: string | null;
  warehouse_fees_usd: string | null;
}

export interface ProductCostQuery {
  monthFrom: string; // YYYY-MM-DD
  monthTo: string; // YYYY-MM-DD
  segment: "normal" | "sample" | "all";
}

export interface RowBatches {
  /** The first batch, already fetched (may be empty). */
  first: ProductCostRow[];
  /** The remaining batches. */
  rest(): AsyncGenerator<ProductCostRow[]>;
  /** Stops early: closes the cursor and cancels the query if it still runs. Safe to call twice. */
  close(): Promise<void>;
}

export interface ReadOptions {
  batchSize: number;
  /** Deadline for the first batch; past it the query is cancelled and DatabaseDeadlineError thrown. */
  firstBatchTimeoutMs: number;
}

async function openOnce(sql: Sql, q: ProductCostQuery, options: ReadOptions): Promise<RowBatches> {
  const query = sql.unsafe<ProductCostRow[]>(productCostsQuery, [q.monthFrom, q.monthTo, q.segment]);
  const iterator = query.cursor(options.batchSize)[Symbol.asyncIterator]();
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    query.cancel();
    await iterator.return?.(undefined).catch(() => {});
  };

  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DatabaseDeadlineError(options.firstBatchTimeoutMs)), options.firstBatchTimeoutMs);
  });
  let head: IteratorResult<ProductCostRow[]>;
  try {
    head = await Promise.race([iterator.next(), deadline]);
  } catch (err) {
    await close();
    throw err;
  } finally {
    clearTimeout(timer);
  }
  if (head.done) closed = true;

  return {
    first: head.done ? [] : head.value,
    async *rest() {
      if (closed) return;
      try {
        for (;;) {
          const next = await iterator.next();
          if (next.done) break;
          yield next.value;
        }
        closed = true;
      } finally {
        await close();
      }
    },
    close,
  };
}

export async function readProductCosts(sql: Sql, q: ProductCostQuery, options: ReadOptions): Promise<RowBatches> {
  try {
    return await openOnce(sql, q, options);
  } catch (err) {
    // A connection that died while idle (database restarted) fails its next query once;
    // the read is idempotent, so one retry on a fresh connection hides that.
    if (isStaleConnection(err)) return await openOnce(sql, q, options);
    throw err;
  }
}
