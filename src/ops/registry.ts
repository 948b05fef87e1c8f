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

type Sample = readonly [Labels, number];

interface Family {
  name: string;
  help: string;
  type: "counter" | "gauge" | "histogram";
  lines(): string[];
}

/** A map's entries sorted by their label text: the same state always renders the same lines. */
const sorted = <T>(series: Map<string, T>) => [...series.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** The lines of a family whose samples are read when scraped. */
const sampled = (name: string, read: () => readonly Sample[]) => () =>
  read().map(([labels, v]) => `${name}${labelText(labels)} ${formatNumber(v)}`);

export class Registry {
  private readonly families: Family[] = [];

  private add(name: string, help: string, type: Family["type"], lines: () => string[]): void {
    if (this.families.some((f) => f.name === name)) throw new Error(`metric ${name} registered twice`);
    this.families.push({ name, help, type, lines });
  }

  counter(name: string, help: string) {
    const series = new Map<string, number>();
    this.add(name, help, "counter", () => sorted(series).map(([l, v]) => `${name}${l} ${formatNumber(v)}`));
    return {
      inc(labels: Labels = {}, by = 1): void {
        const key = labelText(labels);
        series.set(key, (series.get(key) ?? 0) + by);
      },
    };
  }

  /** A gauge read at scrape time. */
  gauge(name: string, help: string, read: () => readonly Sample[]): void {
    this.add(name, help, "gauge", sampled(name, read));
  }

  /** A counter whose total is kept elsewhere (such as CPU time) and read at scrape time. */
  counterOf(name: string, help: string, read: () => readonly Sample[]): void {
    this.add(name, help, "counter", sampled(name, read));
  }

  /** `buckets`: upper bounds, ascending; +Inf is implied. */
  histogram(name: string, help: string, buckets: readonly number[]) {
    const series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
    this.add(name, help, "histogram", () =>
      sorted(series).flatMap(([key, s]) => [
        ...buckets.map((le, i) => `${name}_bucket${labelText(s.labels, ["le", formatNumber(le)])} ${s.counts[i]}`),
        `${name}_bucket${labelText(s.labels, ["le", "+Inf"])} ${s.count}`,
        `${name}_sum${key} ${formatNumber(s.sum)}`,
        `${name}_count${key} ${s.count}`,
      ]),
    );
    return {
      observe(labels: Labels, value: number): void {
        const key = labelText(labels);
        let s = series.get(key);
        if (!s) series.set(key, (s = { labels, counts: buckets.map(() => 0), sum: 0, count: 0 }));
        for (let i = 0; i < buckets.length; i++) if (value <= buckets[i]!) s.counts[i]!++;
        s.sum += value;
        s.count++;
      },
    };
  }

  /** The exposition text: HELP and TYPE for every family, then its samples; ends with a newline. */
  render(): string {
    const out: string[] = [];
    for (const m of this.families) {
      out.push(`# HELP ${m.name} ${escapeHelp(m.help)}`, `# TYPE ${m.name} ${m.type}`, ...m.lines());
    }
    return out.join("\n") + "\n";
  }
}
