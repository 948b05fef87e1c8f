#!/usr/bin/env bash
# The request path's own cost: the server's CPU per conditional request (a 304: the edge, the
# key, the query, the answer's version read, the conditions), two executables alternated. Not
# part of `bun test`:
#
#   bash tests/bench/request-cpu.sh <old executable> <new executable> [database] [runs]
#   MODE=200 bash tests/bench/request-cpu.sh ...   # 200s read from the database instead (ANSWER_CACHE_MB=0)
#
# Each run starts the executable on the database (default pce_bench_50k, made by bench.ts),
# reads one answer's ETag, sends 3,000 conditional requests to warm up, then 20,000 more
# (autocannon, 4 connections) and prints the CPU time the process spent (utime + stime from
# /proc/PID/stat) divided by 20,000, and the requests a second (the database's own time in it). Runs alternate old and new (default 5 each): on a shared
# VM a run moves by ±20 %, so compare the medians.
set -euo pipefail
cd "$(dirname "$0")/../.."
old=$1 new=$2 db=${3:-pce_bench_50k} runs=${4:-5}
key=request-cpu-key-0123456789abcdef
path="/external/v1/product-costs?month_from=2026-10-30&month_to=2026-10-30&segment=sample"
mode=${MODE:-304}
# A 200's own cost, not its rows': a day with no data still runs the whole read (its session, the
# version in its snapshot, the statement).
[ "$mode" = 200 ] && path="/external/v1/product-costs?month_from=2030-06-01&month_to=2030-06-01"
server=${BENCH_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432}
autocannon=node_modules/.bin/autocannon

cpu_per_304() {
  local exe=$1 port=$2
  local cache=256
  [ "$mode" = 200 ] && cache=0
  DATABASE_URL="$server/$db" PRODUCT_COST_API_KEYS=$key PORT=$port HOST=127.0.0.1 LOG_LEVEL=warn ANSWER_CACHE_MB=$cache "$exe" serve >/dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 1 60); do curl -s -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.5; done
  local etag
  etag=$(curl -s -D - -o /dev/null -H "Authorization: Bearer $key" "http://127.0.0.1:$port$path" | sed -n 's/^[Ee][Tt]ag: //p' | tr -d '\r')
  [ "$mode" = 200 ] && etag='"none"' # matches nothing: every request a 200 read from the database
  "$autocannon" -c 4 -a 3000 -H "Authorization=Bearer $key" -H "If-None-Match=$etag" "http://127.0.0.1:$port$path" >/dev/null 2>&1
  local t0 t1
  t0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  local started=$EPOCHREALTIME
  "$autocannon" -c 4 -a 20000 -H "Authorization=Bearer $key" -H "If-None-Match=$etag" "http://127.0.0.1:$port$path" >/dev/null 2>&1
  t1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  local ended=$EPOCHREALTIME
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  python3 -c "print(round(($t1 - $t0) / $(getconf CLK_TCK) * 1e6 / 20000, 1), 'µs CPU,', round(20000 / ($ended - $started)), 'requests/s')"
}

for i in $(seq 1 "$runs"); do
  echo "old, per $mode: $(cpu_per_304 "$old" 18301)"
  echo "new, per $mode: $(cpu_per_304 "$new" 18302)"
done
