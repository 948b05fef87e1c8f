// A small RFC 4180 CSV reader: fields separated by commas, optionally quoted with "",
// a doubled "" inside quotes is one quote, records end at CRLF or LF (also inside
// nothing else). Returns records as arrays of strings; `quoted` tells an empty quoted
// field ("") from an empty unquoted one, so the loader can read the latter as null.

export interface CsvField {
  value: string;
  quoted: boolean;
}

export class CsvError extends Error {}

export function* parseCsv(text: string): Generator<CsvField[]> {
  let i = 0;
  const n = text.length;
  if (text.charCodeAt(0) === 0xfeff) i = 1; // byte order mark from spreadsheet exports
  while (i < n) {
    const record: CsvField[] = [];
    for (;;) {
      let value = "";
      let quoted = false;
      if (text[i] === '"') {
        quoted = true;
        i++;
        for (;;) {
          if (i >= n) throw new CsvError("unterminated quoted field");
          const c = text[i]!;
          if (c === '"') {
            if (text[i + 1] === '"') {
              value += '"';
              i += 2;
              continue;
            }
            i++;
            break;
          }
          value += c;
          i++;
        }
        if (i < n && text[i] !== "," && text[i] !== "\n" && text[i] !== "\r") {
          throw new CsvError("a quoted field must be followed by a comma or the end of the line");
        }
      } else {
        const start = i;
        while (i < n && text[i] !== "," && text[i] !== "\n" && text[i] !== "\r") i++;
        value = text.slice(start, i);
        if (value.includes('"')) throw new CsvError('a quote inside an unquoted field (quote the whole field and double the ")');
      }
      record.push({ value, quoted });
      if (text[i] === ",") {
        i++;
        continue;
      }
      if (text[i] === "\r") i++;
      if (text[i] === "\n") i++;
      break;
    }
    // A blank line is no record.
    if (record.length === 1 && record[0]!.value === "" && !record[0]!.quoted) continue;
    yield record;
  }
}
