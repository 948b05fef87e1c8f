/**
 * Lax `datetime.date` validation of a Python `str`, as Pydantic 2.13.4 does it
 * (pydantic-core 2.46.4 with speedate 0.17) for a FastAPI query parameter
 * declared `month_from: date`.
 *
 * The pipeline mirrors pydantic-core `DateValidator::validate`:
 *
 *   1. `Date::parse_bytes_with_config` (speedate `date.rs`): an RFC 3339
 *      `YYYY-MM-DD`, or else an all-digit unix timestamp that must fall exactly
 *      on midnight.
 *   2. If that fails, lax mode calls `date_from_datetime`: the same bytes are
 *      parsed by `DateTime::parse_bytes_with_config` (speedate `datetime.rs` and
 *      `time.rs`). A parse failure is reported as `date_from_datetime_parsing`
 *      with the *datetime* parser's reason (the date parser's reason is
 *      dropped); a datetime whose time is not exactly 00:00:00.000000 is
 *      `date_from_datetime_inexact`. The timezone offset plays no part.
 *   3. A date in year 0 (reachable through `0000-MM-DD` or a timestamp) cannot
 *      become a Python `date`, so pydantic-core reports `date_parsing` with
 *      "year 0 is out of range" (`EitherDate::try_into_py`).
 *
 * speedate works on the UTF-8 bytes of the Python str, so every position and
 * length below is a byte index into the UTF-8 encoding of the input.
 */

export type LaxDateError =
  | { type: "date_from_datetime_parsing"; msg: string; ctx: { error: string } }
  | { type: "date_parsing"; msg: string; ctx: { error: string } }
  | { type: "date_from_datetime_inexact"; msg: string };

export type LaxDateResult = { ok: true; date: string /* YYYY-MM-DD */ } | ({ ok: false } & LaxDateError);

// ---------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------

/**
 * speedate `ParseError` variants that these parsers can raise, with their doc
 * strings (speedate `src/lib.rs`; the doc string is what pydantic-core puts in
 * `ctx.error` through `get_documentation()`).
 */
const PARSE_ERROR_MESSAGES = {
  TooShort: "input is too short",
  ExtraCharacters: "unexpected extra characters at the end of the input",
  InvalidCharDateTimeSep: "invalid datetime separator, expected `T`, `t`, `_` or space",
  InvalidCharDateSep: "invalid date separator, expected `-`",
  DateNotExact: "Timestamp is not an exact date",
  InvalidCharYear: "invalid character in year",
  InvalidCharMonth: "invalid character in month",
  InvalidCharDay: "invalid character in day",
  InvalidCharTimeSep: "invalid time separator, expected `:`",
  InvalidCharHour: "invalid character in hour",
  InvalidCharMinute: "invalid character in minute",
  InvalidCharSecond: "invalid character in second",
  InvalidCharTzSign: "invalid timezone sign",
  InvalidCharTzHour: "invalid timezone hour",
  InvalidCharTzMinute: "invalid timezone minute",
  OutOfRangeTzMinute: "timezone minute value is outside expected range of 0-59",
  OutOfRangeTz: "timezone offset must be less than 24 hours",
  OutOfRangeMonth: "month value is outside expected range of 1-12",
  OutOfRangeDay: "day value is outside expected range",
  OutOfRangeHour: "hour value is outside expected range of 0-23",
  OutOfRangeMinute: "minute value is outside expected range of 0-59",
  OutOfRangeSecond: "second value is outside expected range of 0-59",
  SecondFractionMissing: "second fraction digits missing after `.`",
  DateTooSmall: "dates before 0000 are not supported as unix timestamps",
  DateTooLarge: "dates after 9999 are not supported as unix timestamps",
  TimeTooLarge: "numeric times may not exceed 86,399 seconds",
} as const;

type ParseError = keyof typeof PARSE_ERROR_MESSAGES;

