import { describe, expect, test } from "bun:test";
import { Registry } from "../../src/ops/registry.ts";

describe("the metrics registry writes the Prometheus text format 0.0.4", () => {
  test("counters: HELP, TYPE, then one line per label set, sorted", () => {
    const r = new Registry();
    const c = r.counter("requests_total", "Requests.");
    c.inc({ route: "/b", status: "200" });
    c.inc({ route: "/a", status: "200" }, 2);
    c.inc({ route: "/b", status: "200" });
    expect(r.render()).toBe(
      "# HELP requests_total Requests.\n" +
        "# TYPE requests_total counter\n" +
        'requests_total{route="/a",status="200"} 2\n' +
        'requests_total{route="/b",status="200"} 2\n',
    );
  });

  test("a counter without labels, and a family with no samples yet, are still declared", () => {
    const r = new Registry();
    r.counter("empty_total", "Nothing yet.");
    r.counter("plain_total", "No labels.").inc();
    expect(r.render()).toBe("# HELP empty_total Nothing yet.\n# TYPE empty_total counter\n# HELP plain_total No labels.\n# TYPE plain_total counter\nplain_total 1\n");
  });

  test("label values and help text are escaped", () => {
    const r = new Registry();
    r.counter("odd_total", "Back\\slash\nnewline").inc({ v: 'a"b\\c\nd' });
    expect(r.render()).toBe('# HELP odd_total Back\\\\slash\\nnewline\n# TYPE odd_total counter\nodd_total{v="a\\"b\\\\c\\nd"} 1\n');
  });

  test("gauges and scrape-time counters are read when rendered", () => {
    const r = new Registry();
    let n = 1;
    r.gauge("pool", "Pool.", () => [[{ state: "in_use" }, n], [{ state: "idle" }, 10 - n]]);
    r.counterOf("cpu_seconds_total", "CPU.", () => [[{}, 0.5]]);
    n = 3;
    expect(r.render()).toBe(
      "# HELP pool Pool.\n# TYPE pool gauge\npool{state=\"in_use\"} 3\npool{state=\"idle\"} 7\n" +
        "# HELP cpu_seconds_total CPU.\n# TYPE cpu_seconds_total counter\ncpu_seconds_total 0.5\n",
    );
  });

  test("histograms: cumulative buckets with le, +Inf, _sum and _count", () => {
    const r = new Registry();
    const h = r.histogram("latency_seconds", "Latency.", [0.1, 1]);
    h.observe({ route: "/x" }, 0.05);
    h.observe({ route: "/x" }, 0.1);
    h.observe({ route: "/x" }, 0.5);
    h.observe({ route: "/x" }, 2);
    expect(r.render()).toBe(
      "# HELP latency_seconds Latency.\n# TYPE latency_seconds histogram\n" +
        'latency_seconds_bucket{route="/x",le="0.1"} 2\n' +
        'latency_seconds_bucket{route="/x",le="1"} 3\n' +
        'latency_seconds_bucket{route="/x",le="+Inf"} 4\n' +
        'latency_seconds_sum{route="/x"} 2.65\n' +
        'latency_seconds_count{route="/x"} 4\n',
    );
  });

  test("a name registered twice is refused", () => {
    const r = new Registry();
    r.counter("x_total", "X.");
    expect(() => r.counter("x_total", "X again.")).toThrow("metric x_total registered twice");
  });
});
