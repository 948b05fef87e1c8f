// What the app must not see as it arrives: size limits, refused with a JSON body. A request
// target (path and query) over 64 KiB is 414 {"detail":"URI Too Long"}, header fields over
// 64 KiB in total are 431 {"detail":"Request Header Fields Too Large"}. The executable's HTTP
// parser accepts up to 1 MiB (build.sh --max-http-header-size) so that these answers are ours;
// past 1 MiB, or past about 200 header lines, Bun answers 431 with an empty body and closes.

import type { RequestTarget } from "../request/request-target.ts";
import { HEADERS_TOO_LARGE, URI_TOO_LONG, type ApiError } from "../failures.ts";

export const MAX_REQUEST_TARGET_BYTES = 64 * 1024;
export const MAX_HEADER_BYTES = 64 * 1024;

/** The 414/431 failure of a request over the limits, or null. */
export function oversizedRequest(target: RequestTarget, headers: Headers): ApiError | null {
  const targetLength = target.path.length + (target.query === undefined ? 0 : target.query.length + 1);
  if (targetLength > MAX_REQUEST_TARGET_BYTES) return URI_TOO_LONG();
  let size = 0;
  // As sent: "name: value\r\n" per field.
  headers.forEach((value, name) => {
    size += name.length + value.length + 4;
  });
  if (size > MAX_HEADER_BYTES) return HEADERS_TOO_LARGE();
  return null;
}