/** pydantic-core `src/errors/types.rs` message templates for the three error types used here. */
const DATE_FROM_DATETIME_PARSING_PREFIX = "Input should be a valid date or datetime, ";
const DATE_PARSING_PREFIX = "Input should be a valid date in the format YYYY-MM-DD, ";
const DATE_FROM_DATETIME_INEXACT_MSG = "Datetimes provided to dates should have zero time - e.g. be exact dates";
/** pydantic-core `EitherDate::try_into_py`: Python has no year 0. */
const YEAR_ZERO_MSG = "year 0 is out of range";

// ---------------------------------------------------------------------------
// Small result type and constants
// ---------------------------------------------------------------------------

type Parsed<T> = { ok: true; value: T } | { ok: false; error: ParseError };

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const fail = <T>(error: ParseError): Parsed<T> => ({ ok: false, error });

interface CalendarDate {
  year: number;
  month: number;
  day: number;
}

/** A parsed datetime reduced to what the date validator looks at. */
interface ParsedDateTime {
  date: CalendarDate;
  /** true when hour, minute, second and microsecond are all zero (tz offset not considered). */
  zeroTime: boolean;
}

const I64_MAX = (1n << 63n) - 1n;
const I64_MIN = -(1n << 63n);
const U32_MAX = 4_294_967_295n;
/** speedate `MS_WATERSHED`: a timestamp whose absolute value is above 2e10 is in milliseconds. */
const MS_WATERSHED = 20_000_000_000n;
/** speedate `UNIX_0000`: 0000-01-01T00:00:00 as a unix timestamp, the smallest allowed. */
const UNIX_0000 = -62_167_219_200n;
/** speedate `UNIX_9999`: 9999-12-31T23:59:59 as a unix timestamp, the largest allowed. */
const UNIX_9999 = 253_402_300_799n;
const SECONDS_PER_DAY = 86_400n;

const BYTE_0 = 0x30;
const BYTE_9 = 0x39;
const BYTE_PLUS = 0x2b;
const BYTE_MINUS = 0x2d;
const BYTE_DOT = 0x2e;
const BYTE_COMMA = 0x2c;
const BYTE_COLON = 0x3a;

const isDigit = (b: number | undefined): b is number => b !== undefined && b >= BYTE_0 && b <= BYTE_9;

const utf8 = new TextEncoder();

// ---------------------------------------------------------------------------
// Calendar helpers
// ---------------------------------------------------------------------------

/**
 * Proleptic Gregorian date of a day count since 1970-01-01 (negative before).
 * Equivalent to speedate's `from_timestamp_calc` year/ordinal walk; the
 * caller has already bounded the range to years 0000-9999.
 */
function civilFromDays(daysSinceEpoch: number): CalendarDate {
  const z = daysSinceEpoch + 719_468; // shift the epoch to 0000-03-01
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const shiftedMonth = Math.floor((5 * dayOfYear + 2) / 153); // 0 = March
  const day = dayOfYear - Math.floor((153 * shiftedMonth + 2) / 5) + 1;
  const month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  return { year, month, day };
}

function formatDate(d: CalendarDate): string {
  const pad = (n: number, width: number) => String(n).padStart(width, "0");
  return `${pad(d.year, 4)}-${pad(d.month, 2)}-${pad(d.day, 2)}`;
}

// ---------------------------------------------------------------------------
// RFC 3339 date, time and datetime (speedate date.rs / time.rs / datetime.rs)
// ---------------------------------------------------------------------------

/**
 * speedate `Date::parse_bytes_partial`: `YYYY-MM-DD` at the start of the
 * bytes, checked strictly left to right, so the first bad position decides
 * the error. Anything after byte 10 is left to the caller.
 */
