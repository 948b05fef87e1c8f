#!/usr/bin/env bash
# 304s against /healthz on the same machine and run (issue 30's target: 304s at 16 connections
# at least 5,000 a second and 30 % of /healthz), each executable in turn, alternated. Not part
# of `bun test`. Needs wrk (Debian: apt-get install wrk) and a generated database
# (tests/bench/bench.ts: pce_bench_50k) migrated by the newest of the executables.
#
#   bash tests/bench/revalidation.sh <executable> [<other executable> ...] [-- rounds]
#
# Per executable and round: the service on pce_bench_50k, the October 2026 answer read once
# for its ETag, then wrk -t2 -c16 for 8 s sending If-None-Match with it, then /healthz for 4 s.
set -euo pipefail
rounds=3
bins=()
while [ $# -gt 0 ]; do
  if [ "$1" = "--" ]; then rounds=$2; break; fi
  bins+=("$1"); shift
done
db_url="${BENCH_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432}/${BENCH_DATABASE:-pce_bench_50k}"
port=18080
key=bench-key-0123456789abcdef
url="http://127.0.0.1:$port/external/v1/product-costs?month_from=2026-10-01&month_to=2026-10-31"
run() {
  DATABASE_URL=$db_url PRODUCT_COST_API_KEYS=$key PORT=$port HOST=127.0.0.1 LOG_LEVEL=warn "$1" >/dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.1; done
  local etag
  etag=$(curl -s -o /dev/null -D - -H "Authorization: Bearer $key" "$url" | sed -n 's/^[Ee][Tt][Aa][Gg]: *//p' | tr -d '\r')
  local r304 rh
  r304=$(wrk -t2 -c16 -d8s -H "Authorization: Bearer $key" -H "If-None-Match: $etag" "$url" | sed -n 's/Requests\/sec: *//p')
  rh=$(wrk -t2 -c16 -d4s "http://127.0.0.1:$port/healthz" | sed -n 's/Requests\/sec: *//p')
  kill "$pid"; wait "$pid" 2>/dev/null || true
  echo "$1: 304 $r304/s, /healthz $rh/s, 304 ÷ /healthz $(awk "BEGIN {printf \"%.0f\", 100 * $r304 / $rh}") %, load $(cut -d' ' -f1 /proc/loadavg)"
}
for _ in $(seq "$rounds"); do for b in "${bins[@]}"; do run "$b"; done; done
