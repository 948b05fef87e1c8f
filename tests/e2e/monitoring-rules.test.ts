// The monitoring files as Prometheus reads them (issue 46): promtool accepts the alert rules
// and the executable's /metrics; the rules for an outage nobody sends traffic through
// (ProductCostExportNotReady) and for a certificate about to expire fire on the series the
// executable exports, with the labels it gives them, and stay quiet otherwise.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { isolatedBinary, startBinary, type RunningBinary } from "../support/binary.ts";
import { promtool } from "../support/promtool.ts";

const RULES = resolve(import.meta.dir, "../../docs/monitoring/alerts.yml");
let work: string;
let bin: { dir: string; path: string };
let server: RunningBinary;
let metrics: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "pce-promtool-"));
  bin = isolatedBinary();
  // HTTPS with a certificate, and a database that is not there: not ready, with no traffic.
  const made = Bun.spawnSync(
    ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
      "-keyout", join(work, "key.pem"), "-out", join(work, "cert.pem")],
    { stderr: "pipe" },
  );
  if (made.exitCode !== 0) throw new Error(`openssl failed: ${made.stderr.toString()}`);
  server = await startBinary(
    bin.path,
    { DATABASE_URL: "postgres://postgres@127.0.0.1:1/nowhere", PRODUCT_COST_API_KEYS: "promtool-key-4c2a9e", TLS_CERT_FILE: join(work, "cert.pem"), TLS_KEY_FILE: join(work, "key.pem") },
    [],
    bin.dir,
  );
  const res = await fetch(server.url + "/metrics", { tls: { ca: readFileSync(join(work, "cert.pem"), "utf8") } });
  metrics = await res.text();
}, 120_000);

afterAll(async () => {
  await server?.stop();
  rmSync(work, { recursive: true, force: true });
});

const run = (...args: string[]) => {
  const r = Bun.spawnSync([promtool(), ...args], { cwd: work, stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, out: (r.stdout.toString() + r.stderr.toString()).trim() };
};

/** The one sample of `name` in the scrape: its labels and value. */
function sampleOf(name: string): { labels: string; value: number } {
  const line = metrics.split("\n").find((l) => l.startsWith(name + "{") || l.startsWith(name + " "));
  if (!line) throw new Error(`${name} is not in /metrics`);
  const m = /^[^{ ]+(\{[^}]*\})? (\S+)$/.exec(line)!;
  return { labels: m[1] ?? "{}", value: Number(m[2]) };
}

describe("promtool", () => {
  test("check rules: docs/monitoring/alerts.yml is valid, all 12 rules", () => {
    expect(run("check", "rules", RULES)).toEqual({ code: 0, out: `Checking ${RULES}\n  SUCCESS: 12 rules found` });
  }, 120_000);

  test("check metrics: the executable's /metrics, not ready and over HTTPS, has no problem", () => {
    writeFileSync(join(work, "metrics.txt"), metrics);
    const r = Bun.spawnSync(["sh", "-c", `"${promtool()}" check metrics < metrics.txt`], { cwd: work, stdout: "pipe", stderr: "pipe" });
    expect({ code: r.exitCode, out: (r.stdout.toString() + r.stderr.toString()).trim() }).toEqual({ code: 0, out: "" });
  });

  test("the outage and expiry rules fire on the exported series (not ready 2 minutes; expiry within 14 days), and not otherwise", () => {
    const notReady = sampleOf("product_cost_export_not_ready");
    expect(notReady).toEqual({ labels: '{problem="DATABASE_UNAVAILABLE"}', value: 1 });
    expect(sampleOf("product_cost_export_ready")).toEqual({ labels: "{}", value: 0 });
    const expiry = sampleOf("product_cost_export_tls_certificate_expiry_timestamp_seconds");
    expect(Math.abs(expiry.value - Date.now() / 1000 - 2 * 86400)).toBeLessThan(600);
    // As Prometheus scrapes it (job and instance added), on promtool's clock (from time 0):
    // a certificate 2 days from expiry on one instance, 30 on another. (JSON is YAML.)
    const target = (instance: string, labels: string) => `{job="product-cost-export",instance="${instance}"${labels === "{}" ? "" : "," + labels.slice(1, -1)}}`;
    const series = (name: string, labels: string, instance: string, values: string) => ({ series: name + target(instance, labels), values });
    const unitTest = {
      rule_files: [RULES],
      evaluation_interval: "1m",
      tests: [
        {
          interval: "1m",
          input_series: [
            series("product_cost_export_not_ready", notReady.labels, "a:8080", "1x10"),
            series("product_cost_export_tls_certificate_expiry_timestamp_seconds", expiry.labels, "a:8080", `${2 * 86400}x120`),
            series("product_cost_export_tls_certificate_expiry_timestamp_seconds", expiry.labels, "b:8080", `${30 * 86400}x120`),
            // An API key 5 days from its expires= on one instance, 60 on another.
            series("product_cost_export_api_key_nearest_expiry_timestamp_seconds", "{}", "a:8080", `${5 * 86400}x120`),
            series("product_cost_export_api_key_nearest_expiry_timestamp_seconds", "{}", "b:8080", `${60 * 86400}x120`),
          ],
          alert_rule_test: [
            { eval_time: "1m", alertname: "ProductCostExportNotReady", exp_alerts: [] },
            {
              eval_time: "5m",
              alertname: "ProductCostExportNotReady",
              exp_alerts: [
                {
                  exp_labels: { severity: "page", instance: "a:8080", problem: "DATABASE_UNAVAILABLE" },
                  exp_annotations: {
                    summary: "product-cost-export on a:8080 is not ready: DATABASE_UNAVAILABLE",
                    description:
                      "Every API request answers 503 now, with or without traffic (the gauge is read at each scrape). GET /readyz names the cause and its fix; the README's Troubleshooting table lists each problem.",
                  },
                },
              ],
            },
            {
              eval_time: "90m",
              alertname: "ProductCostExportCertificateExpiring",
              exp_alerts: [
                {
                  exp_labels: { severity: "ticket", job: "product-cost-export", instance: "a:8080" },
                  exp_annotations: {
                    summary: "The HTTPS certificate of product-cost-export on a:8080 expires in 1d 22h 30m 0s",
                    description:
                      "Put the renewed tls-cert.pem and tls-key.pem in /etc/product-cost-export, then `systemctl restart product-cost-export` (the certificate is read at start: a reload does not change it).",
                  },
                },
              ],
            },
            {
              eval_time: "90m",
              alertname: "ProductCostExportApiKeyExpiring",
              exp_alerts: [
                {
                  exp_labels: { severity: "ticket", job: "product-cost-export", instance: "a:8080" },
                  exp_annotations: {
                    summary: "An API key of product-cost-export on a:8080 expires in 4d 22h 30m 0s",
                    description:
                      "`product-cost-export list-keys` names it (STATE expiring). Give its client a new key (`generate-key --label NAME`, its line into the key file, `systemctl reload product-cost-export`), then remove the old line: an expired key answers 401.",
                  },
                },
              ],
            },
          ],
        },
      ],
    };
    writeFileSync(join(work, "alerts.test.yml"), JSON.stringify(unitTest, null, 2));
    const r = run("test", "rules", "alerts.test.yml");
    expect(r).toEqual({ code: 0, out: "Unit Testing:  alerts.test.yml\n  SUCCESS" });
  });
});