function parseDatePrefix(bytes: Uint8Array): Parsed<CalendarDate> {
  // The length is checked before any character: "2024-1-1" is "too short", not a bad day.
  if (bytes.length < 10) return fail("TooShort");
  const digitsAt = (from: number, count: number, error: ParseError): Parsed<number> => {
    let value = 0;
    for (let i = from; i < from + count; i++) {
      const b = bytes[i];
      if (!isDigit(b)) return fail(error);
      value = value * 10 + (b - BYTE_0);
    }
    return ok(value);
  };
  const year = digitsAt(0, 4, "InvalidCharYear");
  if (!year.ok) return year;
  if (bytes[4] !== BYTE_MINUS) return fail("InvalidCharDateSep");
  const month = digitsAt(5, 2, "InvalidCharMonth");
  if (!month.ok) return month;
  if (bytes[7] !== BYTE_MINUS) return fail("InvalidCharDateSep");
  const day = digitsAt(8, 2, "InvalidCharDay");
  if (!day.ok) return day;
  // Month range is checked before the day range; year 0000 is accepted here (pydantic rejects it later).
  const maxDay = daysInMonth(year.value, month.value);
  if (maxDay === undefined) return fail("OutOfRangeMonth");
  if (day.value < 1 || day.value > maxDay) return fail("OutOfRangeDay");
  return ok({ year: year.value, month: month.value, day: day.value });
}

/** speedate `Date::parse_bytes_rfc3339`: the date prefix and nothing after it. */
function parseDateRfc3339(bytes: Uint8Array): Parsed<CalendarDate> {
  const date = parseDatePrefix(bytes);
  if (!date.ok) return date;
  if (bytes.length > 10) return fail("ExtraCharacters");
  return date;
}

interface ParsedTime {
  hour: number;
  minute: number;
  second: number;
  microsecond: number;
}

/**
 * speedate `PureTime::parse` + `Time::parse_bytes_offset` starting at byte
 * `offset`: `HH:MM[:SS[(.|,)fraction]]`, then an optional `Z`/`z` or
 * `±HH:MM` / `±HHMM` offset, then nothing else.
 */
function parseTime(bytes: Uint8Array, offset: number): Parsed<ParsedTime> {
  // HH:MM is the minimum; the length check comes before any character check.
  if (bytes.length - offset < 5) return fail("TooShort");
  const h1 = bytes[offset];
  const h2 = bytes[offset + 1];
  if (!isDigit(h1) || !isDigit(h2)) return fail("InvalidCharHour");
  if (bytes[offset + 2] !== BYTE_COLON) return fail("InvalidCharTimeSep");
  const m1 = bytes[offset + 3];
  const m2 = bytes[offset + 4];
  if (!isDigit(m1) || !isDigit(m2)) return fail("InvalidCharMinute");
  const hour = (h1 - BYTE_0) * 10 + (h2 - BYTE_0);
  const minute = (m1 - BYTE_0) * 10 + (m2 - BYTE_0);
  // Ranges are checked only once both fields are read: no 24:00, no leap minute.
  if (hour > 23) return fail("OutOfRangeHour");
  if (minute > 59) return fail("OutOfRangeMinute");

  let position = offset + 5;
  let second = 0;
  let microsecond = 0;
  if (bytes[position] === BYTE_COLON) {
    // Seconds are optional, but once the `:` is there both digits are required.
    const s1 = bytes[position + 1];
    const s2 = bytes[position + 2];
    if (!isDigit(s1) || !isDigit(s2)) return fail("InvalidCharSecond");
    second = (s1 - BYTE_0) * 10 + (s2 - BYTE_0);
    // No leap second: `:60` is out of range.
    if (second > 59) return fail("OutOfRangeSecond");
    position += 3;
    const fractionSep = bytes[position];
    if (fractionSep === BYTE_DOT || fractionSep === BYTE_COMMA) {
      position += 1;
      // pydantic-core parses with MicrosecondsPrecisionOverflowBehavior::Truncate: any number of
      // digits is consumed, only the first six count.
      let digits = 0;
      while (isDigit(bytes[position + digits])) {
        if (digits < 6) microsecond = microsecond * 10 + (bytes[position + digits]! - BYTE_0);
        digits++;
      }
      if (digits === 0) return fail("SecondFractionMissing");
      for (let i = digits; i < 6; i++) microsecond *= 10;
      position += digits;
    }
  }

  const tz = parseTzOffset(bytes, position);
  if (!tz.ok) return tz;
  position = tz.value;
  if (bytes.length > position) return fail("ExtraCharacters");
  return ok({ hour, minute, second, microsecond });
}

