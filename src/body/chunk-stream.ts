// The shape every 200's bytes come in before body.ts sends them: the rows as they are encoded
// (encode.ts), or a kept answer read back from its file (kept-file.ts).

/** Chunks pulled as needed; `close` stops the read behind them early. */
export interface ChunkStream {
  /** The next chunk, or undefined at the end. Throws when the read behind it fails. */
  next(): Promise<Uint8Array | undefined>;
  close(reason: unknown): Promise<void>;
}
