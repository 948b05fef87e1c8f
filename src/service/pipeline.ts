// GET /external/v1/product-costs, stage by stage: the one page that lists what a request goes
// through, in order. Each stage is a function in the folder of src/ it names; a failure is thrown as a value
// (src/failures.ts) and made into its response in one place, the request's exchange (exchange.ts:
// `failed`), reached through Elysia's error hook (edge/error-handler.ts).
//
//   edge        edge/server.ts, before Elysia: the target read once (never the Host header),
//               dot segments, sizes (414/431), the trailing-slash redirect (307)
//   key         key/api-keys.ts: 503 no key configured → 401 (unknown or expired key);
//               key/rate-limit.ts: 429
//   query       Elysia checks the query against the route's TypeBox schema (422 in Pydantic's
//               words); query/product-cost-params.ts: the question (each date parsed once), its
//               range (400)
//   plan        query/answer-key.ts: the answer's one key (the question, the format Accept
//               prefers); answer/answer-reads.ts: its reads, from the rollup or the daily rows
//   conditions  the answer's version, then answer/conditions.ts: 412 / 304, no row read
//   answer      answer/product-costs-answer.ts: the bytes kept for this version, or the rows
//               read (a rendered month, the rollup, the daily rows) and kept as they pass
//   encode      body/encode.ts: JSON or CSV; body/body.ts: gzip or brotli
//   send        body/body.ts: read ahead of a slow client, then at its pace; the exchange
//               logs the request once its last byte is sent
//
// Elysia runs the stages up to the query: its lifecycle orders them (`onTransform` and `derive`
// run before its query check, so an unauthenticated caller learns nothing of validation), and
// its schema is the one the document shows. The edge stays outside it: Elysia would read the
// target from the URL Bun repaired (dot segments resolved, the Host header in it) and answer a
// trailing slash as the route itself.

import { Elysia } from "elysia";
import { presentedKey, refuseExpired, type ApiKeyRing } from "../key/api-keys.ts";
import type { RateLimiter } from "../key/rate-limit.ts";
import { checkedQuestion, lastValues, ProductCostsQuery } from "../query/product-cost-params.ts";
import { answerKey, chooseEncoding, preferredRowFormat, type AnswerKey } from "../query/answer-key.ts";
import type { AnswerReads } from "../answer/answer-reads.ts";
import { notModifiedFor } from "../answer/conditions.ts";
import { sendAnswer, type AnswerParts } from "../answer/product-costs-answer.ts";
import { exchangeOf } from "../request/exchange.ts";
import { PRODUCT_COSTS_PATH } from "../edge/routes.ts";
import { PRODUCT_COSTS_RESPONSES } from "./api-docs.ts";

/** What the stages use, each given only its own. */
export interface PipelineParts {
  /** The active keys; a function so that SIGHUP can swap them without a restart. */
  keys: () => ApiKeyRing;
  /** Per-key requests per minute (429 RATE_LIMITED). */
  rateLimiter: RateLimiter;
  /** MAX_RANGE_DAYS (0: no limit). */
  maxRangeDays: number;
  /** The reads of one request's answer (answer/answer-reads.ts). */
  reads: (key: AnswerKey, signal: AbortSignal, requestId: string) => AnswerReads;
  /** The answer cache, the build, the read-ahead budget (answer/product-costs-answer.ts). */
  answer: AnswerParts;
}

/** The endpoint's route: its stages in the order they run. */
export function productCostsPipeline(parts: PipelineParts) {
  return (
    new Elysia()
      // edge: the request's own state (its exchange, made in edge/server.ts), a value every
      // stage below is given; the query read as Starlette reads it, from the target the edge read
      // (Elysia's own parse differs on `??`, `#`, bad escapes).
      .onTransform((ctx) => {
        ctx.query = Object.fromEntries(lastValues(exchangeOf(ctx.request).target.query));
      })
      .derive(({ request }) => ({ exchange: exchangeOf(request) }))
      // key
      .derive(({ request, exchange }) => {
        const key = (exchange.key = presentedKey(parts.keys(), request.headers.get("authorization")));
        refuseExpired(key, Date.now());
        exchange.rateLimit = parts.rateLimiter.take(key.fingerprint, key.ratePerMinute);
        return {};
      })
      .get(
        PRODUCT_COSTS_PATH,
        async ({ request, query, exchange }) => {
          // query: the parameters the schema accepted (a 422 otherwise), as the question; its range
          const question = checkedQuestion(query, parts.maxRangeDays);
          // plan
          const key = (exchange.answer = answerKey(question, preferredRowFormat(request.headers.get("accept"))));
          const reads = parts.reads(key, exchange.signal, exchange.id);
          // conditions: the answer's version (null: the daily rows answer), then 412 / 304
          const versioned = await reads.version();
          const wanted = chooseEncoding(request.headers.get("accept-encoding"));
          const unchanged = notModifiedFor(request.headers, key, versioned, parts.answer.build, wanted);
          if (unchanged) return unchanged;
          // answer, encode, send
          return await sendAnswer(parts.answer, { key, reads, versioned, wanted, exchange });
        },
        {
          query: ProductCostsQuery,
          detail: {
            operationId: "listProductCosts",
          summary: "List product costs",
            description:
              "Four cost columns per product, summed over the inclusive date range [month_from, month_to]. " +
              "null means not costed; 0 is a costed zero.",
            security: [{ bearerAuth: [] }],
            tags: ["product costs"],
            // Written out (not derived from a `response` map) so that each status lists the
            // content types actually sent: the 200 is JSON or CSV, every error is JSON.
            responses: PRODUCT_COSTS_RESPONSES,
          },
        },
      )
  );
}
