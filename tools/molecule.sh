#!/usr/bin/env bash
# Runs every molecule scenario under extensions/molecule, one after another, and writes one JUnit report per
# scenario into the reports directory (molecule-<scenario>.xml) with its log next to it. Exits non-zero when a
# scenario fails. Installs what the scenarios need when it is missing: podman and its helpers, debootstrap, and
# molecule with the podman driver and testinfra in .venv. The guest image is built by lab/guests/guest-image.sh.
#
# Usage: tools/molecule.sh <reports-dir> [scenario...]
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
REPORTS=${1:?usage: tools/molecule.sh <reports-dir> [scenario...]}
shift
mkdir -p "$REPORTS"
REPORTS=$(cd "$REPORTS" && pwd)
export PATH="$ROOT/.venv/bin:$PATH"

APT_PACKAGES=(podman runc uidmap fuse-overlayfs slirp4netns debootstrap)
PIP_PACKAGES=("molecule==26.10.0" "molecule-plugins[podman]==26.10.12" "pytest-testinfra==10.2.2")

install_missing() {
  local missing=() pkg
  for pkg in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
      echo "molecule: missing Debian packages: ${missing[*]} (run: sudo apt-get install -y ${missing[*]})" >&2
      return 1
    fi
    echo "molecule: installing ${missing[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null || return 1
  fi
  if ! .venv/bin/python -c "import molecule, molecule_plugins.podman, testinfra" 2>/dev/null; then
    echo "molecule: installing ${PIP_PACKAGES[*]} into .venv"
    .venv/bin/pip install -q "${PIP_PACKAGES[@]}" || return 1
  fi
}

# A scenario that stops before its verifier leaves no report; this one says which step failed.
junit_failure() {
  local scenario=$1 step=$2 log=$3
  python3 - "$REPORTS/molecule-$scenario.xml" "$scenario" "$step" "$log" <<'PY'
import re
import sys
from xml.sax.saxutils import escape, quoteattr

path, scenario, step, log = sys.argv[1:]
with open(log, errors="replace") as handle:
    tail = "".join(handle.readlines()[-60:])
tail = re.sub(r"[\x00-\x08\x0b-\x1f]", "", re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", tail))
with open(path, "w") as out:
    out.write('<?xml version="1.0" encoding="utf-8"?>\n<testsuites><testsuite name=%s tests="1" failures="1">'
              '<testcase classname="molecule" name=%s><failure message=%s>%s</failure></testcase></testsuite>'
              '</testsuites>\n' % (quoteattr("molecule-" + scenario), quoteattr(scenario),
                                   quoteattr("%s failed" % step), escape(tail)))
PY
}

count() {
  python3 - "$1" <<'PY'
import sys
import xml.etree.ElementTree as ET

passed = failed = 0
for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    if any(child.tag in ("failure", "error") for child in case):
        failed += 1
    elif not any(child.tag == "skipped" for child in case):
        passed += 1
print("%d passed, %d failed" % (passed, failed))
PY
}

install_missing || exit 1
lab/guests/guest-image.sh >/dev/null || exit 1
export GPUOPS_MOLECULE_REPORTS=$REPORTS
# molecule installs the collection into ~/.ansible/collections before each scenario; a home of its own keeps that
# copy (and molecule's cache) under .tmp, so it can never shadow the checkout for ansible-lint or ansible-playbook.
export HOME="$PWD/.tmp/molecule/home"
mkdir -p "$HOME"

scenarios=("$@")
if [ ${#scenarios[@]} -eq 0 ]; then
  for file in extensions/molecule/*/molecule.yml; do
    scenarios+=("$(basename "$(dirname "$file")")")
  done
fi

overall=0
for scenario in "${scenarios[@]}"; do
  log="$REPORTS/molecule-$scenario.log"
  rm -f "$REPORTS/molecule-$scenario.xml"
  start=$SECONDS
  # Each log line carries the seconds since the scenario started.
  molecule --no-debug test -s "$scenario" 2>&1 | while IFS= read -r line; do
    printf '%4d %s\n' $((SECONDS - start)) "$line"
  done >"$log"
  rc=${PIPESTATUS[0]}
  seconds=$((SECONDS - start))
  if [ ! -s "$REPORTS/molecule-$scenario.xml" ]; then
    step=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -o "$scenario ➜ [a-z_]*: Executed: Failed" | head -n 1 \
      | sed 's/.*➜ \([a-z_]*\):.*/\1/')
    junit_failure "$scenario" "${step:-molecule}" "$log"
  fi
  if [ "$rc" -ne 0 ]; then
    overall=1
    sed 's/\x1b\[[0-9;]*m//g' "$log" | tail -n 40
  fi
  printf 'molecule %-16s %s in %ss (%s)\n' "$scenario" "$([ "$rc" -eq 0 ] && echo ok || echo FAILED)" "$seconds" \
    "$(count "$REPORTS/molecule-$scenario.xml")"
done
exit $overall
