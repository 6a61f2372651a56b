#!/usr/bin/env bash
# Galaxy's checks of an upload (galaxy-importer, settings in tools/galaxy/galaxy-importer.cfg) on the tarball that
# `make build` writes; fails on any error or warning. The importer lives in .tmp/venv-galaxy-importer, made from
# tests/requirements-galaxy-importer.txt and made again when that file changes.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VENV="$ROOT/.tmp/venv-galaxy-importer"
REQUIREMENTS=tests/requirements-galaxy-importer.txt
LOG="$ROOT/.tmp/galaxy-importer.log"

want=$(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)
if [ "$(cat "$VENV/.requirements.sha256" 2>/dev/null)" != "$want" ]; then
  rm -rf "$VENV"
  "${PYTHON:-python3}" -m venv "$VENV"
  "$VENV/bin/pip" install -q -r "$REQUIREMENTS" 2>&1 | grep -v "^WARNING: Location" || true
  "$VENV/bin/python" -c "import galaxy_importer" && echo "$want" >"$VENV/.requirements.sha256"
fi

version=$(sed -n 's/^version: *//p' galaxy.yml)
ansible-galaxy collection build --force --output-path "$ROOT/.tmp/dist" . >/dev/null
# The importer writes importer_result.json into its working directory.
cd "$ROOT/.tmp"
GALAXY_IMPORTER_CONFIG="$ROOT/tools/galaxy/galaxy-importer.cfg" PATH="$VENV/bin:$PATH" \
  "$VENV/bin/python" -m galaxy_importer.main "$ROOT/.tmp/dist/gpuops-vgpu-$version.tar.gz" >"$LOG" 2>&1 || {
  tail -n 40 "$LOG"
  exit 1
}
if grep -E '^(WARNING|ERROR)' "$LOG"; then
  echo "galaxy-importer: warnings or errors above (whole log: $LOG)"
  exit 1
fi
grep -E '^Importer processing completed successfully' "$LOG"
