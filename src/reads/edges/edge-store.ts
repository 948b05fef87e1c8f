// What the service holds between reads of ranges (issue 53's design, docs/performance.md
// "Computed ranges"): the products' catalogue in the answers' order, and edges (every product's
// totals through a day, src/reads/edges/edges.ts), each under the key that names exactly the state it
// was read at (sql/queries/range_facts.sql). A range whose two edges are held costs arithmetic
// and encoding; one whose edges are not reads them, and keeps them for the next range that
// shares one (every "last N days" ends today).
//
// Bounded: edges and the catalogue together hold at most `limitBytes` (EDGE_CACHE_MB, shown in
// /metrics as edge_cache_*); past it the edge used longest ago goes first. Nothing is ever stale: a key holds a version, so a held edge is found
// only by a read at a snapshot whose edge is the same; one no read can find any more ages out.

/**
 * Dense numbers for product ids, shared by the catalogue and every edge held, so that an edge's
 * totals sit in typed arrays by number (a product's id text is met once, not once per edge).
 */
export class ProductSlots {
  // By the id as a number while it is exact as one (every id a catalogue is likely to use),
  // else by its text: a Map tells 5 from "5", and no id is both.
  private readonly byId = new Map<number | string, number>();

  /** The slot of the id whose decimal text (ASCII) is `text` (from `start` to `end`), given one at first sight. */
  of(text: Uint8Array, start = 0, end = text.length): number {
    const key = idKey(text, start, end);
    let slot = this.byId.get(key);
    if (slot === undefined) this.byId.set(key, (slot = this.byId.size));
    return slot;
  }

  get size(): number {
    return this.byId.size;
  }

  /** Bytes the map holds, about (a key's string and an entry's share of the table). */
  get bytes(): number {
    return this.byId.size * 96;
  }
}

/** A bigint id's decimal text as a number when at most 15 digits (always exact), else as text. */
function idKey(text: Uint8Array, start: number, end: number): number | string {
  if (end - start > 15) return Buffer.from(text.subarray(start, end)).toString("latin1");
  const negative = text[start] === 0x2d;
  let x = 0;
  for (let i = negative ? start + 1 : start; i < end; i++) x = x * 10 + (text[i]! - 0x30);
  return negative ? -x : x;
}

/** The four amounts, in the order of the answer's columns. */
export const AMOUNTS = 4;

/**
 * Totals by product slot: daily rows (n), and per amount its sum in micro-units and how many
 * values it has. A slot at or past `length` has none. A sum that is not a safe integer is NaN
 * in `sums` and exact in `big` (by slot × AMOUNTS + amount): numeric(20,6) sums past 2^53
 * micro-units, about 9 billion dollars.
 */
export interface Edge {
  readonly length: number;
  readonly n: Int32Array;
  readonly sums: Float64Array;
  readonly counts: Int32Array;
  readonly big: Map<number, bigint>;
}

/** An edge with nothing for `length` slots. */
export function emptyEdge(length: number): Edge {
  return { length, n: new Int32Array(length), sums: new Float64Array(length * AMOUNTS), counts: new Int32Array(length * AMOUNTS), big: new Map() };
}

export function edgeBytes(edge: Edge): number {
  return edge.n.byteLength + edge.sums.byteLength + edge.counts.byteLength + edge.big.size * 64;
}

/**
 * The products in the answers' order: per position its slot, segment and the bytes of its three
 * text cells (erp_product_id, erp_sku, product_name) in one buffer (start and end per cell; a
 * start of -1 is SQL NULL).
 */
export interface Catalogue {
  readonly length: number;
  readonly slots: Int32Array;
  readonly sample: Uint8Array;
  readonly text: Uint8Array;
  /** Per position and cell: start, end in `text`. */
  readonly bounds: Int32Array;
}

export function catalogueBytes(c: Catalogue): number {
  return c.slots.byteLength + c.sample.byteLength + c.text.byteLength + c.bounds.byteLength;
}

export interface EdgeStoreStats {
  limitBytes: number;
  bytes: number;
  edges: number;
  hits: number;
  misses: number;
  catalogueHits: number;
  catalogueMisses: number;
}

export class EdgeStore {
  /**
   * The slots of what is held. Replaced, never changed in place, when given up: a read takes the
   * ones current when it starts and reads into them; what it then offers to keep is refused
   * when they are no longer current (its numbers would mean other products).
   */
  slots = new ProductSlots();
  private readonly edges = new Map<string, Edge>(); // oldest use first
  private edgeBytesHeld = 0;
  private held: { key: string; catalogue: Catalogue } | undefined;
  private readonly counted = { hits: 0, misses: 0, catalogueHits: 0, catalogueMisses: 0 };
  private lastCatalogueLength = 0;

  /** `limitBytes` 0: nothing is held (each read reads what it needs). */
  constructor(readonly limitBytes: number) {}

  edge(key: string): Edge | undefined {
    const edge = this.edges.get(key);
    if (edge) {
      this.counted.hits++;
      this.edges.delete(key); // used now: the newest
      this.edges.set(key, edge);
    } else this.counted.misses++;
    return edge;
  }

  /** Whether an edge is held under `key`, without counting a hit or a miss or making it the newest. */
  holds(key: string): boolean {
    return this.edges.has(key);
  }

  /** Whether the catalogue is held under `key`, uncounted. */
  holdsCatalogue(key: string): boolean {
    return this.held?.key === key;
  }

  keepEdge(key: string, edge: Edge, slots: ProductSlots): void {
    if (slots !== this.slots || this.edges.has(key)) return; // two reads read it at once: the first kept stays
    const size = edgeBytes(edge);
    if (size + this.fixedBytes() > this.limitBytes) return;
    this.edges.set(key, edge);
    this.edgeBytesHeld += size;
    this.evict();
  }

  catalogue(key: string): Catalogue | undefined {
    if (this.held?.key === key) {
      this.counted.catalogueHits++;
      return this.held.catalogue;
    }
    this.counted.catalogueMisses++;
    return undefined;
  }

  /**
   * Before a read that found no catalogue held: when most slots are of products gone (ids that a
   * catalogue no longer has), every slot is given up, and with them every edge held: the slots
   * stay bounded by the products there are, not by every id ever seen. The read then reads all
   * it needs.
   */
  compactIfSparse(): void {
    if (this.slots.size <= 2 * this.lastCatalogueLength + 1024) return;
    this.slots = new ProductSlots();
    this.edges.clear();
    this.edgeBytesHeld = 0;
    this.held = undefined;
  }

  /** Kept in place of the one held (a catalogue of another version is never asked for again). */
  keepCatalogue(key: string, catalogue: Catalogue, slots: ProductSlots): void {
    if (slots !== this.slots) return;
    this.lastCatalogueLength = catalogue.length;
    if (this.slots.bytes + catalogueBytes(catalogue) > this.limitBytes) {
      this.held = undefined;
      return;
    }
    this.held = { key, catalogue };
    this.evict();
  }

  stats(): EdgeStoreStats {
    return { limitBytes: this.limitBytes, bytes: this.fixedBytes() + this.edgeBytesHeld, edges: this.edges.size, ...this.counted };
  }

  /** The slots' map and the catalogue: held while anything is. */
  private fixedBytes(): number {
    return this.slots.bytes + (this.held ? catalogueBytes(this.held.catalogue) : 0);
  }

  private evict(): void {
    for (const [key, edge] of this.edges) {
      if (this.fixedBytes() + this.edgeBytesHeld <= this.limitBytes) break;
      this.edges.delete(key);
      this.edgeBytesHeld -= edgeBytes(edge);
    }
  }
}