/**
 * Timezone part of speedate `Time::parse_bytes_offset`. Returns the position
 * after the offset. The offset value itself is validated (minutes < 60, total
 * < 24h) but not returned: pydantic-core's zero-time check ignores it.
 */
function parseTzOffset(bytes: Uint8Array, start: number): Parsed<number> {
  const first = bytes[start];
  if (first === undefined) return ok(start);
  let position = start + 1;
  if (first === 0x5a /* Z */ || first === 0x7a /* z */) return ok(position);

  let sign: 1 | -1;
  if (first === BYTE_PLUS) sign = 1;
  else if (first === BYTE_MINUS) sign = -1;
  else if (first === 0xe2) {
    // U+2212 MINUS SIGN (UTF-8 e2 88 92) is accepted as a negative sign, as ISO 8601 allows.
    if (bytes[position] !== 0x88 || bytes[position + 1] !== 0x92) return fail("InvalidCharTzSign");
    position += 2;
    sign = -1;
  } else return fail("InvalidCharTzSign");

  const h1 = bytes[position];
  const h2 = bytes[position + 1];
  if (!isDigit(h1) || !isDigit(h2)) return fail("InvalidCharTzHour");
  // The colon is optional (`+0900`), but the minutes are not: `+09` alone is "invalid timezone minute".
  let m1: number;
  const afterHour = bytes[position + 2];
  if (afterHour === BYTE_COLON) {
    position += 3;
    const b = bytes[position];
    if (!isDigit(b)) return fail("InvalidCharTzMinute");
    m1 = b - BYTE_0;
  } else if (isDigit(afterHour)) {
    position += 2;
    m1 = afterHour - BYTE_0;
  } else return fail("InvalidCharTzMinute");
  const m2 = bytes[position + 1];
  if (!isDigit(m2)) return fail("InvalidCharTzMinute");
  const minuteSeconds = m1 * 600 + (m2 - BYTE_0) * 60;
  if (minuteSeconds >= 3600) return fail("OutOfRangeTzMinute");
  const offsetSeconds = sign * ((h1 - BYTE_0) * 36_000 + (h2 - BYTE_0) * 3600 + minuteSeconds);
  // Offsets must be strictly less than 24 hours, to match Python's tzinfo.
  if (Math.abs(offsetSeconds) >= 86_400) return fail("OutOfRangeTz");
  return ok(position + 2);
}

/**
 * speedate `DateTime::parse_bytes_rfc3339_with_config`: a full date, then one
 * of `T`, `t`, `_` or space at byte 10, then a time at byte 11. A bare date is
 * not a datetime here (byte 10 is missing, so the separator is invalid).
 */
function parseDateTimeRfc3339(bytes: Uint8Array): Parsed<ParsedDateTime> {
  const date = parseDatePrefix(bytes);
  if (!date.ok) return date;
  const sep = bytes[10];
  if (sep !== 0x54 /* T */ && sep !== 0x74 /* t */ && sep !== 0x20 /* space */ && sep !== 0x5f /* _ */) {
    return fail("InvalidCharDateTimeSep");
  }
  const time = parseTime(bytes, 11);
  if (!time.ok) return time;
  const t = time.value;
  return ok({ date: date.value, zeroTime: t.hour === 0 && t.minute === 0 && t.second === 0 && t.microsecond === 0 });
}

