// An RFC 4180 CSV reader that takes its text in pieces, so a file of any size is read with
// bounded memory: fields separated by commas, optionally quoted with "", a doubled "" inside
// quotes is one quote, records end at CRLF, LF or CR outside quotes. Each record carries
// the line it starts on, for error messages. `quoted` tells an empty quoted field ("") from
// an empty unquoted one, so the loader can read the latter as null. A NUL byte is refused
// where it is: PostgreSQL text cannot hold one.
//
// Memory is bounded whatever the input, not only whatever its size: a field, a row and a row's
// number of fields have a bound past which the text is refused, naming its line (issue 52: a
// 1 GB line, 200 MB of commas grew one string or one array to 6 and 16 GB of RSS). Sizes count
// characters (UTF-16 code units, as JavaScript does: each holds at most 2 bytes).

export interface CsvField {
  value: string;
  quoted: boolean;
}

export interface CsvRecord {
  fields: CsvField[];
  /** The (1-based) line of the file the record starts on. */
  line: number;
}

/**
 * A field's longest value. The contract's widest values are text (erp_sku, product_name: a few
 * hundred characters in an ERP); numeric(20,6) needs at most 28, a date or a bigint about 20.
 * 1 Mi is thousands of times what a real file needs, and what one field may hold in memory.
 */
export const MAX_FIELD_CHARS = 1_048_576;
/**
 * A row's longest text: its values and the commas between them. Twice the widest row a
 * contract table can hold (two text values of MAX_FIELD_CHARS, the rest numbers and dates).
 */
export const MAX_ROW_CHARS = 4_194_304;
/** A row's most fields: no contract table has more than 6 columns; each field costs an object. */
export const MAX_FIELDS = 1_000;

export class CsvError extends Error {
  constructor(
    message: string,
    readonly line: number,
    /** The (0-based) field of its record the error is in, where it is in one. */
    readonly field?: number,
  ) {
    super(message);
  }
}

/** 1048576 as "1,048,576" (no locale: the same in every environment). */
const count = (n: number) => String(n).replace(/\B(?=(\d{3})+$)/g, ",");

type State = "start" | "plain" | "quoted" | "quote" | "cr";

const NUL = 0;
const COMMA = 44;
const QUOTE = 34;
const LF = 10;
const CR = 13;

export class CsvReader {
  private state: State = "start";
  private value = ""; // the current field's text from earlier pieces
  private quoted = false;
  private fields: CsvField[] = [];
  private rowChars = 0; // the current record's completed fields and their commas
  private line = 1;
  private recordLine = 1;
  private fieldLine = 1;
  private first = true;
  private afterCr = false; // inside quotes: the previous character was a CR

  /**
   * The records completed by this piece of text, each as soon as it is read: an error further
   * on is thrown after them, so the loader has taken every record before it, in the file's
   * order, and a piece's records are never all held at once.
   */
  *push(text: string): Generator<CsvRecord, void, undefined> {
    let done: CsvRecord | undefined; // a record the last character completed
    let i = 0;
    if (this.first && text.length > 0) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) i = 1; // byte order mark from spreadsheet exports
    }
    const n = text.length;
    let start = i; // where the unsaved part of the current field begins
    while (i < n) {
      if (done) {
        yield done;
        done = undefined;
      }
      const c = text.charCodeAt(i);
      // PostgreSQL text cannot hold a NUL: refused here, on its own line, rather than by the
      // server once the batch holding it is sent (after the whole file before it). After a CR
      // the character is read again at the start of the next line.
      if (c === NUL && this.state !== "cr") throw new CsvError("a NUL byte (0x00), which PostgreSQL text cannot hold", this.line, this.fields.length);
      switch (this.state) {
        case "cr":
          this.state = "start";
          if (c === LF) {
            this.line++;
            i++;
            start = i;
            continue;
          }
          this.line++; // a lone CR ended the line
          continue; // read c again at the start of a record
        case "start":
          if (this.fields.length === 0) this.recordLine = this.line;
          this.fieldLine = this.line;
          if (c === QUOTE) {
            this.quoted = true;
            this.afterCr = false;
            this.state = "quoted";
            start = i + 1;
          } else if (c === COMMA || c === LF || c === CR) {
            done = this.endField("", c);
            start = i + 1;
          } else {
            this.state = "plain";
            start = i;
          }
          i++;
          continue;
        case "plain":
          if (c === COMMA || c === LF || c === CR) {
            done = this.endField(this.value + text.slice(start, i), c);
            start = i + 1;
          } else if (c === QUOTE) {
            throw new CsvError('a quote inside an unquoted field (quote the whole field and double the ")', this.line);
          }
          i++;
          continue;
        case "quoted":
          if (c === QUOTE) {
            this.value += text.slice(start, i);
            this.state = "quote";
          } else if (c === CR || (c === LF && !this.afterCr)) this.line++; // CRLF is one line break
          this.afterCr = c === CR;
          i++;
          continue;
        case "quote":
          if (c === QUOTE) {
            this.value += '"'; // a doubled quote
            this.afterCr = false;
            this.state = "quoted";
            start = i + 1;
          } else if (c === COMMA || c === LF || c === CR) {
            done = this.endField(this.value, c);
            start = i + 1;
          } else {
            throw new CsvError("a quoted field must be followed by a comma or the end of the line", this.line);
          }
          i++;
          continue;
      }
    }
    if (done) yield done;
    // Keep the unfinished field's text for the next piece, within its bounds.
    if (this.state === "plain" || this.state === "quoted") this.value += text.slice(start, n);
    if (this.state === "plain" || this.state === "quoted" || this.state === "quote") this.checkSize(this.value.length);
  }

  /** The last record, if the text did not end with a line break; checks nothing is left open. */
  end(): CsvRecord[] {
    let last: CsvRecord | undefined;
    switch (this.state) {
      case "quoted":
        throw new CsvError("unterminated quoted field", this.fieldLine);
      case "plain":
      case "quote":
        last = this.endField(this.value, LF);
        break;
      case "start":
        if (this.fields.length > 0) last = this.endField("", LF); // "a," at the very end
        break;
      case "cr":
        break;
    }
    this.state = "start";
    return last ? [last] : [];
  }

  /** Throws when the current field, now `length` characters, or its row is past its bound. */
  private checkSize(length: number): void {
    if (length > MAX_FIELD_CHARS) throw new CsvError(`a field longer than ${count(MAX_FIELD_CHARS)} characters`, this.fieldLine, this.fields.length);
    if (this.rowChars + length > MAX_ROW_CHARS) throw new CsvError(`a row longer than ${count(MAX_ROW_CHARS)} characters`, this.recordLine);
  }

  /** Ends a field with `value`, and the record too when `by` is a line break: that record, unless blank. */
  private endField(value: string, by: number): CsvRecord | undefined {
    this.checkSize(value.length);
    this.fields.push({ value, quoted: this.quoted });
    this.rowChars += value.length;
    this.value = "";
    this.quoted = false;
    if (by === COMMA) {
      if (this.fields.length === MAX_FIELDS) throw new CsvError(`more than ${count(MAX_FIELDS)} fields`, this.recordLine);
      this.rowChars++;
      this.state = "start";
      return undefined;
    }
    const fields = this.fields;
    this.fields = [];
    this.rowChars = 0;
    if (by === CR) this.state = "cr";
    else {
      this.state = "start";
      this.line++;
    }
    // A blank line is no record.
    if (fields.length === 1 && fields[0]!.value === "" && !fields[0]!.quoted) return undefined;
    return { fields, line: this.recordLine };
  }
}
