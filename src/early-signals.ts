// Imported first by main.ts (after production-mode.ts): a SIGHUP that arrives while `serve`
// is still starting is kept, not fatal. Node's default for SIGHUP ends the process (exit 129),
// and the service installs its reload handler only once its database is open and it listens:
// about 0.1 s on PostgreSQL, 3 s on the embedded database, so a `systemctl reload` right after
// `start` killed it (issue 42). Other commands keep the default: closing the terminal of a
// `migrate` by hand still stops it.

/** Whether argv (without node and the script) runs `serve`, the default command. */
function runsServe(argv: readonly string[]): boolean {
  const first = argv[0];
  return first === undefined || first === "serve" || (first.startsWith("-") && first !== "--version" && first !== "-v" && first !== "--help" && first !== "-h");
}

let pending = 0;
const keep = () => void pending++;
if (runsServe(process.argv.slice(2))) process.on("SIGHUP", keep);

/**
 * From now on `reload` handles SIGHUP; it runs once at once if one or more came while starting
 * (a reload reads the current files: one run stands for them all).
 */
export function takeOverSighup(reload: () => void): void {
  process.removeListener("SIGHUP", keep);
  process.on("SIGHUP", reload);
  if (pending > 0) {
    pending = 0;
    reload();
  }
}
