// load-csv against each backend: upserts, nulls, exact decimals, and all-or-nothing failures.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { loadCsv, LoadError } from "../../src/load/load-csv.ts";
import { describeBackends, type BackendHandle } from "../support/backends.ts";

describeBackends("load-csv on $name", (backend) => {
  let db: BackendHandle;
  beforeAll(async () => {
    db = await backend.open();
    await db.admin`truncate product_daily_costs, products`;
  });
  afterAll(async () => {
    await db.close();
  });

  test("loads products with columns in any order, empty cell = null, quoted empty = empty text", async () => {
    const report = await loadCsv(db.admin, "products", 'erp_sku,product_id,product_name,is_sample,erp_product_id\r\nA-1,1,"Lamp, ""big""",false,9223372036854775807\r\n,2,"",true,\r\n', { replace: true });
    expect(report).toEqual({ rows: 2, inserted: 2, updated: 0 });
    expect(await db.admin`select product_id, erp_product_id, erp_sku, product_name, is_sample from products order by 1`).toEqual([
      { product_id: "1", erp_product_id: "9223372036854775807", erp_sku: "A-1", product_name: 'Lamp, "big"', is_sample: false },
      { product_id: "2", erp_product_id: null, erp_sku: null, product_name: "", is_sample: true },
    ] as never);
  });

  test("daily costs keep exact decimals and nulls; a second load upserts by key, keeping the columns it does not name (docs/embedded-database.md)", async () => {
    await loadCsv(db.admin, "product_daily_costs", "product_id,cost_date,purchase_cost_usd,warehouse_fees_usd\n1,2024-01-01,99999999999999.999999,\n1,2024-01-02,0,0.000001\n", { replace: false });
    expect(await loadCsv(db.admin, "product_daily_costs", "product_id,cost_date,purchase_cost_usd\n1,2024-01-02,5.5\n1,2024-01-03,1\n", { replace: false })).toEqual({
      rows: 2,
      inserted: 1,
      updated: 1,
    });
    await db.admin`delete from product_daily_costs where cost_date = '2024-01-03'`;
    expect(await db.admin`select cost_date::text, purchase_cost_usd, warehouse_fees_usd from product_daily_costs order by 1`).toEqual([
      { cost_date: "2024-01-01", purchase_cost_usd: "99999999999999.999999", warehouse_fees_usd: null },
      { cost_date: "2024-01-02", purchase_cost_usd: "5.500000", warehouse_fees_usd: "0.000001" },
    ] as never);
  });

  test.each([
    ["an unknown column", "product_id,colour\n1,red\n", 'line 1: unknown column "colour" for products (columns: product_id, erp_product_id, erp_sku, product_name, is_sample)'],
    ["no key column", "erp_sku\nA\n", "line 1: the header lacks the column product_id"],
    // A name past any column's is shown in part: the error stays one short line on a terminal.
    ["an unknown column of 100,000 characters", `product_id,${"c".repeat(100_000)}\n1,red\n`, `line 1: unknown column "${"c".repeat(64)}…" for products (columns: product_id, erp_product_id, erp_sku, product_name, is_sample)`],
    ["a short record", "product_id,erp_sku\n3,A\n4\n", "line 3: 1 fields, the header has 2"],
    ["an open quote", 'product_id,erp_sku\n3,A\n4,"B\n5,C\n', "line 3: unterminated quoted field"],
    ["an empty file", "", "the file is empty (expected a header line)"],
    // PostgreSQL text cannot hold a NUL: named where it is, before the database sees it.
    ["a NUL byte in a value", "product_id,product_name\n3,A\n4,B\u0000C\n", "line 3, column product_name: a NUL byte (0x00), which PostgreSQL text cannot hold"],
    ["a NUL byte on the second line of a quoted value", 'product_id,product_name\n3,"A\r\nB\u0000"\n', "line 3, column product_name: a NUL byte (0x00), which PostgreSQL text cannot hold"],
    ["a NUL byte in the header", "product_id,\u0000\n", "line 1, column 2: a NUL byte (0x00), which PostgreSQL text cannot hold"],
    ["a NUL byte past the header's columns", "product_id\n3,\u0000\n", "line 2, column 2: a NUL byte (0x00), which PostgreSQL text cannot hold"],
    // The size bounds (docs/embedded-database.md): just past each.
    ["a field of 1,048,577 characters", `product_id,product_name\n3,A\n4,"${"x".repeat(1_048_577)}"\n`, "line 3, column product_name: a field longer than 1,048,576 characters"],
    // Four fields of 1,048,576 characters and three commas; the row starts on line 3 and ends on line 4.
    [
      "a row of 4,194,307 characters",
      `product_id,erp_product_id,erp_sku,product_name\n3,3,A,B\n${"1".repeat(1_048_576)},${"2".repeat(1_048_576)},${"x".repeat(1_048_576)},"${"y".repeat(524_288)}\n${"z".repeat(524_287)}"\n`,
      "line 3: a row longer than 4,194,304 characters",
    ],
    ["a row of 1,001 fields", `product_id\n3\n${",".repeat(1_000)}\n`, "line 3: more than 1,000 fields"],
  ])("refuses %s and changes nothing", async (_, text, message) => {
    const before = await db.admin`select count(*)::int as n from products`;
    const error = await loadCsv(db.admin, "products", text, { replace: true }).catch((e) => e);
    expect(error).toBeInstanceOf(LoadError);
    expect(error.message).toBe(message);
    expect(await db.admin`select count(*)::int as n from products`).toEqual(before);
  });

  /** 23 rows of daily costs for product 1 in February (lines 2..24), one of them replaced by `bad` at `line`. */
  function februaryWith(line: number, bad: string): string {
    const rows = Array.from({ length: 23 }, (_, i) => `1,2024-02-${String(i + 1).padStart(2, "0")},1.5,2`);
    rows[line - 2] = bad;
    return "product_id,cost_date,purchase_cost_usd,warehouse_fees_usd\n" + rows.join("\n") + "\n";
  }

  test.each([
    [17, "1,2024-02-31,1,1", 'line 17, column cost_date: date/time field value out of range: "2024-02-31"'],
    [2, "1,2024-02-01,12.5x,1", 'line 2, column purchase_cost_usd: invalid input syntax for type numeric: "12.5x"'],
    [24, "1,2024-02-23,1,123456789012345678", "line 24, column warehouse_fees_usd: numeric field overflow"],
    [9, "777,2024-02-08,1,1", 'line 9, column product_id: insert or update on table "product_daily_costs" violates foreign key constraint "product_daily_costs_product_id_fkey"'],
    [13, ",2024-02-12,1,1", 'line 13, column product_id: null value in column "product_id" of relation "product_daily_costs" violates not-null constraint'],
  ])("a value PostgreSQL rejects on line %d is named by line and column, in batches of 5, and the whole file rolls back", async (line, bad, message) => {
    const error = await loadCsv(db.admin, "product_daily_costs", februaryWith(line, bad), { replace: false, batchSize: 5 }).catch((e) => e);
    expect(error).toBeInstanceOf(LoadError);
    expect(error.message).toBe(message);
    expect(await db.admin`select count(*)::int as n from product_daily_costs where cost_date >= '2024-02-01'`).toEqual([{ n: 0 }] as never);
  });

  test("the widest rows a table can hold load whole: a SKU and a name of 1,048,576 characters each, in batches", async () => {
    const sku = "s".repeat(1_048_576);
    const name = "n".repeat(1_048_575) + "é";
    const rows = [31, 32, 33, 34, 35].map((id) => `${id},${sku},"${name}"`).join("\n");
    expect(await loadCsv(db.admin, "products", `product_id,erp_sku,product_name\n${rows}\n`, { replace: false })).toEqual({ rows: 5, inserted: 5, updated: 0 });
    expect(await db.admin`select count(*)::int as n, min(length(erp_sku)) as sku, min(length(product_name)) as name, bool_and(right(product_name, 1) = 'é') as whole from products where product_id between 31 and 35`).toEqual([
      { n: 5, sku: 1_048_576, name: 1_048_576, whole: true },
    ] as never);
    await db.admin`delete from products where product_id between 31 and 35`;
  });

  test("a key twice in one file: the later line wins, as line by line", async () => {
    const text = "product_id,erp_sku\n9,first\n10,x\n9,second\n";
    expect(await loadCsv(db.admin, "products", text, { replace: false })).toEqual({ rows: 3, inserted: 2, updated: 1 });
    expect(await db.admin`select erp_sku from products where product_id = 9`).toEqual([{ erp_sku: "second" }] as never);
    await db.admin`delete from products where product_id in (9, 10)`;
  });

  test("pieces of any size read the same as the whole text", async () => {
    const text = 'product_id,product_name\r\n21,"two\r\nlines"\r\n22,"a, ""b"""\r\n';
    async function* pieces() {
      for (let i = 0; i < text.length; i += 3) yield text.slice(i, i + 3);
    }
    expect(await loadCsv(db.admin, "products", pieces(), { replace: false })).toEqual({ rows: 2, inserted: 2, updated: 0 });
    expect(await db.admin`select product_id, product_name from products where product_id >= 21 order by 1`).toEqual([
      { product_id: "21", product_name: "two\r\nlines" },
      { product_id: "22", product_name: 'a, "b"' },
    ] as never);
    await db.admin`delete from products where product_id >= 21`;
  });
});
