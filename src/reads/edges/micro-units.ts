// Amounts as integer micro-units (millionths of a dollar: numeric(20,6)'s own scale), exact at
// any size: a number while it is a safe integer (|x| < 2^53, about 9 billion dollars: every
// sum the data of a real catalogue makes), a bigint past that (numeric(20,6)'s largest value is
// 10^20 - 1 micro-units; sums of many go further). The arithmetic a range needs is the
// difference of two edges' totals (docs/performance.md, "Computed ranges"), and the text is
// PostgreSQL's trim_scale: the shortest exact decimal (100.5, 0, -0.000001), so that an
// answer written from micro-units is byte for byte the answer written from the numeric's text.

/** An amount in micro-units: a safe integer, or a bigint beyond. */
export type Micro = number | bigint;

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** `x` as a number when it is a safe integer, else as it is. */
function narrowed(x: bigint): Micro {
  return x <= SAFE && x >= -SAFE ? Number(x) : x;
}

/**
 * The micro-units of a decimal as PostgreSQL writes a numeric ("-12.5", "3", "0.000001",
 * "99999999999999.999999"), `text` being its ASCII bytes (from `start` to `end`: an element
 * of an array's text). Throws on anything else, and on a seventh decimal (a scale past
 * numeric(20,6)'s: no micro-unit holds it exactly).
 */
export function microOf(text: Uint8Array, start = 0, end = text.length): Micro {
  let i = start;
  const negative = text[i] === 0x2d;
  if (negative) i++;
  let digits = 0;
  let fraction = -1; // digits after the point; -1: no point yet
  let x = 0;
  let big: bigint | undefined;
  for (; i < end; i++) {
    const b = text[i]!;
    if (b === 0x2e && fraction < 0) {
      fraction = 0;
      continue;
    }
    if (b < 0x30 || b > 0x39) throw new Error(`not a decimal: ${shown(text, start, end)}`);
    if (fraction >= 0 && ++fraction > 6) throw new Error(`more than six decimals: ${shown(text, start, end)}`);
    digits++;
    if (big !== undefined) big = big * 10n + BigInt(b - 0x30);
    else {
      x = x * 10 + (b - 0x30);
      if (x > Number.MAX_SAFE_INTEGER / 100) big = BigInt(x); // the next digit could leave the safe range
    }
  }
  if (digits === 0) throw new Error(`not a decimal: ${shown(text, start, end)}`);
  const scale = 6 - Math.max(fraction, 0);
  if (big === undefined) {
    const scaled = x * 10 ** scale;
    if (Number.isSafeInteger(scaled)) return negative ? -scaled : scaled;
    big = BigInt(x);
  }
  const value = big * 10n ** BigInt(scale);
  return narrowed(negative ? -value : value);
}

/** The text a failure names (a function, not a closure made on every call of microOf: it runs per value). */
function shown(text: Uint8Array, start: number, end: number): string {
  return new TextDecoder().decode(text.subarray(start, end));
}

/** a − b, exact. */
export function difference(a: Micro, b: Micro): Micro {
  if (typeof a === "number" && typeof b === "number") {
    const d = a - b;
    if (Number.isSafeInteger(d)) return d;
  }
  return narrowed(BigInt(a) - BigInt(b));
}

/** a + b, exact. */
export function total(a: Micro, b: Micro): Micro {
  if (typeof a === "number" && typeof b === "number") {
    const s = a + b;
    if (Number.isSafeInteger(s)) return s;
  }
  return narrowed(BigInt(a) + BigInt(b));
}

/** The shortest exact decimal of `x` micro-units, as PostgreSQL's trim_scale writes it. */
export function decimalText(x: Micro): string {
  if (typeof x === "number") {
    // No bigint for a safe integer. The quotient never rounds up to the next whole: below
    // 2^53 / 10^6 a double's spacing is at most 2^-19, under twice the 10^-6 that separates
    // the largest fraction (.999999) from the next whole; so the whole part is exact, and so
    // is the remainder (both products and differences stay below 2^53).
    const magnitude = Math.abs(x);
    const whole = Math.trunc(magnitude / 1e6);
    const micro = magnitude - whole * 1e6;
    const fraction = micro === 0 ? "" : String(micro).padStart(6, "0").replace(/0+$/, "");
    return (x < 0 ? "-" : "") + (fraction ? `${whole}.${fraction}` : String(whole));
  }
  const negative = x < 0;
  const digits = (negative ? -BigInt(x) : BigInt(x)).toString().padStart(7, "0");
  const whole = digits.slice(0, -6);
  const fraction = digits.slice(-6).replace(/0+$/, "");
  const text = fraction ? `${whole}.${fraction}` : whole;
  return negative ? `-${text}` : text;
}

/**
 * decimalText(x)'s bytes (ASCII). A safe integer is written digit by digit into an array of its
 * own length (no string, no view of a shared buffer: an answer makes four per product, and
 * both cost several times as much in Bun); a bigint through decimalText.
 */
export function decimalBytes(x: Micro): Uint8Array {
  if (typeof x !== "number") return new TextEncoder().encode(decimalText(x));
  const magnitude = Math.abs(x);
  // Exact as in decimalText: below 2^53 the whole part and the remainder come out exact. The
  // remainder is below 10^6 and, for any amount under 2^31 dollars, the whole part an int32
  // too: integer arithmetic (| 0), several times faster than a double's % and trunc.
  let whole = Math.trunc(magnitude / 1e6);
  let micro = (magnitude - whole * 1e6) | 0;
  let places = 6; // the fraction's digits, its trailing zeros dropped
  if (micro === 0) places = 0;
  else
    while (micro % 10 === 0) {
      micro = (micro / 10) | 0;
      places--;
    }
  let digits = 1;
  if (whole < 2 ** 31) for (let w = whole | 0; w >= 10; w = (w / 10) | 0) digits++;
  else for (let w = whole; w >= 10; w = Math.trunc(w / 10)) digits++;
  const sign = x < 0 ? 1 : 0;
  const out = new Uint8Array(sign + digits + (places ? 1 + places : 0));
  if (sign) out[0] = 0x2d;
  if (whole < 2 ** 31) {
    let w = whole | 0;
    for (let o = sign + digits - 1; o >= sign; o--) {
      const q = (w / 10) | 0;
      out[o] = 0x30 + w - q * 10;
      w = q;
    }
  } else {
    for (let o = sign + digits - 1; o >= sign; o--) {
      out[o] = 0x30 + (whole % 10);
      whole = Math.trunc(whole / 10);
    }
  }
  if (places) {
    out[sign + digits] = 0x2e;
    for (let o = out.length - 1; o > sign + digits; o--) {
      const q = (micro / 10) | 0;
      out[o] = 0x30 + micro - q * 10;
      micro = q;
    }
  }
  return out;
}
