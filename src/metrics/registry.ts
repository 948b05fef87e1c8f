// A minimal Prometheus registry: counters, gauges read at scrape time, and histograms,
// written in the text exposition format 0.0.4. It is small enough to own: prom-client would
// bring a dependency and Node-specific default collectors, where three kinds of metric do.
// Series are written sorted by their labels, so the same state always renders the same text.

export type Labels = Readonly<Record<string, string>>;

export const PROMETHEUS_TEXT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

function escapeLabelValue(value: string): string {
  return value.replaceAll("\\", "\\\\").replaceAll("\n", "\\n").replaceAll('"', '\\"');
}

function escapeHelp(help: string): string {
  return help.replaceAll("\\", "\\\\").replaceAll("\n", "\\n");
}

function labelText(labels: Labels, extra?: [string, string]): string {
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabelValue(v)}"`);
  if (extra) pairs.push(`${extra[0]}="${escapeLabelValue(extra[1])}"`);
  return pairs.length ? `{${pairs.join(",")}}` : "";
}

function formatNumber(n: number): string {
  if (Number.isNaN(n)) return "NaN";
  if (n === Infinity) return "+Inf";
  if (n === -Infinity) return "-Inf";
  return String(n);
}

interface Metric {
  name: string;
  help: string;
  type: "counter" | "gauge" | "histogram";
  lines(): string[];
}

export class Counter {
  private readonly series = new Map<string, number>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  inc(labels: Labels = {}, by = 1): void {
    const key = labelText(labels);
    this.series.set(key, (this.series.get(key) ?? 0) + by);
  }

  lines(): string[] {
    return [...this.series.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([l, v]) => `${this.name}${l} ${formatNumber(v)}`);
  }
}

/** A gauge (or a counter kept elsewhere, such as CPU time) whose values are read when scraped. */
export class Sampled {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: "gauge" | "counter",
    private readonly read: () => readonly [Labels, number][],
  ) {}

  lines(): string[] {
    return this.read().map(([labels, v]) => `${this.name}${labelText(labels)} ${formatNumber(v)}`);
  }
}

export class Histogram {
  private readonly series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    /** Upper bounds, ascending; +Inf is implied. */
    readonly buckets: readonly number[],
  ) {}

  observe(labels: Labels, value: number): void {
    const key = labelText(labels);
    let s = this.series.get(key);
    if (!s) {
      s = { labels, counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.series.set(key, s);
    }
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]!) s.counts[i]!++;
    s.sum += value;
    s.count++;
  }

  lines(): string[] {
    const out: string[] = [];
    const keys = [...this.series.keys()].sort();
    for (const key of keys) {
      const s = this.series.get(key)!;
      this.buckets.forEach((le, i) => out.push(`${this.name}_bucket${labelText(s.labels, ["le", formatNumber(le)])} ${s.counts[i]}`));
      out.push(`${this.name}_bucket${labelText(s.labels, ["le", "+Inf"])} ${s.count}`);
      out.push(`${this.name}_sum${key} ${formatNumber(s.sum)}`);
      out.push(`${this.name}_count${key} ${s.count}`);
    }
    return out;
  }
}

export class Registry {
  private readonly metrics: Metric[] = [];

  private add<M extends Counter | Sampled | Histogram>(metric: M, type: Metric["type"]): M {
    if (this.metrics.some((m) => m.name === metric.name)) throw new Error(`metric ${metric.name} registered twice`);
    this.metrics.push({ name: metric.name, help: metric.help, type, lines: () => metric.lines() });
    return metric;
  }

  counter(name: string, help: string): Counter {
    return this.add(new Counter(name, help), "counter");
  }

  /** A gauge read at scrape time. */
  gauge(name: string, help: string, read: () => readonly [Labels, number][]): Sampled {
    return this.add(new Sampled(name, help, "gauge", read), "gauge");
  }

  /** A counter whose total is kept elsewhere and read at scrape time. */
  counterOf(name: string, help: string, read: () => readonly [Labels, number][]): Sampled {
    return this.add(new Sampled(name, help, "counter", read), "counter");
  }

  histogram(name: string, help: string, buckets: readonly number[]): Histogram {
    return this.add(new Histogram(name, help, buckets), "histogram");
  }

  /** The exposition text: HELP and TYPE for every family, then its samples; ends with a newline. */
  render(): string {
    const out: string[] = [];
    for (const m of this.metrics) {
      out.push(`# HELP ${m.name} ${escapeHelp(m.help)}`, `# TYPE ${m.name} ${m.type}`, ...m.lines());
    }
    return out.join("\n") + "\n";
  }
}
