#!/usr/bin/env bash
# Builds dist/product-cost-export: one self-contained executable (no Bun, node_modules or
# sql/ needed where it runs). Works from a fresh clone on a machine with only Node.js and
# npm: Bun itself comes from the npm registry when it is not installed.
#
#   bash build.sh                 # the executable for this machine
#   bash build.sh test [args]     # then run the test suite (bun test [args]) with the same Bun
#   TARGETS="linux-x64-baseline linux-arm64" bash build.sh   # also release builds + SHA256SUMS
#   bash build.sh deb             # also the .deb packages (amd64 and arm64) + SHA256SUMS
set -euo pipefail
cd "$(dirname "$0")"

BUN_VERSION=1.4.5
if command -v bun >/dev/null 2>&1; then
  BUN=bun
else
  # A private copy under .bun-tool/, so no root and no global install is needed.
  if [ ! -x .bun-tool/node_modules/bun/bin/bun.exe ]; then
    echo "build.sh: Bun not found, installing bun@$BUN_VERSION from the npm registry into .bun-tool/" >&2
    npm install --silent --no-save --no-audit --no-fund --prefix .bun-tool "bun@$BUN_VERSION" >&2
  fi
  BUN="$PWD/.bun-tool/node_modules/bun/bin/bun.exe"
  [ -x "$BUN" ] || BUN="$PWD/.bun-tool/node_modules/.bin/bun"
fi

"$BUN" install --frozen-lockfile
# The embedded database's seeds (migrated schema, and the same with demo data ending
# today), made once here so the executable never runs initdb at start.
"$BUN" src/backends/embedded/build-seeds.ts .build/seeds
"$BUN" x tsc --noEmit -p .

version=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' package.json)
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
if [ -n "$(git status --porcelain 2>/dev/null)" ]; then commit="$commit-dirty"; fi
# The manual page's date: the commit's day, so the same commit builds the same page.
commit_date=$(git log -1 --format=%cs 2>/dev/null || true)

# The worker is a second entrypoint: PGlite runs there, off the HTTP thread.
# --no-compile-autoload-*: the executable must not pick up a stray .env or bunfig.toml
# from the directory it is started in. --max-http-header-size: request lines up to 64 KiB
# are answered normally; the app itself answers 414/431 JSON above that (up to this cap).
# Minified except for identifiers: class names stay, so a log line names the error type
# (ConfigError, PostgresError) instead of a minified letter (--keep-names does not do it).
build() { # build <bun --target> <outfile>
  "$BUN" build --compile --minify-syntax --minify-whitespace --sourcemap --bytecode --format=esm \
    --no-compile-autoload-dotenv --no-compile-autoload-bunfig \
    --compile-exec-argv=--max-http-header-size=1048576 \
    --define "BUILD_VERSION=\"$version\"" --define "BUILD_COMMIT=\"$commit\"" --define "BUILD_COMMIT_DATE=\"$commit_date\"" \
    --target="$1" --outfile "$2" src/main.ts src/backends/embedded/worker.ts
}

mkdir -p dist
build bun dist/product-cost-export
echo "build.sh: wrote dist/product-cost-export ($version, commit $commit)"

if [ "${1:-}" = deb ]; then
  # The packages carry the builds that run on every CPU of their architecture (x64 without
  # AVX2 too), with the units printed by this machine's build (the same source).
  TARGETS="${TARGETS:-linux-x64-baseline linux-arm64}"
  for target in linux-x64-baseline linux-arm64; do
    case " $TARGETS " in *" $target "*) ;; *) TARGETS="$TARGETS $target" ;; esac
  done
fi

if [ -n "${TARGETS:-}" ]; then
  for target in $TARGETS; do
    build "bun-$target" "dist/product-cost-export-$target"
  done
  if [ "${1:-}" = deb ]; then
    rm -f dist/product-cost-export_*.deb
    bash .ci/package-deb.sh dist/product-cost-export-linux-x64-baseline amd64 "$version" dist dist/product-cost-export
    bash .ci/package-deb.sh dist/product-cost-export-linux-arm64 arm64 "$version" dist dist/product-cost-export
  fi
  bash .ci/checksums.sh dist
  echo "build.sh: release builds and dist/SHA256SUMS written"
fi

if [ "${1:-}" = test ]; then
  shift
  # tests/proxy/nginx-proxy.test.ts runs docs/reverse-proxy.md's configuration in a real
  # nginx. A fresh CI machine may lack it: as root with apt-get, install it (Debian's
  # nginx-light is enough); otherwise that test fails and says what to install.
  if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "build.sh: nginx not found, installing nginx-light with apt-get for tests/proxy/nginx-proxy.test.ts" >&2
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx-light; } >&2 ||
        echo "build.sh: installing nginx-light failed; tests/proxy/nginx-proxy.test.ts will fail" >&2
    else
      echo "build.sh: nginx not found (Debian: apt-get install nginx-light, as root); tests/proxy/nginx-proxy.test.ts will fail" >&2
    fi
  fi
  # Generous per-test timeout: some tests start executables, databases and clusters on a loaded 2-core machine.
  exec "$BUN" test --timeout 60000 "$@"
fi
