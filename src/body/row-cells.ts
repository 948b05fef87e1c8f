// What the JSON and CSV encoders share about a row's cells (ProductCostRow: PostgreSQL's
// text bytes per column).

import { PRODUCT_COST_COLUMNS } from "../reads/answer-rows.ts";

const TEXT_COLUMNS = PRODUCT_COST_COLUMNS.map((name) => name === "erp_sku" || name === "product_name");

/** Column `index` is text (a JSON string); the others are ids and amounts (JSON numbers). */
export function isTextColumn(index: number): boolean {
  return TEXT_COLUMNS[index]!;
}

const MINUS = 0x2d;
const DOT = 0x2e;
const isDigit = (b: number | undefined) => b !== undefined && b >= 0x30 && b <= 0x39;

/**
 * `cell` as it is when it is PostgreSQL's text of a finite bigint or numeric (an optional
 * minus, digits, an optional fraction); NaN and Infinity have no JSON or CSV number form,
 * so anything else is refused with an error that names the field.
 */
export function finiteDecimal(cell: Uint8Array, field: string): Uint8Array {
  let i = cell[0] === MINUS ? 1 : 0;
  const integerStart = i;
  while (isDigit(cell[i])) i++;
  let valid = i > integerStart;
  if (valid && i < cell.length) {
    const fractionStart = ++i;
    valid = cell[fractionStart - 1] === DOT;
    while (isDigit(cell[i])) i++;
    valid &&= i > fractionStart && i === cell.length;
  }
  if (!valid) throw new Error(`${field} is not a finite decimal: ${new TextDecoder().decode(cell.subarray(0, 40))}`);
  return cell;
}
