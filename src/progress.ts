// Progress of a long command (migrate, refresh, load-csv) on stderr, for the person or the
// journal watching it: a plain line at most every two seconds per step, with the share done
// and an estimate of the time left, and always the line that finishes a step.

export interface Progress {
  /** Reports that `done` of `total` units of `step` are done. */
  report(step: string, done: number, total: number): void;
}

export function progressLines(command: string, write: (line: string) => void = (l) => process.stderr.write(l + "\n"), everyMs = 2000): Progress {
  const started = new Map<string, number>();
  let lastLine = 0;
  return {
    report(step, done, total) {
      const now = performance.now();
      if (!started.has(step)) started.set(step, now);
      const finished = done >= total;
      if (!finished && now - lastLine < everyMs) return;
      lastLine = now;
      const elapsed = (now - started.get(step)!) / 1000;
      const percent = total > 0 ? Math.floor((done / total) * 100) : 100;
      const left = done > 0 && !finished ? `, about ${Math.ceil((elapsed / done) * (total - done))} s left` : "";
      write(`${command}: ${step}: ${percent}% (${done} of ${total}) in ${elapsed.toFixed(1)} s${left}`);
    },
  };
}

/**
 * For a step whose progress cannot be measured (one SQL statement): a line every `everyMs`
 * saying it is still running and for how long. Returns the function that stops it.
 */
export function heartbeat(command: string, step: string, write: (line: string) => void = (l) => process.stderr.write(l + "\n"), everyMs = 5000): () => void {
  const started = performance.now();
  const timer = setInterval(() => write(`${command}: ${step}: still running after ${Math.round((performance.now() - started) / 1000)} s`), everyMs);
  return () => clearInterval(timer);
}
