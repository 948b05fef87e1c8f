#!/usr/bin/env bash
# `migrate` from nothing on an ETL's database: the contract tables and the daily rows of a
# benchmark dataset (bench.ts or dataset.ts made it), without any of this service's objects;
# each run on a fresh copy of that database, executables alternated run by run.
#
#   bash tests/bench/migrate-time.sh [--db pce_bench_50k] [--runs 2] <executable> [<executable> ...]
#
# BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432) is the server. The copy's
# template (<db>_contract) is made once and kept; drop it to make it again. Prints one line
# per run: the executable, the load average before it, migrate's wall time and its
# "refreshed" line (the rollup build's steps in milliseconds).
set -euo pipefail

server="${BENCH_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432}"
db=pce_bench_50k
runs=2
binaries=()
while [ $# -gt 0 ]; do
  case "$1" in
    --db) db="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    *) binaries+=("$1"); shift ;;
  esac
done
[ ${#binaries[@]} -gt 0 ] || { echo "usage: $0 [--db DB] [--runs N] <executable> ..." >&2; exit 2; }

root="$(cd "$(dirname "$0")/../.." && pwd)"
template="${db}_contract"
copy="${db}_migrate_time"
psql_() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }

if [ -z "$(psql_ -At "$server/postgres" -c "select 1 from pg_database where datname = '$template'")" ]; then
  echo "making $template: the contract tables and $db's rows (minutes)" >&2
  psql_ "$server/postgres" -c "create database $template"
  psql_ "$server/$template" -f "$root/sql/migrations/0001_contract_tables.sql" >/dev/null
  pg_dump --data-only -t products -t product_daily_costs "$server/$db" | psql_ "$server/$template" >/dev/null
  psql_ "$server/$template" -c "vacuum analyze"
fi

for run in $(seq 1 "$runs"); do
  for binary in "${binaries[@]}"; do
    psql_ "$server/postgres" -c "drop database if exists $copy with (force)" -c "create database $copy template $template" -c "checkpoint"
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    started=$(date +%s.%N)
    refreshed=$(DATABASE_URL="$server/$copy" LOG_FORMAT=json "$binary" migrate 2>&1 | grep '"msg":"refreshed"' || true)
    ended=$(date +%s.%N)
    # The rollup as migrate built it, beside the daily table with its indexes.
    size=$(psql_ -At "$server/$copy" -c "select round(sum(pg_total_relation_size(c.oid)) filter (where c.relname like 'product_cost_%')
      / pg_total_relation_size('product_daily_costs'), 2) || '× the daily table'
      from pg_class c where c.relkind = 'r' and c.relnamespace = 'public'::regnamespace")
    printf 'run %s, %s (load %s): %.1f s; rollup %s; %s\n' "$run" "$binary" "$load" "$(echo "$ended - $started" | bc)" "$size" \
      "$(echo "$refreshed" | grep -o '"step_ms":{[^}]*}')"
  done
done
psql_ "$server/postgres" -c "drop database if exists $copy with (force)"
