#!/usr/bin/env bash
# Packages an executable as a .deb with Debian's own dpkg-deb (no other packaging tool):
# /usr/bin/product-cost-export, its three systemd units and its manual page (both printed by
# the executable itself), under /usr/share/doc/product-cost-export the README, docs/*.md,
# the alert rules and dashboard of docs/monitoring/, the sample env (docs/env.example), the
# Debian copyright and a changelog made from the git history, the lintian overrides, the
# maintainer scripts of .ci/deb/ and DEBIAN/md5sums. build.sh runs it (`bash build.sh deb`);
# the real-systemd test and tests/e2e/deb-contents.test.ts run it on the executable they test.
# What it installs, file by file: docs/deb-package.md.
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
# product-cost-export(1), from the tables --help is made from (gzip -9n: no name or time inside).
install -d -m 0755 "$root/usr/share/man/man1"
"$units_from" man-page | gzip -9n > "$root/usr/share/man/man1/$name.1.gz"
chmod 0644 "$root/usr/share/man/man1/$name.1.gz"

doc="$root/usr/share/doc/$name"
install -d -m 0755 "$doc"
install -m 0644 .ci/deb/copyright "$doc/copyright"
# The README and docs/ as in the source tree, so the README's links (docs/...) hold here too.
install -m 0644 README.md "$doc/README.md"
install -d -m 0755 "$doc/docs"
install -m 0644 docs/*.md "$doc/docs/"
# The alert rules and the dashboard, beside the executable they were tested against; where
# earlier packages put them (monitoring/), and as docs/monitoring for the links of the docs.
install -D -m 0644 docs/monitoring/alerts.yml "$doc/monitoring/alerts.yml"
install -D -m 0644 docs/monitoring/grafana-dashboard.json "$doc/monitoring/grafana-dashboard.json"
ln -s ../monitoring "$doc/docs/monitoring"
# Every setting of the service at its default, commented: a start for /etc/product-cost-export/env.
install -m 0644 docs/env.example "$doc/env.example"
install -D -m 0644 .ci/deb/lintian-overrides "$root/usr/share/lintian/overrides/$name"
# A native package's changelog, as Debian policy wants it: one entry for this version, the
# subjects of the commits since the last release tag (v<version>; all of them before the
# first), each wrapped to 80 columns; without git, one line naming the version. Its date
# is the commit's, so one commit makes one changelog (gzip -9n: no name or time inside).
changes() {
  local since
  if ! git rev-parse --verify -q HEAD >/dev/null 2>&1; then
    printf 'Release %s.\n' "$version"
    return
  fi
  since=$(git describe --tags --abbrev=0 --match 'v[0-9]*' HEAD 2>/dev/null || true)
  git log --no-merges --format=%s ${since:+"$since..HEAD"}
}
{
  printf '%s (%s) stable; urgency=medium\n\n' "$name" "$version"
  changes | while IFS= read -r subject; do
    printf '%s\n' "$subject" | fold -s -w 76 | sed -e 's/[[:space:]]*$//' -e '1s/^/  * /' -e '1!s/^/    /'
  done
  printf '\n -- product-cost-export maintainers <product-cost-export@example.org>  %s\n' "$(date -R -d "@${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}")"
} | gzip -9n > "$doc/changelog.gz"
chmod 0644 "$doc/changelog.gz"

install -d -m 0755 "$root/DEBIAN"
install -m 0755 .ci/deb/postinst .ci/deb/prerm .ci/deb/postrm "$root/DEBIAN/"
# Every file's MD5, as dh_md5sums writes it (debsums and dpkg --verify check them).
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/md5sums"
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
