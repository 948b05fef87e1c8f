// The answer's rows as an Apache Arrow IPC stream (Accept: application/vnd.apache.arrow.stream),
// for dataframes that keep the service's exactness: ids as int64, amounts as decimal128 at the
// column's scale (numeric(20,6): 6), names as utf8, SQL NULL as a null. One record batch per
// batch of rows read, so memory is bounded as the JSON's is; apache-arrow writes the messages
// (the schema first, the end-of-stream marker last), this module only lays out the columns.
//
// The cells arrive as PostgreSQL's text (ProductCostRow), never through a float: an id is
// parsed as a BigInt where it has more digits than a double holds exactly, an amount's digits
// become its 128-bit unscaled integer digit by digit.

import { AsyncByteQueue, Decimal, Field, Int64, makeData, RecordBatch, RecordBatchStreamWriter, Schema, Struct, Utf8, type Data, type DataType } from "apache-arrow";
import { finiteDecimal, isTextColumn, PRODUCT_COST_COLUMNS, type ProductCostRow } from "../reads/answer-rows.ts";

export const ARROW_STREAM_TYPE = "application/vnd.apache.arrow.stream";

/** The scale of the amount columns (numeric(20,6) in the contract): digits after the point. */
const AMOUNT_SCALE = 6;
/** decimal128's own precision: sums of numeric(20,6) over years of days stay far below it. */
const AMOUNT_PRECISION = 38;

const ID_COLUMN = 0;
const columnType = (index: number): DataType =>
  index === ID_COLUMN ? new Int64() : isTextColumn(index) ? new Utf8() : new Decimal(AMOUNT_SCALE, AMOUNT_PRECISION, 128);

const ARROW_SCHEMA = new Schema(PRODUCT_COST_COLUMNS.map((name, i) => new Field(name, columnType(i), true)));

/** A sink the writer writes its messages into, emptied by this module after each batch. */
class Drain extends AsyncByteQueue {
  private chunks: Uint8Array[] = [];
  override write(value: Uint8Array): void {
    if (value.byteLength > 0) this.chunks.push(value);
  }
  take(): Uint8Array {
    const bytes = Buffer.concat(this.chunks);
    this.chunks = [];
    return bytes;
  }
}

/** A body's Arrow stream, as encode.ts's RowEncoding: the schema, then a record batch per batch of rows, then the end-of-stream marker. */
export function arrowStream(): {
  begin(rows: readonly ProductCostRow[]): Uint8Array;
  more(rows: readonly ProductCostRow[]): Uint8Array;
  end: Uint8Array;
  rows(rows: readonly ProductCostRow[]): number;
} {
  const drain = new Drain();
  const writer = new RecordBatchStreamWriter();
  const batchOf = (rows: readonly ProductCostRow[]) => {
    if (rows.length > 0) writer.write(recordBatch(rows));
    return drain.take();
  };
  return {
    begin(rows) {
      writer.reset(drain, ARROW_SCHEMA); // writes the schema message
      return batchOf(rows);
    },
    more: (rows) => batchOf(rows),
    // Arrow's end-of-stream marker: the continuation token, then a message of length 0.
    end: END_OF_STREAM,
    rows: (rows) => rows.length,
  };
}

const END_OF_STREAM = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);

/** One record batch of `rows`, each column laid out from the cells' text. */
function recordBatch(rows: readonly ProductCostRow[]): RecordBatch {
  const children = PRODUCT_COST_COLUMNS.map((name, f) => (f === ID_COLUMN ? int64Column(rows, f, name) : isTextColumn(f) ? utf8Column(rows, f) : decimalColumn(rows, f, name)));
  const data = makeData({ type: new Struct(ARROW_SCHEMA.fields), length: rows.length, nullCount: 0, children });
  return new RecordBatch(ARROW_SCHEMA, data);
}

/** The validity bitmap of column `f` (bit set: a value) and its null count; none when every cell has a value. */
function validity(rows: readonly ProductCostRow[], f: number): { nullBitmap?: Uint8Array; nullCount: number } {
  let nullCount = 0;
  for (const row of rows) if (row[f] == null) nullCount++;
  if (nullCount === 0) return { nullCount };
  const nullBitmap = new Uint8Array((rows.length + 7) >> 3);
  rows.forEach((row, r) => {
    if (row[f] != null) nullBitmap[r >> 3]! |= 1 << (r & 7);
  });
  return { nullBitmap, nullCount };
}

function utf8Column(rows: readonly ProductCostRow[], f: number): Data {
  const valueOffsets = new Int32Array(rows.length + 1);
  let size = 0;
  rows.forEach((row, r) => {
    size += row[f]?.length ?? 0;
    valueOffsets[r + 1] = size;
  });
  const data = new Uint8Array(size);
  rows.forEach((row, r) => {
    const cell = row[f];
    if (cell) data.set(cell, valueOffsets[r]!);
  });
  return makeData({ type: new Utf8(), length: rows.length, ...validity(rows, f), valueOffsets, data });
}

