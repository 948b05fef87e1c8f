// The monitoring files in docs/monitoring name only metrics the service exports, so that an
// alert can never be silent because of a typo or a renamed metric.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { createServiceMetrics } from "../../src/service/service-metrics.ts";

const dir = resolve(import.meta.dir, "../../docs/monitoring");
const exported = new Set(
  (await createServiceMetrics({ version: "1.2.3", commit: "abc" }).render())
    .split("\n")
    .filter((l) => l.startsWith("# TYPE "))
    .map((l) => l.split(" ")[2]!),
);

/** The metric families an expression reads (histogram series by their family's name). */
function metricsIn(expr: string): string[] {
  return [...expr.matchAll(/\b((?:product_cost_export|process)_[a-z_]+)/g)].map((m) => m[1]!.replace(/_(bucket|sum|count)$/, ""));
}

test("every alert rule is complete and reads metrics that exist", () => {
  const rules = (Bun.YAML.parse(readFileSync(`${dir}/alerts.yml`, "utf8")) as { groups: { rules: Record<string, any>[] }[] }).groups.flatMap((g) => g.rules);
  expect(rules.length).toBeGreaterThanOrEqual(6);
  for (const rule of rules) {
    expect([rule.alert, typeof rule.expr, typeof rule.annotations?.summary, typeof rule.labels?.severity]).toEqual([rule.alert, "string", "string", "string"]);
    const names = metricsIn(rule.expr);
    expect([rule.alert, names.length > 0 || rule.expr.startsWith("up{")]).toEqual([rule.alert, true]);
    for (const name of names) expect([rule.alert, name, exported.has(name)]).toEqual([rule.alert, name, true]);
  }
});

test("every panel of the Grafana dashboard queries metrics that exist", () => {
  const dashboard = JSON.parse(readFileSync(`${dir}/grafana-dashboard.json`, "utf8")) as { panels: { title: string; targets: { expr: string }[] }[] };
  expect(dashboard.panels.length).toBeGreaterThanOrEqual(6);
  for (const panel of dashboard.panels) {
    for (const { expr } of panel.targets) {
      const names = metricsIn(expr);
      expect([panel.title, names.length > 0]).toEqual([panel.title, true]);
      for (const name of names) expect([panel.title, name, exported.has(name)]).toEqual([panel.title, name, true]);
    }
  }
});
