#!/usr/bin/env bash
# Writes <dir>/SHA256SUMS for the executables in <dir> (product-cost-export and
# product-cost-export-<target>, not the source maps) and the .deb packages, then checks it,
# so a release is never published with sums that do not verify. build.sh runs it after
# release builds.
#
#   bash .ci/checksums.sh dist
#   sha256sum -c --ignore-missing SHA256SUMS    # on the VM, next to the downloaded file
set -euo pipefail
dir=${1:?usage: .ci/checksums.sh <dir>}
cd "$dir"
files=()
for f in product-cost-export product-cost-export-* product-cost-export_*.deb; do
  if [ -f "$f" ] && [[ "$f" != *.map ]]; then files+=("$f"); fi
done
if [ ${#files[@]} -eq 0 ]; then
  echo "checksums.sh: no product-cost-export executable in $dir" >&2
  exit 1
fi
sha256sum -- "${files[@]}" > SHA256SUMS
sha256sum --quiet -c SHA256SUMS
echo "checksums.sh: $dir/SHA256SUMS lists ${#files[@]} executable(s): ${files[*]}"
