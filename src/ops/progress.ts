// Progress of a long command (migrate, refresh, load-csv) on stderr, for the person or the
// journal watching it. Not on a terminal: a plain line at most every two seconds per step,
// with the share done and an estimate of the time left, and the line that finishes a step
// (unless it was quick and the caller asked for quiet: quietWhenQuick). On a terminal: one line rewritten in place (a live bar), several times a second.

export interface Progress {
  /**
   * Reports that `done` of `total` units of `step` are done (`total` undefined: not known,
   * as for stdin). `detail` is added to the line (rows so far, for instance).
   */
  report(step: string, done: number, total: number | undefined, detail?: string): void;
  /** Ends the live line on a terminal (a no-op otherwise). */
  finish(): void;
}

export interface ProgressOptions {
  write?: (text: string) => void;
  /** A terminal: rewrite one line in place. Default: whether stderr is a terminal. */
  live?: boolean;
  everyMs?: number;
  /** How `done` and `total` are shown (bytes as MB, for instance). */
  unit?: (n: number) => string;
  /**
   * Not on a terminal: a step that ends within everyMs of its start writes no line at all (the
   * command's summary says what it did). For the refresh the timer runs every minute, whose
   * short steps would otherwise put a plain line among the journal's JSON each time.
   */
  quietWhenQuick?: boolean;
}

const BAR_WIDTH = 24;

export function progressLines(command: string, options: ProgressOptions = {}): Progress {
  const write = options.write ?? ((text: string) => process.stderr.write(text));
  const live = options.live ?? Boolean(process.stderr.isTTY);
  const everyMs = options.everyMs ?? (live ? 200 : 2000);
  const unit = options.unit ?? String;
  const started = new Map<string, number>();
  let lastLine = performance.now(); // the first line after everyMs, or when a step ends
  let open = false; // a live line is on the screen, not yet ended
  return {
    report(step, done, total, detail) {
      const now = performance.now();
      if (!started.has(step)) started.set(step, now);
      const finished = total !== undefined && done >= total;
      if (!finished && now - lastLine < everyMs) return;
      if (finished && !live && options.quietWhenQuick && now - started.get(step)! < everyMs) return;
      lastLine = now;
      const elapsed = (now - started.get(step)!) / 1000;
      let text: string;
      if (total === undefined) {
        text = `${command}: ${step}: ${unit(done)} in ${elapsed.toFixed(1)} s`;
      } else {
        const share = total > 0 ? Math.min(done / total, 1) : 1;
        const left = done > 0 && !finished ? `, about ${Math.ceil((elapsed / done) * (total - done))} s left` : "";
        const bar = live ? `[${"#".repeat(Math.round(share * BAR_WIDTH)).padEnd(BAR_WIDTH, ".")}] ` : "";
        text = `${command}: ${step}: ${bar}${Math.floor(share * 100)}% (${unit(done)} of ${unit(total)}) in ${elapsed.toFixed(1)} s${left}`;
      }
      if (detail) text += `, ${detail}`;
      if (!live) return write(text + "\n");
      // \r and "erase to the end of the line": the new text replaces the old.
      write(`\r\x1b[K${text}${finished ? "\n" : ""}`);
      open = !finished;
    },
    finish() {
      if (open) write("\n");
      open = false;
    },
  };
}

/**
 * For a step that is one SQL script: a line every `everyMs` saying it is still running and
 * for how long, with what `probe` can tell of it (an index build's share done, say). Returns
 * the function that stops it.
 */
export function heartbeat(
  command: string,
  step: string,
  options: { write?: (line: string) => void; everyMs?: number; probe?: () => Promise<string | undefined> } = {},
): () => void {
  const write = options.write ?? ((l: string) => process.stderr.write(l + "\n"));
  const started = performance.now();
  let stopped = false;
  const timer = setInterval(async () => {
    const seconds = Math.round((performance.now() - started) / 1000);
    // A probe that cannot answer soon (the embedded database's one session is busy with the
    // step itself) must not hold the line back.
    const detail = options.probe ? await Promise.race([options.probe().catch(() => undefined), Bun.sleep(1000).then(() => undefined)]) : undefined;
    if (!stopped) write(`${command}: ${step}: still running after ${seconds} s${detail ? `: ${detail}` : ""}`);
  }, options.everyMs ?? 5000);
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}

export interface IndexBuildProgress {
  command: string;
  phase: string;
  blocksDone: number;
  blocksTotal: number;
  tuplesDone: number;
  tuplesTotal: number;
}

/** pg_stat_progress_create_index as a progress detail: "create index: building index: scanning table, 45% (blocks 120 of 266)". */
export function indexBuildDetail(p: IndexBuildProgress): string {
  const [done, total, unit] = p.blocksTotal > 0 ? [p.blocksDone, p.blocksTotal, "blocks"] : [p.tuplesDone, p.tuplesTotal, "rows"];
  const share = total > 0 ? `, ${Math.floor((done / total) * 100)}% (${unit} ${done} of ${total})` : "";
  return `${p.command.toLowerCase()}: ${p.phase}${share}`;
}

/** Bytes as the progress line shows them. */
export function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}
