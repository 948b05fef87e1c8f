#!/usr/bin/env bash
# Packages an executable as a .deb with Debian's own dpkg-deb (no other packaging tool):
# /usr/bin/product-cost-export, its three systemd units (printed by the executable itself),
# the Debian copyright and changelog, the alert rules and dashboard of docs/monitoring/, the
# sample env (docs/env.example), and
# the maintainer scripts of .ci/deb/. build.sh runs
# it (`bash build.sh deb`); the real-systemd test runs it on the executable it tests.
#
#   bash .ci/package-deb.sh <executable> <amd64|arm64> <version> <out-dir> [<executable to print the units with>]
#   DEB_COMPRESSION=gzip bash .ci/package-deb.sh ...   # dpkg-deb's -Z (default xz; the tests take gzip: seconds, not a minute)
#
# The last argument is for a cross-built executable, which cannot run here: the units come
# from the same source either way.
set -euo pipefail
cd "$(dirname "$0")/.."
exe=${1:?usage: .ci/package-deb.sh <executable> <arch> <version> <out-dir> [<units-from>]}
arch=${2:?arch}
version=${3:?version}
out=${4:?out-dir}
units_from=${5:-$exe}
name=product-cost-export

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
install -D -m 0755 "$exe" "$root/usr/bin/$name"
install -d -m 0755 "$root/lib/systemd/system"
"$units_from" systemd-unit service --exec-path "/usr/bin/$name" > "$root/lib/systemd/system/$name.service"
"$units_from" systemd-unit refresh --exec-path "/usr/bin/$name" > "$root/lib/systemd/system/$name-refresh.service"
"$units_from" systemd-unit refresh-timer > "$root/lib/systemd/system/$name-refresh.timer"
chmod 0644 "$root/lib/systemd/system/"*

doc="$root/usr/share/doc/$name"
install -d -m 0755 "$doc"
install -m 0644 .ci/deb/copyright "$doc/copyright"
# The alert rules and the dashboard, beside the executable they were tested against.
install -D -m 0644 docs/monitoring/alerts.yml "$doc/monitoring/alerts.yml"
install -D -m 0644 docs/monitoring/grafana-dashboard.json "$doc/monitoring/grafana-dashboard.json"
# Every setting of the service at its default, commented: a start for /etc/product-cost-export/env.
install -m 0644 docs/env.example "$doc/env.example"
install -D -m 0644 .ci/deb/lintian-overrides "$root/usr/share/lintian/overrides/$name"
# A native package's changelog, as Debian policy wants it (gzip -9n: no name or time inside).
{
  printf '%s (%s) stable; urgency=medium\n\n' "$name" "$version"
  printf '  * Release %s (commit %s).\n\n' "$version" "$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
  printf ' -- product-cost-export maintainers <product-cost-export@example.org>  %s\n' "$(date -R -d "@${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}")"
} | gzip -9n > "$doc/changelog.gz"
chmod 0644 "$doc/changelog.gz"

install -d -m 0755 "$root/DEBIAN"
install -m 0755 .ci/deb/postinst .ci/deb/prerm .ci/deb/postrm "$root/DEBIAN/"
cat > "$root/DEBIAN/control" <<CONTROL
Package: $name
Version: $version
Architecture: $arch
Maintainer: product-cost-export maintainers <product-cost-export@example.org>
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: libc6 (>= 2.27), systemd (>= 247)
Section: net
Priority: optional
Description: read-only HTTP API of product costs over a date range
 Answers one question for a product-profit view, BI tools and scripts: what
 did each product cost over a date range (purchase cost, inbound freight,
 shipping to customer, warehouse fees, in USD), for callers holding a Bearer
 API key, from the company's PostgreSQL. One self-contained executable, run
 by systemd as a sandboxed dynamic user; configuration in
 /etc/product-cost-export (started once /etc/product-cost-export/env exists).
CONTROL

mkdir -p "$out"
deb="$out/${name}_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Z"${DEB_COMPRESSION:-xz}" --build "$root" "$deb" >/dev/null
echo "package-deb.sh: wrote $deb"