// ---------------------------------------------------------------------------
// Numbers (speedate numbers.rs)
// ---------------------------------------------------------------------------

/**
 * Result of speedate 0.17 `int_parse_bytes_internal`: the integer, or the
 * byte that stopped it (undefined for empty input).
 */
type IntParse = { ok: true; value: bigint } | { ok: false; stoppedAt: number | undefined };

/**
 * speedate 0.17 `int_parse_bytes_internal`: an optional `+`/`-` (only when a
 * byte follows it), then ASCII digits accumulated in a *wrapping* i64; it
 * fails as soon as the running value is negative. Because only negativity is
 * checked, an overflow that wraps straight back to a non-negative value is
 * accepted: "18446744073709551616" (2^64) parses as 0.
 */
function parseIntWrapping(bytes: Uint8Array): IntParse {
  if (bytes.length === 0) return { ok: false, stoppedAt: undefined };
  let start = 0;
  let negative = false;
  if (bytes.length >= 2 && (bytes[0] === BYTE_MINUS || bytes[0] === BYTE_PLUS)) {
    negative = bytes[0] === BYTE_MINUS;
    start = 1;
  }
  const first = bytes[start]!;
  if (!isDigit(first)) return { ok: false, stoppedAt: first };
  let value = BigInt(first - BYTE_0);
  for (let i = start + 1; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (!isDigit(b)) return { ok: false, stoppedAt: b };
    value = BigInt.asIntN(64, BigInt.asIntN(64, value * 10n) + BigInt(b - BYTE_0));
    if (value < 0n) return { ok: false, stoppedAt: b };
  }
  return { ok: true, value: negative ? -value : value };
}

/** speedate `int_parse_bytes`: used by the date parser's timestamp fallback. */
function intParseBytes(bytes: Uint8Array): bigint | undefined {
  const parsed = parseIntWrapping(bytes);
  return parsed.ok ? parsed.value : undefined;
}

type IntFloat = { kind: "int"; value: bigint } | { kind: "float"; value: number } | { kind: "err" };

/**
 * Rust/lexical `STANDARD` f64 grammar: sign, then digits with an optional
 * `.` and fraction, or `.` and digits, then an optional exponent. (The
 * `inf`/`nan` spellings cannot reach here: the integer parser only hands over
 * text whose first non-digit is `.`.)
 */
const RUST_FLOAT = /^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;

/**
 * speedate 0.17 `float_parse_bytes`: try the integer parser; only if it
 * stopped on a `.` is the whole text parsed as a float (so "1.7e9" is a float
 * but "1e9" and "170e0" are not numbers at all, and an integer overflow is
 * never retried as a float).
 */
function floatParseBytes(bytes: Uint8Array): IntFloat {
  const parsed = parseIntWrapping(bytes);
  if (parsed.ok) return { kind: "int", value: parsed.value };
  if (parsed.stoppedAt !== BYTE_DOT) return { kind: "err" };
  // Only ASCII can match the grammar, so decoding byte by byte is safe for the test.
  let text = "";
  for (const b of bytes) text += String.fromCharCode(b);
  if (!RUST_FLOAT.test(text)) return { kind: "err" };
  return { kind: "float", value: Number(text) };
}

/** Rust `f64 as i64`: saturating, NaN becomes 0. */
function f64ToI64(x: number): bigint {
  if (Number.isNaN(x)) return 0n;
  if (x >= 9_223_372_036_854_775_807) return I64_MAX;
  if (x <= -9_223_372_036_854_775_808) return I64_MIN;
  return BigInt(Math.trunc(x));
}

/** Rust `f64 as u32`: saturating, NaN and negatives become 0. */
function f64ToU32(x: number): bigint {
  if (Number.isNaN(x) || x <= 0) return 0n;
  if (x >= 4_294_967_295) return U32_MAX;
  return BigInt(Math.trunc(x));
}

