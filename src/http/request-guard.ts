// What the app must not see as it arrives. Size limits answered with a JSON body: a request
// target (path and query) over 64 KiB is 414 {"detail":"URI Too Long"}, header fields over
// 64 KiB in total are 431 {"detail":"Request Header Fields Too Large"}. The executable's HTTP
// parser accepts up to 1 MiB (build.sh --max-http-header-size) so that these answers are ours;
// past 1 MiB, or past about 200 header lines, Bun answers 431 with an empty body and closes.
// And a Host header too short for Elysia's router (see routable), which would misroute.

import { detailResponse } from "./responses.ts";

export const MAX_REQUEST_TARGET_BYTES = 64 * 1024;
export const MAX_HEADER_BYTES = 64 * 1024;

/** The 414/431 answer for a request over the limits, or null. */
export function oversizedRequest(request: Request): Response | null {
  const url = request.url;
  const start = url.indexOf("/", url.indexOf("//") + 2);
  const target = start === -1 ? 1 : url.length - start;
  if (target > MAX_REQUEST_TARGET_BYTES) return detailResponse(414, "URI Too Long");
  let size = 0;
  // As sent: "name: value\r\n" per field.
  request.headers.forEach((value, name) => {
    size += name.length + value.length + 4;
  });
  if (size > MAX_HEADER_BYTES) return detailResponse(431, "Request Header Fields Too Large");
  return null;
}

// Elysia finds the path with url.indexOf("/", 11), assuming "http://" plus a host of at
// least four characters. Bun builds request.url from the Host header, so `Host: x` made
// /external/v1/product-costs route as /v1/product-costs (404). The host plays no part in
// routing here, so a short one is replaced.
const ELYSIA_PATH_SEARCH_FROM = 11;

/** The request itself, or a copy whose URL has a host Elysia can route. */
export function routable(request: Request): Request {
  const url = request.url;
  const hostStart = url.indexOf("//") + 2;
  const pathStart = url.indexOf("/", hostStart);
  if (pathStart === -1 || pathStart >= ELYSIA_PATH_SEARCH_FROM) return request;
  return new Request(url.slice(0, hostStart) + "localhost" + url.slice(pathStart), request);
}
