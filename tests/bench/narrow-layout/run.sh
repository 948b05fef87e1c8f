#!/usr/bin/env bash
# Issue 53's narrow layout, measured beside the rollup (no migration): the edge's statement on
# today's wide month rows, the same edge from an int8 copy, an edge at a month's end from the
# copy's totals before the month, today's whole statement, the catalogue; then a day's write
# folded into either layout, and kept as rows of its own instead. Medians of 7, psql's \timing with the serving settings.
#
#   bash tests/bench/narrow-layout/run.sh [database]   (default pce_bench_50k, made by bench.ts)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"; root="$here/../../.."
db="${1:-pce_bench_50k}"; url="${BENCH_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432}/$db"
settings="set work_mem='16MB'; set random_page_cost=1.1; set plan_cache_mode=force_custom_plan; set jit=off; set max_parallel_workers_per_gather=0;"
strip() { grep -v '^\s*--' "$1"; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
timed() { # name, prepare, execute
  { echo "$settings"; echo "$2"; echo '\o /dev/null'; echo '\timing on'; for _ in 1 2 3 4 5 6 7; do echo "$3"; done; } |
    psql -X -q "$url" 2>&1 | awk '/^Time:/ {print $2}' | median | xargs printf "| %s | %s ms |\n" "$1"
}
psql -X -q "$url" -f "$here/make_narrow.sql"
echo "| statement | median |"; echo "|---|---:|"
timed "an edge mid-October, today's month rows (product_costs_edge.sql)" "prepare e(date) as $(strip "$root/sql/queries/product_costs_edge.sql");" "execute e('2026-10-14');"
timed "the same edge, int8 copy" "prepare e(date) as $(strip "$here/narrow_edge.sql");" "execute e('2026-10-14');"
timed "an edge at a month's end, the copy's totals before the month" "prepare e(date) as $(strip "$here/narrow_before.sql");" "execute e('2026-10-14');"
timed "today's statement, last 30 days (product_costs.sql)" "prepare q(date, date, text) as $(strip "$root/sql/queries/product_costs.sql");" "execute q('2026-10-02', '2026-10-31', 'normal');"
timed "the catalogue (product_catalogue.sql)" "prepare c as $(strip "$root/sql/queries/product_catalogue.sql");" "execute c;"
# (The scripts time only their begin ... rollback blocks: the timed statements are those over 20 ms.)
psql -X -q "$url" -f "$here/fold_day.sql" 2>&1 | awk '/^Time:/ && $2 > 20 {n++; printf "| a day folded, %s, run %d | %s ms |\n", (n % 2 ? "wide rows" : "int8 copy"), int((n + 1) / 2), $2}'
psql -X -q "$url" -f "$here/tail_day.sql" 2>&1 | awk '/^Time:/ && $2 > 20 {n++; printf "| a day kept as rows of its own (INSERT), run %d | %s ms |\n", n, $2}'
psql -X -q "$url" -c "drop table narrow_2026_10; drop table tail_days"