/** Rust `f64::round`: half away from zero (only used on values >= 0 or saturated afterwards). */
function rustRound(x: number): number {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}

// ---------------------------------------------------------------------------
// Timestamps (speedate util.rs / date.rs / datetime.rs)
// ---------------------------------------------------------------------------

/**
 * speedate `timestamp_watershed` (unit "infer", pydantic's default
 * `val_temporal_unit`): an absolute value above 2e10 is milliseconds, split
 * into seconds (rounded down) and a non-negative microsecond remainder.
 */
function timestampWatershed(timestamp: bigint): Parsed<{ seconds: bigint; micros: bigint }> {
  // `checked_abs` fails only for i64::MIN.
  if (timestamp === I64_MIN) return fail("DateTooSmall");
  const abs = timestamp < 0n ? -timestamp : timestamp;
  if (abs <= MS_WATERSHED) return ok({ seconds: timestamp, micros: 0n });
  let seconds = timestamp / 1000n; // truncating division, like Rust
  let micros = (timestamp % 1000n) * 1000n;
  if (micros < 0n) {
    seconds -= 1n;
    micros += 1_000_000n;
  }
  return ok({ seconds, micros });
}

/**
 * speedate `Date::from_timestamp_calc`: the calendar date of a unix second,
 * plus the seconds into that day. Only years 0000 to 9999 are supported.
 */
function dateFromUnixSeconds(seconds: bigint): Parsed<{ date: CalendarDate; secondOfDay: bigint }> {
  if (seconds < UNIX_0000) return fail("DateTooSmall");
  if (seconds > UNIX_9999) return fail("DateTooLarge");
  const sinceYear0 = seconds - UNIX_0000; // UNIX_0000 is a whole number of days, so days line up
  const secondOfDay = sinceYear0 % SECONDS_PER_DAY;
  const days = Number((seconds - secondOfDay) / SECONDS_PER_DAY);
  return ok({ date: civilFromDays(days), secondOfDay });
}

/**
 * speedate `Date::from_timestamp(timestamp, require_exact = true)`: the date
 * parser's numeric fallback; anything but exact midnight is `DateNotExact`.
 */
function dateFromTimestampExact(timestamp: bigint): Parsed<CalendarDate> {
  const split = timestampWatershed(timestamp);
  if (!split.ok) return split;
  const calc = dateFromUnixSeconds(split.value.seconds);
  if (!calc.ok) return calc;
  if (calc.value.secondOfDay !== 0n || split.value.micros !== 0n) return fail("DateNotExact");
  return ok(calc.value.date);
}

/**
 * speedate `DateTime::from_timestamp_with_config` (unit "infer"): the
 * watershed applies to `timestamp`, the millisecond remainder is added to
 * `microsecond`, and whole seconds carry over.
 */
function dateTimeFromTimestamp(timestamp: bigint, microsecond: bigint): Parsed<ParsedDateTime> {
  const split = timestampWatershed(timestamp);
  if (!split.ok) return split;
  let seconds = split.value.seconds;
  let totalMicros = microsecond + split.value.micros;
  // u32 `checked_add`
  if (totalMicros > U32_MAX) return fail("TimeTooLarge");
  if (totalMicros >= 1_000_000n) {
    seconds += totalMicros / 1_000_000n;
    if (seconds > I64_MAX) return fail("TimeTooLarge"); // i64 `checked_add`
    totalMicros %= 1_000_000n;
  }
  const calc = dateFromUnixSeconds(seconds);
  if (!calc.ok) return calc;
  return ok({ date: calc.value.date, zeroTime: calc.value.secondOfDay === 0n && totalMicros === 0n });
}

/**
 * The float branch of speedate `DateTime::parse_bytes_with_config`: above
 * 2e10 the value is milliseconds and divided by 1000; the floor is the second
 * and the rounded remainder the microsecond. Both then go through
 * `from_timestamp_with_config`, which applies the watershed once more to the
 * (already normalised) second. The decimal-digit limit is not checked because
 * pydantic-core asks for `Truncate`.
 */
