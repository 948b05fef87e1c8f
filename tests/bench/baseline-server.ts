// The benchmark's floor for the service's own overhead: a minimal Bun.serve + postgres.js
// handler running the same SQL (src/reads/product-costs.ts chooses it: an exact period's
// rendered answer when there is one, else the rows) with the same pool settings, writing
// the same bytes. No Elysia, no validation, no auth, no admission control, no logging, no
// cursor (the whole result in one round trip).
//
//   DATABASE_URL=postgres://... PORT=0 bun tests/bench/baseline-server.ts
// Prints one JSON line {"msg":"listening","url":...} once it listens.

import { createPool } from "../../src/database/client.ts";
import type { ProductCostRow } from "../../src/reads/answer-rows.ts";
import { productCostsStatement, renderedAnswerStatement } from "../../src/reads/product-costs.ts";
import type { ProductCostQuery } from "../../src/query/product-cost-params.ts";
import { rowsJson } from "../../src/body/encode.ts";

const sql = createPool({
  url: process.env.DATABASE_URL,
  max: Number(process.env.DB_POOL_MAX ?? 10), // the service's default
  connectTimeoutMs: 5000,
  statementTimeoutMs: 30000,
  readOnly: true,
  applicationName: "pce-bench-baseline",
});

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(process.env.PORT ?? 0),
  idleTimeout: 120,
  async fetch(request) {
    const params = new URL(request.url).searchParams;
    const q: ProductCostQuery = {
      monthFrom: params.get("month_from")!,
      monthTo: params.get("month_to")!,
      segment: (params.get("segment") ?? "normal") as ProductCostQuery["segment"],
    };
    const rendered = renderedAnswerStatement(q);
    if (rendered) {
      const chunks = await sql.unsafe(rendered.text, rendered.params).raw(); // [rows, body] each
      if (chunks.length > 0) {
        return new Response(Buffer.concat([Buffer.from("["), ...chunks.map(([, body]) => body!), Buffer.from("]")]), { headers: { "content-type": "application/json" } });
      }
    }
    const statement = productCostsStatement(q);
    const rows: ProductCostRow[] = await sql.unsafe(statement.text, statement.params).raw();
    return new Response(Buffer.concat([rowsJson(rows, "["), Buffer.from("]")]), { headers: { "content-type": "application/json" } });
  },
});

console.log(JSON.stringify({ msg: "listening", url: server.url.toString() }));
process.on("SIGTERM", async () => {
  server.stop(true);
  await sql.end({ timeout: 2 });
  process.exit(0);
});
