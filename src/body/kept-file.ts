// One kept body in an anonymous file: created in the temporary directory and unlinked at once,
// so only its descriptor names it. Its bytes live in the kernel's page cache, not in the
// process's heap: keeping answers costs the garbage collector nothing, dropping one is a
// close() as soon as its last reader is done (never a collection to wait for), and a process
// that dies leaves nothing behind. Written once, front to back; read by any number of streams
// at once, each at its own offset.

import { closeSync, openSync, read, readSync, unlinkSync, write, writeSync } from "node:fs";
import { join } from "node:path";
import type { ChunkStream } from "./chunk-stream.ts";

/** Bytes a reader hands on at a time: big enough for few system calls, small beside a socket's buffer. */
const READ_CHUNK_BYTES = 256 * 1024;
const WRITE_AT_ONCE_BYTES = 64 * 1024;

const writeAt = (fd: number, bytes: Uint8Array, position: number) =>
  new Promise<number>((resolve, reject) => write(fd, bytes, 0, bytes.byteLength, position, (err, n) => (err ? reject(err) : resolve(n))));

const readAt = (fd: number, length: number, position: number) =>
  new Promise<Uint8Array>((resolve, reject) => {
    const into = new Uint8Array(length);
    read(fd, into, 0, length, position, (err, n) => (err ? reject(err) : resolve(n === length ? into : into.subarray(0, n))));
  });

export class KeptFile {
  readonly #fd: number;
  #size = 0;
  /** Appends on the thread pool (each at its own offset: their order does not matter). */
  #writes: Promise<void>[] = [];
  /** The first append that failed. */
  #failure: unknown;
  /**
   * Writes and reads in flight and streams open: the descriptor outlives them all (a number
   * closed under a write in flight could be reused by another file or socket meanwhile).
   */
  #busy = 0;
  #dropped = false;
  #closed = false;
  /** Called once the descriptor is closed (files that live no longer than this one). */
  #onClose: (() => void)[] = [];

  /** Throws when no file can be made in `directory` (not writable, no descriptors left). */
  static create(directory: string): KeptFile {
    const path = join(directory, `product-cost-export-${crypto.randomUUID()}`);
    const fd = openSync(path, "wx+", 0o600);
    try {
      unlinkSync(path);
    } catch (err) {
      closeSync(fd);
      throw err;
    }
    return new KeptFile(fd);
  }

  private constructor(fd: number) {
    this.#fd = fd;
  }

  /** Bytes appended so far. */
  get size(): number {
    return this.#size;
  }

  /**
   * `bytes` after everything appended before; it must not change until written() settles. A
   * small chunk is written at once (microseconds into the page cache), so that a small answer
   * is kept by the time its body ends; a larger one on the thread pool.
   */
  append(bytes: Uint8Array): void {
    const at = this.#size;
    this.#size += bytes.byteLength;
    if (bytes.byteLength <= WRITE_AT_ONCE_BYTES) {
      try {
        for (let done = 0; done < bytes.byteLength; ) done += writeSync(this.#fd, bytes, done, bytes.byteLength - done, at + done);
      } catch (err) {
        this.#failure ??= err;
      }
      return;
    }
    this.#busy++;
    const writing = (async () => {
      for (let done = 0; done < bytes.byteLength; ) done += await writeAt(this.#fd, bytes.subarray(done), at + done);
    })();
    this.#writes.push(writing.catch((err) => void (this.#failure ??= err)).finally(() => this.#release()));
  }

  /** Settles once every append is in the file; rejects with the first failure (a full disk). */
  async written(): Promise<void> {
    if (this.#writes.length) await Promise.all(this.#writes);
    if (this.#failure !== undefined) throw this.#failure;
  }

  /**
   * The bytes from the start, in chunks of `sizes` when given (the chunks they were written in:
   * a compressor's output depends on them), else of up to 256 KiB; the file stays open until
   * the stream ends or is closed.
   */
  reader(sizes?: readonly number[]): ChunkStream {
    let position = 0;
    let index = 0;
    let open = true;
    const release = this.hold();
    const done = () => {
      open = false;
      release();
    };
    return {
      next: async () => {
        if (!open || position >= this.#size) return void done();
        this.#busy++; // a read in flight keeps the descriptor even past close()
        try {
          const chunk = await readAt(this.#fd, Math.min(sizes?.[index++] ?? READ_CHUNK_BYTES, this.#size - position), position);
          if (chunk.byteLength === 0) throw new Error("kept answer file is shorter than written");
          position += chunk.byteLength;
          return chunk;
        } catch (err) {
          done();
          throw err;
        } finally {
          this.#release();
        }
      },
      close: async () => done(),
    };
  }

  /** All of it, read now (blocking: for a small body, a few microseconds from the page cache). */
  bytes(): Uint8Array {
    const into = new Uint8Array(this.#size);
    for (let done = 0; done < into.byteLength; ) {
      const n = readSync(this.#fd, into, done, into.byteLength - done, done);
      if (n === 0) throw new Error("kept answer file is shorter than written");
      done += n;
    }
    return into;
  }

  /**
   * Keeps it open until the returned function is called, even if dropped meanwhile: what a
   * request holds from finding it to its last byte.
   */
  hold(): () => void {
    this.#busy++;
    let held = true;
    return () => {
      if (held) this.#release();
      held = false;
    };
  }

  /** No longer wanted: closed now, or when its last reader, holder and write are done. */
  drop(): void {
    this.#dropped = true;
    this.#closeIfIdle();
  }

  /** `then` once this file is closed (at once if it is already). */
  afterClose(then: () => void): void {
    if (this.#closed) then();
    else this.#onClose.push(then);
  }

  #release() {
    this.#busy--;
    this.#closeIfIdle();
  }

  #closeIfIdle() {
    if (!this.#dropped || this.#busy > 0 || this.#closed) return;
    this.#closed = true;
    closeSync(this.#fd);
    for (const then of this.#onClose.splice(0)) then();
  }
}

/** An answer kept whole (src/answer/answer-cache.ts holds them), as body.ts sends it back. */
export interface CachedAnswer {
  readonly version: string;
  /** The body as the client would get it uncompressed. */
  readonly body: KeptFile;
  /**
   * The sizes of the chunks its read sent: whether it went out compressed depends on the first
   * (body.ts), and the compressed bytes on all of them.
   */
  readonly chunkSizes: readonly number[];
  /** Rows in the body, for the log line and metrics. */
  readonly rows: number;
}
