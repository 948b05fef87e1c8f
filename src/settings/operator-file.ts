// The files an operator names to the service (API key files, DATABASE_URL_FILE and the
// credentials, TLS_CERT_FILE/TLS_KEY_FILE, the URL's sslrootcert/sslcert/sslkey, and what
// stage-files copies), read the one way that cannot hang it. readFileSync reads until the end
// of the file: on a FIFO with no writer it blocked the process for good (at start nothing
// listened or logged; on SIGHUP the event loop stopped, so /healthz, the API and SIGTERM went
// unanswered), and /dev/zero has no end (5.5 GB before it was killed; issue 52).
//
// So such a file must be a regular file: checked on its status before it is opened (a device
// is never opened: opening some has effects of their own), and again on the opened descriptor,
// which is opened O_NONBLOCK so that a FIFO put in its place between the two cannot block the
// open; then it is read up to OPERATOR_FILE_MAX_BYTES and no further, in case it grows.
//
// The bound: the largest of these files is a key file, and 100,000 keys written as sha256:
// digests with a label of the longest kept (64 characters), 139 bytes a line, are 13.9 MB. A
// URL or a certificate chain is a few KB. A larger file is not what the setting meant (a log, a
// dump, an image named by mistake), and reading it would only grow the heap.

import { closeSync, constants, fstatSync, openSync, readSync, statSync, type Stats } from "node:fs";

export const OPERATOR_FILE_MAX_BYTES = 16 * 1024 * 1024;

export class OperatorFileError extends Error {
  override name = "OperatorFileError";
}

function kindOf(stats: Stats): string {
  if (stats.isFIFO()) return "a FIFO";
  if (stats.isCharacterDevice()) return "a character device";
  if (stats.isBlockDevice()) return "a block device";
  if (stats.isSocket()) return "a socket";
  return "a special file";
}

function refuseIrregular(stats: Stats): void {
  if (stats.isFile()) return;
  // As the system says it when a directory is read (the word these errors always had for one).
  if (stats.isDirectory()) throw Object.assign(new OperatorFileError("EISDIR"), { code: "EISDIR" });
  throw new OperatorFileError(`not a regular file (${kindOf(stats)})`);
}

/** `path`'s status (links followed), or a throw when it is no regular file. */
export function statOperatorFile(path: string): Stats {
  const stats = statSync(path);
  refuseIrregular(stats);
  return stats;
}

/** `path`'s content and the status of the file read, or a throw (see above) whose fileProblem() says why not. */
export function readOperatorFile(path: string): { content: Buffer; stats: Stats } {
  statOperatorFile(path);
  return readOpened(path);
}

/**
 * The open and the read, checked on the descriptor: what stands between a file checked and a
 * FIFO or a device put in its place before the open (tested on its own, the swap is a race).
 */
export function readOpened(path: string): { content: Buffer; stats: Stats } {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  try {
    const stats = fstatSync(fd);
    refuseIrregular(stats);
    const tooLarge = () => new OperatorFileError(`larger than ${OPERATOR_FILE_MAX_BYTES / 1024 / 1024} MiB, more than any key, URL or certificate file holds`);
    if (stats.size > OPERATOR_FILE_MAX_BYTES) throw tooLarge();
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      // One read of the size fstat said, and one more byte to see whether it has grown since.
      const chunk = Buffer.allocUnsafe(Math.min(Math.max(stats.size - total, 65536) + 1, OPERATOR_FILE_MAX_BYTES + 1 - total));
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      chunks.push(chunk.subarray(0, n));
      total += n;
      if (total > OPERATOR_FILE_MAX_BYTES) throw tooLarge();
    }
    return { content: Buffer.concat(chunks, total), stats };
  } finally {
    closeSync(fd);
  }
}

/** Why an operator's file could not be read, as the error lines say it: the system's code (ENOENT, EACCES, EISDIR, ELOOP), or why it was refused. */
export function fileProblem(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? (err instanceof Error ? err.message : String(err));
}
