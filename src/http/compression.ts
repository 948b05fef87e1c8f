// Compresses a streamed 200 when the client accepts it and the body is big enough to gain.
//
// Rule: a 200 with a body, when Accept-Encoding allows br or gzip (q > 0, `*` counts) and
// the first chunk (the first batch of rows, already fetched) is at least 1 KiB. br is
// preferred on a tie. Anything else goes out as it is: error bodies, which must stay byte
// for byte what FastAPI sends, and small answers ("[]", a few rows), where compression
// adds bytes and time. Every 200 that passes here says Vary: Accept-Encoding.
//
// Levels, measured on a one-month answer (9.9 MB of JSON, 45,000 rows) on the 2-core
// benchmark machine: brotli quality 1 takes 55 ms for 2.0 MB; gzip level 1 64 ms for
// 3.1 MB; gzip level 6 (the usual default) 230 ms for 2.0 MB. So br at quality 1 and gzip
// at level 1: a large answer costs less CPU to compress than to serialise.
//
// Compression keeps the stream's failure contract: when the rows fail midway, the
// compressed stream errors too and the server aborts the connection, so the client sees a
// broken transfer (and an unfinished gzip or brotli stream), never a shorter body that
// decodes cleanly.

import zlib from "node:zlib";
import { TOKEN, weightedList } from "./weighted-list.ts";

export type ContentCoding = "br" | "gzip";

export const MIN_COMPRESSED_BYTES = 1024;

/** What the two streams below need of the original body's reader. */
interface ChunkReader {
  read(): Promise<{ done: boolean; value?: Uint8Array }>;
  cancel(reason?: unknown): Promise<void>;
}

export const BROTLI_QUALITY = 1;
export const GZIP_LEVEL = 1;

const CODING = new RegExp(`^${TOKEN}$`);

/** The coding to answer with for this Accept-Encoding header (RFC 9110 §12.5.3), or null for identity. */
export function chooseEncoding(header: string | null): ContentCoding | null {
  if (!header) return null;
  const q = new Map<string, number>();
  for (const { element, q: value } of weightedList(header, false)) {
    if (!CODING.test(element)) continue;
    let coding = element.toLowerCase();
    if (coding === "x-gzip") coding = "gzip"; // RFC 9110 §8.4.1.3
    // A coding listed twice: the most favourable listing counts.
    q.set(coding, Math.max(q.get(coding) ?? 0, value));
  }
  const star = q.get("*");
  const qualityOf = (coding: ContentCoding) => q.get(coding) ?? star ?? 0;
  const br = qualityOf("br");
  const gzip = qualityOf("gzip");
  if (br <= 0 && gzip <= 0) return null;
  return br >= gzip ? "br" : "gzip";
}

function addVary(headers: Headers, field: string): void {
  const current = headers.get("vary");
  if (!current) headers.set("vary", field);
  else if (!current.split(",").some((f) => f.trim().toLowerCase() === field.toLowerCase())) headers.set("vary", `${current}, ${field}`);
}

function compressor(coding: ContentCoding): zlib.BrotliCompress | zlib.Gzip {
  return coding === "br"
    ? zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } })
    : zlib.createGzip({ level: GZIP_LEVEL });
}

/**
 * `first` and then the rest of `source`, compressed. Pull-driven: the next source chunk is
 * read only when the client has taken what was compressed so far, so a slow client holds
 * back the database read instead of filling memory.
 */
function compressedStream(first: Uint8Array, source: ChunkReader, coding: ContentCoding): ReadableStream<Uint8Array> {
  const z = compressor(coding);
  const out: Uint8Array[] = [];
  let zError: unknown;
  let ended = false;
  const ending = new Promise<void>((resolve) => z.once("end", () => ((ended = true), resolve())));
  z.on("data", (chunk: Buffer) => out.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)));
  z.on("error", (err) => (zError = err));
  // write()'s callback runs once zlib has processed the chunk and pushed what it produced.
  const write = (chunk: Uint8Array) => new Promise<void>((resolve, reject) => z.write(chunk, (err) => (err ? reject(err) : resolve())));
  let pending: Uint8Array | undefined = first;

  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        while (out.length === 0 && !ended) {
          if (pending) {
            const chunk = pending;
            pending = undefined;
            await write(chunk);
            continue;
          }
          const next = await source.read();
          if (next.done) {
            z.end();
            await ending;
          } else {
            await write(next.value!);
          }
          if (zError) throw zError;
        }
        for (const chunk of out.splice(0)) controller.enqueue(chunk);
        if (ended && out.length === 0) controller.close();
      } catch (err) {
        // The rows failed (or zlib did): error this stream too, so the server aborts the
        // connection. The row stream already logged the cause and freed the cursor.
        z.destroy();
        controller.error(err);
      }
    },
    async cancel(reason) {
      z.destroy();
      await source.cancel(reason);
    },
  });
}

/** `first` and then the rest of `source`, unchanged. */
function replayedStream(first: Uint8Array, source: ChunkReader): ReadableStream<Uint8Array> {
  let pending: Uint8Array | undefined = first;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (pending) {
        controller.enqueue(pending);
        pending = undefined;
        return;
      }
      try {
        const next = await source.read();
        if (next.done) controller.close();
        else controller.enqueue(next.value!);
      } catch (err) {
        controller.error(err);
      }
    },
    cancel: (reason) => source.cancel(reason),
  });
}

/**
 * The response to send for `request`: `response` compressed when the rule above says so,
 * otherwise the same bytes. Only for 200s; any other status passes through untouched.
 */
export async function negotiateCompression(request: Request, response: Response): Promise<Response> {
  if (response.status !== 200 || !response.body || response.headers.has("content-encoding")) return response;
  const headers = new Headers(response.headers);
  addVary(headers, "Accept-Encoding");
  const coding = chooseEncoding(request.headers.get("accept-encoding"));
  if (!coding) return new Response(response.body, { status: 200, headers });

  // The first chunk is the first batch, already in memory: reading it waits for nothing.
  const source: ChunkReader = (response.body as ReadableStream<Uint8Array>).getReader();
  let head: Awaited<ReturnType<ChunkReader["read"]>>;
  try {
    head = await source.read();
  } catch (err) {
    // The body failed before its first byte: send it failing, as it would have gone uncompressed.
    return new Response(new ReadableStream({ start: (controller) => controller.error(err) }), { status: 200, headers });
  }
  if (head.done) return new Response(null, { status: 200, headers });
  const first = head.value!;
  if (first.byteLength < MIN_COMPRESSED_BYTES) return new Response(replayedStream(first, source), { status: 200, headers });

  headers.set("content-encoding", coding);
  headers.delete("content-length");
  return new Response(compressedStream(first, source, coding), { status: 200, headers });
}
