#!/usr/bin/env bash
# ctest python.install: `cmake --install BUILD --component python` into a scratch DESTDIR puts the
# package, the module and the pytest11 entry point into the interpreter's site-packages; pytest
# then loads the plugin by itself (no -p) and the example's summary line appears. A plain
# install (the command's tree) holds no Python file.
# Usage: check_install.sh CMAKE BUILD_DIR PYTHON SITE_DIR EXAMPLES_DIR SCRATCH
set -euo pipefail
cmake=$1 build=$2 python=$3 site=$4 examples=$5 scratch=$6
rm -rf "$scratch" && mkdir -p "$scratch"
DESTDIR="$scratch/dest" "$cmake" --install "$build" --component python >/dev/null
for f in bitproof/__init__.py bitproof/pytest_plugin.py bitproof-*.dist-info/entry_points.txt; do
  compgen -G "$scratch/dest$site/$f" >/dev/null || { echo "missing after install: $site/$f"; exit 1; }
done
"$cmake" --install "$build" --prefix "$scratch/plain" >/dev/null
if find "$scratch/plain" -name '*.py' -o -name '_bitproof*' | grep -q .; then
  echo "a plain install holds the Python package"; exit 1
fi
cd "$scratch"
PYTHONPATH="$scratch/dest$site" "$python" -m pytest -q -p no:cacheprovider "$examples"
