#!/usr/bin/env bash
# Renders a case-map SVG in headless Chromium (Debian's package) and checks the
# picture pixel by pixel against the report it came from.
#   svg_in_chromium.sh MAP.svg DOMAIN_REPORT.json OUT_DIR
set -euo pipefail
svg=$1 report=$2 out=$3
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "chromium is not installed (scripts/test.sh installs it)"; exit 1; }
read -r width height < <(sed -n 's/.*<svg [^>]*width="\([0-9]*\)" height="\([0-9]*\)".*/\1 \2/p' "$svg" | head -1)
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars \
  --user-data-dir="$profile" --force-device-scale-factor=1 --window-size="${width},${height}" \
  --screenshot="$out/map.png" "file://$(realpath "$svg")" >/dev/null 2>&1
/usr/bin/python3 "$(dirname "$0")/check_svg_png.py" "$svg" "$out/map.png" "$report"
