// A key file as its writer left it. `cp` over the old file, or an editor that saves in place,
// truncates it and writes it in pieces: read meanwhile, it holds some of its keys and a piece
// of one (issue 42: reloads took 1,075, 2,132 and 3,189 keys of a 4,001-key file, and a valid
// key was refused). So a reload reads a file only once it has not changed for SETTLE_MS (its
// ctime, which every write and rename moves and no tool sets back), and again if it changed
// while it was read; past TIMEOUT_MS of changes it gives up, and the previous keys stay.
// A file replaced whole (written beside it, then `mv`) is read as soon as it is there.

import type { Stats } from "node:fs";
import { ConfigError } from "../settings/config.ts";
import { readOperatorFile, statOperatorFile } from "../settings/operator-file.ts";
import { keyFileUnreadable, type KeyFileContent } from "./api-keys.ts";

export const SETTLE_MS = 500;
export const TIMEOUT_MS = 5000;

const same = (a: Stats, b: Stats) => a.ino === b.ino && a.size === b.size && a.ctimeMs === b.ctimeMs && a.mtimeMs === b.mtimeMs;

function statOf(file: string): Stats {
  try {
    // A FIFO or a device is refused here at once, not after waiting for it to settle.
    return statOperatorFile(file);
  } catch (err) {
    throw keyFileUnreadable(file, err);
  }
}

/** `file`'s content once it has stopped changing (see above), or a ConfigError saying why not. */
export async function readSettled(file: string, settleMs = SETTLE_MS, timeoutMs = TIMEOUT_MS): Promise<KeyFileContent> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const before = statOf(file);
    const quietFor = Date.now() - before.ctimeMs;
    if (quietFor >= settleMs) {
      let text: string;
      try {
        text = readOperatorFile(file).content.toString("utf8");
      } catch (err) {
        throw keyFileUnreadable(file, err);
      }
      if (same(before, statOf(file))) return { text, mode: before.mode };
    }
    if (Date.now() >= deadline) {
      throw new ConfigError(
        `API key file ${file} kept changing for ${timeoutMs / 1000} s (or changed while it was read): replace it whole (write a new file, then mv it over the old one), then reload`,
      );
    }
    await Bun.sleep(quietFor >= settleMs ? 20 : Math.min(settleMs - Math.max(quietFor, 0), deadline - Date.now()) + 1);
  }
}
