// Every record of a whole CSV text at once: the service's streaming reader, fed in one piece.

import { CsvReader, type CsvRecord } from "../../src/load/csv.ts";

export function parseCsv(text: string): CsvRecord[] {
  const reader = new CsvReader();
  return [...reader.push(text), ...reader.end()];
}