function dateTimeFromFloat(value: number): Parsed<ParsedDateTime> {
  const normalized = Math.abs(value) > Number(MS_WATERSHED) ? value / 1000 : value;
  const floor = Math.floor(normalized);
  const seconds = f64ToI64(floor);
  const microsecond = f64ToU32(rustRound((normalized - Number(seconds)) * 1_000_000));
  return dateTimeFromTimestamp(seconds, microsecond);
}

// ---------------------------------------------------------------------------
// The two parsers pydantic-core calls
// ---------------------------------------------------------------------------

/**
 * speedate `Date::parse_bytes_with_config`: RFC 3339 date; if that fails and
 * the whole input is an integer, an exact-midnight timestamp. If it is not an
 * integer the RFC 3339 error stands (it is discarded by the caller anyway).
 */
function parseDate(bytes: Uint8Array): Parsed<CalendarDate> {
  const rfc = parseDateRfc3339(bytes);
  if (rfc.ok) return rfc;
  const int = intParseBytes(bytes);
  if (int === undefined) return rfc;
  return dateFromTimestampExact(int);
}

/**
 * speedate `DateTime::parse_bytes_with_config`: RFC 3339 datetime; if that
 * fails, a numeric timestamp (int or float); if the text is not a number,
 * the RFC 3339 error is the answer.
 */
function parseDateTime(bytes: Uint8Array): Parsed<ParsedDateTime> {
  const rfc = parseDateTimeRfc3339(bytes);
  if (rfc.ok) return rfc;
  const number = floatParseBytes(bytes);
  switch (number.kind) {
    case "int":
      return dateTimeFromTimestamp(number.value, 0n);
    case "float":
      return dateTimeFromFloat(number.value);
    case "err":
      return rfc;
  }
}

// ---------------------------------------------------------------------------
// pydantic-core DateValidator (lax mode, str input)
// ---------------------------------------------------------------------------

function accepted(date: CalendarDate): LaxDateResult {
  // pydantic-core `EitherDate::try_into_py`: year 0 cannot become a Python date.
  if (date.year === 0) {
    return { ok: false, type: "date_parsing", msg: DATE_PARSING_PREFIX + YEAR_ZERO_MSG, ctx: { error: YEAR_ZERO_MSG } };
  }
  return { ok: true, date: formatDate(date) };
}

/**
 * Validate a query-string value as pydantic's lax `date` would.
 *
 * Returns the accepted date as `YYYY-MM-DD`, or the pydantic error item
 * (`type`, `msg`, and `ctx` when pydantic has one, in that key order).
 */
export function parseLaxDate(input: string): LaxDateResult {
  const bytes = utf8.encode(input);

  const date = parseDate(bytes);
  if (date.ok) return accepted(date.value);

  // Lax mode: the date error is dropped and the input is tried as a datetime (date_from_datetime).
  const dateTime = parseDateTime(bytes);
  if (!dateTime.ok) {
    const error = PARSE_ERROR_MESSAGES[dateTime.error];
    return { ok: false, type: "date_from_datetime_parsing", msg: DATE_FROM_DATETIME_PARSING_PREFIX + error, ctx: { error } };
  }
  // Only an exact midnight is a date; the timezone offset is not considered.
  if (!dateTime.value.zeroTime) {
    return { ok: false, type: "date_from_datetime_inexact", msg: DATE_FROM_DATETIME_INEXACT_MSG };
  }
  return accepted(dateTime.value.date);
}

// The proleptic Gregorian calendar, which PostgreSQL's dates and Pydantic's date parser
// (speedate) both count in: shared by the validation of dates and the reads over them.

/** Days in a month (1-based), or undefined for a month outside 1-12. */
export function daysInMonth(year: number, month: number): number | undefined {
  if (month < 1 || month > 12) return undefined;
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}
