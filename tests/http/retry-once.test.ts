// One retry a read (issue 54): an answer whose read fails while its body is read ahead, before
// its first byte, is read once more on a new read opened without a retry of its own, unless
// the first read was already read again while it opened (read.ts): never a third time. The
// reads here are stand-ins for the database's, failing where the test says (the database's own
// faults are tests/e2e/faults-under-load.test.ts and tests/db/lock-conflicts.test.ts).
import { describe, expect, test } from "bun:test";
import { createBufferBudget } from "../../src/body/body.ts";
import { sendAnswer } from "../../src/answer/product-costs-answer.ts";
import type { AnswerReads } from "../../src/answer/answer-reads.ts";
import { answerKey } from "../../src/query/answer-key.ts";
import { Exchange } from "../../src/request/exchange.ts";
import type { ProductCostRow } from "../../src/reads/answer-rows.ts";
import type { Read } from "../../src/reads/read.ts";

const SILENT = { debug() {}, info() {}, warn() {}, error() {} };
const text = (s: string) => new TextEncoder().encode(s);
const ROW: ProductCostRow = [text("1"), text("SKU-1"), text("Product 1"), text("1.5"), null, text("0"), text("2")];
const ROW_JSON = '{"erp_product_id":1,"erp_sku":"SKU-1","product_name":"Product 1","purchase_cost_usd":1.5,"inbound_freight_usd":null,"shipping_to_customer_usd":0,"warehouse_fees_usd":2}';
const sessionEnded = () => Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" });

/** A read of `batches` batches of one row each whose batch `failAt` fails with `failure` (none: it ends). */
function read(batches: number, failAt: number | undefined, failure: () => Error, retriedAfter: unknown): Read<ProductCostRow> {
  let next = 1;
  return {
    head: undefined,
    first: [ROW],
    answered: 0,
    retriedAfter,
    async next() {
      await Bun.sleep(1);
      if (next === failAt) throw failure();
      return next++ < batches ? [ROW] : undefined;
    },
    async close() {},
  };
}

/** Reads that hand out `plans` in turn (each: where it fails, whether it was read again while it opened), and what each was asked. */
function reads(plans: { failAt?: number; retriedAfter?: unknown; failure?: () => Error }[]) {
  const asked: (boolean | undefined)[] = [];
  const reads: AnswerReads = {
    async version() {
      return null; // the daily rows: nothing kept, no validator
    },
    async read(daily, retry) {
      const plan = plans[asked.length]!;
      asked.push(retry);
      return { daily, read: { kind: "rows", read: read(20, plan.failAt, plan.failure ?? sessionEnded, plan.retriedAfter), from: "daily" } };
    },
  };
  return { reads, asked };
}

async function answer(plans: Parameters<typeof reads>[0]) {
  const exchange = new Exchange(new Request("http://x/"), { logger: SILENT });
  const { reads: planned, asked } = reads(plans);
  const key = answerKey({ monthFrom: "2026-10-01", monthTo: "2026-10-31", segment: "normal" }, "json");
  const sent = await sendAnswer({ build: "test", budget: createBufferBudget(8 * 2 ** 20) }, { key, reads: planned, versioned: null, wanted: null, exchange }).then(
    async (response) => ({ status: response.status, body: await response.text() }),
    (err: Error & { code?: string }) => ({ failed: err.code ?? err.message }),
  );
  return { sent, asked, retriedAfter: (exchange.retriedAfter as { code?: string } | undefined)?.code };
}

describe("one retry a read", () => {
  test("a read that fails while its body is read ahead is read once more, on a read opened without a retry of its own", async () => {
    const { sent, asked, retriedAfter } = await answer([{ failAt: 5 }, {}]);
    expect(sent).toEqual({ status: 200, body: `[${Array(20).fill(ROW_JSON).join(",")}]` });
    expect(asked).toEqual([true, false]);
    expect(retriedAfter).toBe("57P01");
  });

  test("one already read again while it opened is not read a third time: its failure is answered", async () => {
    const { sent, asked } = await answer([{ failAt: 5, retriedAfter: sessionEnded() }, {}]);
    expect(sent).toEqual({ failed: "57P01" });
    expect(asked).toEqual([true]);
  });

  test("the second read's failure is answered: two reads at most", async () => {
    const { sent, asked } = await answer([{ failAt: 5 }, { failAt: 3 }, {}]);
    expect(sent).toEqual({ failed: "57P01" });
    expect(asked).toEqual([true, false]);
  });

  test("a failure a new session would meet as well (a query error) is not read again", async () => {
    const failure = () => Object.assign(new Error("division by zero"), { code: "22012" });
    const { sent, asked } = await answer([{ failAt: 5, failure }, {}]);
    expect(sent).toEqual({ failed: "22012" });
    expect(asked).toEqual([true]);
  });
});
