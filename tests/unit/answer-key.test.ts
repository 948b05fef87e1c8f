// The answer key (src/query/answer-key.ts): one key per question and representation, made
// once, and the only source of the cache key, the version read's key, the ETags and the CSV
// file name. A parameter of the route's schema that does not change all of them would serve
// one question's cached answer (or 304) to another.

import { describe, expect, test } from "bun:test";
import type { Static } from "@sinclair/typebox";
import type { ProductCostQuery } from "../../src/query/product-cost-params.ts";
import { answerKey, QUERY_FIELDS } from "../../src/query/answer-key.ts";
import { ProductCostsQuery } from "../../src/query/product-cost-params.ts";

const query: ProductCostQuery = { monthFrom: "2026-10-01", monthTo: "2026-10-31", segment: "normal" };
const BUILD = "0.1.0 abc";
const VERSION = "16400.7.0.1";

/** Another valid value of each parameter of the route (a parameter missing here is a type error). */
const OTHER: Record<keyof Static<typeof ProductCostsQuery>, string> = { month_from: "2026-10-02", month_to: "2026-10-30", segment: "all" };

const named = (key: ReturnType<typeof answerKey>) => ({ cached: key.cached, fileName: key.fileName, tag: key.tags(BUILD, VERSION)(null) });

describe("the answer key", () => {
  test("names every parameter of the route's schema, in its order", () => {
    expect(Object.keys(QUERY_FIELDS)).toEqual(Object.keys(ProductCostsQuery.properties));
  });

  test.each(Object.keys(ProductCostsQuery.properties))("a change of %s alone changes the cache key, the file name and the ETag", (parameter) => {
    const field = QUERY_FIELDS[parameter as keyof typeof QUERY_FIELDS];
    expect(field).toBeDefined();
    const changed = { ...query, [field]: OTHER[parameter as keyof typeof OTHER] };
    const before = named(answerKey(query, "csv"));
    const after = named(answerKey(changed, "csv"));
    expect(after.cached).not.toBe(before.cached);
    expect(after.fileName).not.toBe(before.fileName);
    expect(after.tag).not.toBe(before.tag);
  });

  test("the same question and format: the same keys, whoever makes them", () => {
    expect(named(answerKey({ ...query }, "json"))).toEqual(named(answerKey(query, "json")));
  });

  test("the values it is made of, as the headers and the cache use them", () => {
    const key = answerKey(query, "csv");
    expect(key.cached).toBe("csv 2026-10-01 2026-10-31 normal");
    expect(key.fileName).toBe("product-costs_2026-10-01_2026-10-31_normal.csv");
    expect(key.range).toEqual({ firstDay: "2026-10-01", lastDay: "2026-10-31", id: "2026-10-01 2026-10-31" });
  });

  test("the version read's key is the range alone: one read serves every segment and format", () => {
    const ids = new Set([answerKey(query, "json"), answerKey({ ...query, segment: "all" }, "csv"), answerKey({ ...query, segment: "sample" }, "json")].map((k) => k.range.id));
    expect(ids.size).toBe(1);
  });

  test("the format changes the cache key and the ETag", () => {
    expect(answerKey(query, "csv").cached).not.toBe(answerKey(query, "json").cached);
    expect(answerKey(query, "csv").tags(BUILD, VERSION)(null)).not.toBe(answerKey(query, "json").tags(BUILD, VERSION)(null));
  });
});

describe("entity tags", () => {
  test("one state for one build, version and question; another for any difference", () => {
    const tag = answerKey(query, "json").tags(BUILD, VERSION)(null);
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{22}-json"$/);
    expect(answerKey(query, "json").tags("0.1.1 abc", VERSION)(null)).not.toBe(tag);
    expect(answerKey(query, "json").tags(BUILD, "16400.8.0.1")(null)).not.toBe(tag);
  });

  test("each format and content coding has its own strong tag", () => {
    const json = answerKey(query, "json").tags(BUILD, VERSION);
    const csv = answerKey(query, "csv").tags(BUILD, VERSION);
    const tags = [json(null), json("br"), json("gzip"), csv(null), csv("gzip")];
    expect(new Set(tags).size).toBe(5);
    const state = tags[0]!.slice(1, 23);
    expect(tags[1]).toBe(`"${state}-json-br"`);
    expect(tags[4]).toBe(`"${state}-csv-gzip"`);
    expect(tags.every((t) => /^"[\x21\x23-\x7e]+"$/.test(t))).toBe(true);
  });
});
