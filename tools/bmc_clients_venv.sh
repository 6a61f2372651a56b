#!/usr/bin/env bash
# Makes .tmp/venv-bmc-clients from tests/requirements-bmc-clients.txt (the Redfish client libraries that
# tests/bmc_clients runs against the lab BMCs), again when that file changes; prints the venv's python.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="$PWD/.tmp/venv-bmc-clients"
REQUIREMENTS=tests/requirements-bmc-clients.txt

want=$(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)
if [ "$(cat "$VENV/.requirements.sha256" 2>/dev/null)" != "$want" ]; then
  rm -rf "$VENV"
  "${PYTHON:-python3}" -m venv "$VENV" >&2
  "$VENV/bin/pip" install -q -r "$REQUIREMENTS" 2>&1 | grep -v "^WARNING: Location" >&2 || true
  "$VENV/bin/python" -c "import sushy, redfish.rest.v1" && echo "$want" >"$VENV/.requirements.sha256"
fi
echo "$VENV/bin/python"
