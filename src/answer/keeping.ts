// Keeping an answer while it is sent (the answer cache's files, answer-cache.ts): the body's
// chunks pass through to the client as they are read, and are written to the answer's file on
// the way, within the cache's bound on the bytes of all answers being collected.

import type { AnswerCache } from "./answer-cache.ts";
import type { ChunkStream } from "../body/chunk-stream.ts";
import type { KeptFile } from "../body/kept-file.ts";

/**
 * `source` as it is, its chunks also written to `file` as they pass: `end` gets their sizes
 * once the source is read to its end and the file is written, undefined otherwise (a failure,
 * a client gone, a full disk, or no room: the cache bounds the bytes of all answers being
 * collected), so that the requests waiting for it read for themselves. The body's end waits
 * for the file: a request sent once this one is answered finds the answer kept.
 */
export function keeping(source: ChunkStream, cache: AnswerCache, file: KeptFile, end: (chunkSizes: number[] | undefined) => void): ChunkStream {
  const chunkSizes: number[] = [];
  let wanted = true; // false: not kept (no room, or the read did not end well)
  let held = 0; // reserved in the cache for the file
  let ended = false;
  const finish = async (whole: boolean) => {
    if (ended) return;
    ended = true;
    try {
      if (!(wanted && whole)) throw new Error("not kept");
      await file.written();
      end(chunkSizes);
    } catch {
      file.drop();
      end(undefined);
    } finally {
      cache.release(held);
    }
  };
  return {
    async next() {
      let chunk: Uint8Array | undefined;
      try {
        chunk = await source.next();
      } catch (err) {
        void finish(false);
        throw err;
      }
      if (chunk === undefined) await finish(true);
      else if (wanted && cache.reserve(chunk.byteLength)) {
        held += chunk.byteLength;
        chunkSizes.push(chunk.byteLength);
        file.append(chunk);
      } else wanted = false; // no room: keep none of it
      return chunk;
    },
    close(reason) {
      void finish(false);
      return source.close(reason);
    },
  };
}