// Up to 15 digits always fit a double exactly (below 2^53): such a cell is read as a number,
// byte by byte, with no string and no BigInt made; a longer one through a BigInt.
const EXACT_DIGITS = 15;
const decoder = new TextDecoder();
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const TWO_32 = 2 ** 32;
const MASK_32 = 0xffffffffn;
const POWERS_OF_TEN = Array.from({ length: AMOUNT_SCALE + 1 }, (_, i) => 10 ** i);

function int64Column(rows: readonly ProductCostRow[], f: number, name: string): Data {
  // Two little-endian 32-bit words a value, seen by Arrow as one int64.
  const words = new Uint32Array(rows.length * 2);
  rows.forEach((row, r) => {
    const cell = row[f];
    if (cell == null) return;
    const digits = finiteDecimal(cell, name).length - (cell[0] === MINUS ? 1 : 0);
    if (digits <= EXACT_DIGITS) writeSmall(integerOf(cell), words, r * 2, 2);
    else writeBig(BigInt(decoder.decode(cell)), words, r * 2, 2);
  });
  return makeData({ type: new Int64(), length: rows.length, ...validity(rows, f), data: new BigInt64Array(words.buffer) });
}

function decimalColumn(rows: readonly ProductCostRow[], f: number, name: string): Data {
  // Four little-endian 32-bit words a value: its unscaled integer in two's complement.
  const words = new Uint32Array(rows.length * 4);
  rows.forEach((row, r) => {
    const cell = row[f];
    if (cell == null) return;
    const small = unscaledSmall(finiteDecimal(cell, name));
    if (small !== undefined) writeSmall(small, words, r * 4, 4);
    else writeBig(BigInt(unscaledDigits(cell, name)), words, r * 4, 4);
  });
  return makeData({ type: new Decimal(AMOUNT_SCALE, AMOUNT_PRECISION, 128), length: rows.length, ...validity(rows, f), data: words });
}

/** A finite integer's text (at most 15 digits) as a number. */
function integerOf(cell: Uint8Array): number {
  let value = 0;
  for (let i = cell[0] === MINUS ? 1 : 0; i < cell.length; i++) value = value * 10 + (cell[i]! - ZERO);
  return cell[0] === MINUS ? -value : value;
}

/** A finite decimal's unscaled integer (value × 10^6) as a number, when it has at most 15 digits and 6 decimals; else undefined. */
function unscaledSmall(cell: Uint8Array): number | undefined {
  let value = 0;
  let digits = 0;
  let decimals = -1; // -1: no point seen
  for (let i = cell[0] === MINUS ? 1 : 0; i < cell.length; i++) {
    const b = cell[i]!;
    if (b === DOT) {
      decimals = 0;
      continue;
    }
    value = value * 10 + (b - ZERO);
    if (value !== 0) digits++;
    if (decimals >= 0) decimals++;
  }
  const scaleUp = AMOUNT_SCALE - Math.max(0, decimals);
  if (scaleUp < 0 || digits + scaleUp > EXACT_DIGITS) return undefined;
  const unscaled = value * POWERS_OF_TEN[scaleUp]!;
  return cell[0] === MINUS ? -unscaled : unscaled;
}

/**
 * A finite decimal's text as the digits of its unscaled integer (value × 10^AMOUNT_SCALE),
 * signed: "-12.5" is "-12500000". Refuses what decimal128(38, 6) cannot hold exactly, rather
 * than round: more than 6 decimals, more than 38 digits.
 */
export function unscaledDigits(cell: Uint8Array, name: string): string {
  const text = decoder.decode(cell);
  const dot = text.indexOf(".");
  const fraction = dot === -1 ? "" : text.slice(dot + 1);
  if (fraction.length > AMOUNT_SCALE) throw new Error(`${name} has more than ${AMOUNT_SCALE} decimals: ${text.slice(0, 60)}`);
  const unscaled = (dot === -1 ? text : text.slice(0, dot)) + fraction.padEnd(AMOUNT_SCALE, "0");
  const digits = unscaled.replace(/^(-?)0+(?=\d)/, "$1");
  if (digits.replace("-", "").length > AMOUNT_PRECISION) throw new Error(`${name} has more than ${AMOUNT_PRECISION} digits: ${text.slice(0, 60)}`);
  return digits;
}

/** Writes `value` (|value| < 2^53) into `count` words at `at`, little-endian two's complement. */
function writeSmall(value: number, words: Uint32Array, at: number, count: number): void {
  const magnitude = Math.abs(value);
  let low = magnitude % TWO_32;
  let high = Math.floor(magnitude / TWO_32);
  let fill = 0;
  if (value < 0) {
    // Two's complement of the magnitude: invert every word, add one (the carry runs into `high` only when `low` is 0).
    low = (TWO_32 - low) % TWO_32;
    high = (TWO_32 - high - (low === 0 ? 0 : 1)) % TWO_32;
    fill = 0xffffffff;
  }
  words[at] = low;
  words[at + 1] = high;
  for (let w = 2; w < count; w++) words[at + w] = fill;
}

/** Writes `value` into `count` words at `at`, little-endian two's complement. */
function writeBig(value: bigint, words: Uint32Array, at: number, count: number): void {
  let bits = BigInt.asUintN(32 * count, value);
  for (let w = 0; w < count; w++) {
    words[at + w] = Number(bits & MASK_32);
    bits >>= 32n;
  }
}
