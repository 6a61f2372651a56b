#!/usr/bin/env bash
# Runs the collection's checks, each stage to its end even when an earlier one failed, then prints one line per
# stage and a closing count. Stages: lint sanity lab redfish units docs galaxy matrix integration molecule
# (default: all of them).
# Called by `make test` (after `make deps lab-build`); CI calls `make test`.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PATH="$ROOT/.venv/bin:$PATH"
export ANSIBLE_COLLECTIONS_PATH="$ROOT/.tmp/collections"
export ANSIBLE_ROLES_PATH="$ROOT/roles"
REPORTS="$ROOT/.tmp/reports"
rm -rf "$REPORTS"
mkdir -p "$REPORTS"

stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(lint sanity lab redfish units docs galaxy matrix integration molecule)

# ansible-test needs the collection at a real path named ansible_collections/<namespace>/<name>.
ANSIBLE_TEST_TREE="$ROOT/.tmp/ansible-test/ansible_collections/gpuops/vgpu"
sync_ansible_test_tree() {
  mkdir -p "$ANSIBLE_TEST_TREE"
  rsync -a --delete --exclude .venv --exclude .tmp --exclude .git --exclude lab/.build --exclude tests/output \
    --exclude __pycache__ --exclude .pytest_cache "$ROOT/" "$ANSIBLE_TEST_TREE/"
  # ansible-test asks git which files belong to the collection.
  (cd "$ANSIBLE_TEST_TREE" && { [ -d .git ] || git init -q; } && git add -A >/dev/null 2>&1)
}

# ansible-test with a home of its own under .tmp/ (tools/ansible_test.sh): its sanity environments, apart from those of
# the matrix's cores and of any other checkout, and its offline pip bootstrap.
ansible_test() {
  "$ROOT/tools/ansible_test.sh" "$ROOT/.tmp/ansible-test-home" "$@"
}

stage_lint() {
  ansible-lint --profile production --offline 2>&1 | tail -n 40
  local lint=$?
  # The Prometheus alert rules: syntax, then their unit tests (Debian's prometheus package ships promtool).
  (cd extensions/prometheus && promtool check rules gpu-alerts.yml && promtool test rules gpu-alerts.test.yml) 2>&1 \
    | tail -n 40
  local rules=$?
  [ "$lint" -eq 0 ] && [ "$rules" -eq 0 ]
}

stage_sanity() {
  sync_ansible_test_tree
  # tests/fixtures/ holds outputs and specifications as their sources wrote them (typographic quotes included).
  (cd "$ANSIBLE_TEST_TREE" && ansible_test sanity --local --python 3.11 --color no \
    --exclude lab/ --exclude bench/ --exclude tools/ --exclude .ci/ --exclude extensions/ --exclude tests/fixtures/ \
    2>&1 | tail -n 60)
}

stage_lab() {
  # The lab's own checks: Go vet and tests of the vCenter simulator, then its end-to-end smoke test over pyVmomi.
  (cd lab/vcenter && GOPATH=/usr/share/gocode GO111MODULE=off GOFLAGS= GOCACHE="$ROOT/.tmp/go-cache" \
    go vet . && GOPATH=/usr/share/gocode GO111MODULE=off GOFLAGS= GOCACHE="$ROOT/.tmp/go-cache" go test -count=1 .) \
    2>&1 | tail -n 20 || return 1
  python lab/vcenter/smoke.py 2>&1 | tail -n 5
}

stage_redfish() {
  # DMTF's Redfish service and protocol validators against one lab BMC of each vendor profile, the BMCs in parallel; fails on
  # a failure that lab/bmc/expected_failures.yml does not list.
  python lab/bmc/validate.py --report-dir "$ROOT/.tmp/redfish-validators" 2>&1 | tail -n 40
  local rc=$?
  # Then the clients users run against BMCs (community.general's Redfish modules, sushy, HPE's and Dell's own)
  # against one lab BMC per vendor profile, checked against the BMCs' ground truth.
  pytest -p no:cacheprovider -q -p no:randomly tests/bmc_clients --junitxml="$REPORTS/redfish-clients.xml" 2>&1 \
    | tail -n 40 || rc=1
  return $rc
}

stage_units() {
  sync_ansible_test_tree
  rm -rf "$ANSIBLE_TEST_TREE/tests/output/junit"
  (cd "$ANSIBLE_TEST_TREE" && ansible_test units --local --python 3.11 --color no 2>&1 | tail -n 60)
  local rc=$? xml
  for xml in "$ANSIBLE_TEST_TREE"/tests/output/junit/*.xml; do
    [ -e "$xml" ] && cp "$xml" "$REPORTS/units-$(basename "$xml")"
  done
  return $rc
}

stage_docs() {
  # The docsite as `make docs` builds it (warnings fail), then every module and role page read in headless Chromium.
  pytest -p no:cacheprovider -q tests/docs --junitxml="$REPORTS/docs.xml" 2>&1 | tail -n 30
}

stage_galaxy() {
  ./tools/galaxy_import.sh 2>&1 | tail -n 40
}

stage_matrix() {
  # The older supported ansible-core minors (tools/test-matrix.sh); the stages around it run everything on the newest.
  MATRIX_CORES=${MATRIX_CORES:-2.16 2.17 2.18} ./tools/test-matrix.sh 2>&1 | tail -n 60
}

stage_integration() {
  # Two workers, each with a lab of its own that is reset before every test (tests/integration/conftest.py), in a
  # random order (pytest-randomly): INTEGRATION_SEED=<seed> repeats one. A test file stays on one worker, so a file
  # that needs a topology of its own restarts that worker's lab once rather than at every test.
  local seed=${INTEGRATION_SEED:-$((RANDOM * 32768 + RANDOM))}
  echo "random order: --randomly-seed=$seed (INTEGRATION_SEED=$seed repeats it)"
  # A test that hangs fails after INTEGRATION_TEST_TIMEOUT seconds (pytest-timeout), and the whole stage stops after
  # INTEGRATION_STAGE_TIMEOUT, so that CI always ends with what ran; each result is written to
  # $REPORTS/integration.log as it comes, and the slowest tests close the stage.
  timeout --kill-after=60 "${INTEGRATION_STAGE_TIMEOUT:-3300}" \
    pytest -p no:cacheprovider -rfE -n "${INTEGRATION_WORKERS:-2}" --dist loadfile -p randomly \
    --randomly-seed="$seed" --timeout="${INTEGRATION_TEST_TIMEOUT:-600}" --durations=15 --durations-min=30 \
    --disable-warnings -o console_output_style=classic -v tests/integration --junitxml="$REPORTS/integration.xml" \
    2>&1 | tee "$REPORTS/integration.log" | grep -v -E " (PASSED|SKIPPED|XFAIL)" | tail -n 80
  local status=("${PIPESTATUS[@]}")
  if [ "${status[0]}" -eq 124 ] || [ "${status[0]}" -eq 137 ]; then
    echo "integration: stopped after ${INTEGRATION_STAGE_TIMEOUT:-3300} s; the tests still running then:"
    comm -23 <(grep -E "^tests/integration/" "$REPORTS/integration.log" | sed 's/ *$//' | sort -u) \
      <(sed -n -E 's/^\[gw[0-9]+\] [A-Z]+ (tests\/integration\/[^ ]*).*/\1/p' "$REPORTS/integration.log" | sort -u)
    # The stopped workers never reached their teardown: their labs (tests/integration/conftest.py: one per worker,
    # ports shifted by LAB_PORT_OFFSET + 1000 per worker) would keep their ports from the next run.
    local worker offset
    for ((worker = 0; worker < ${INTEGRATION_WORKERS:-2}; worker++)); do
      offset=$((${LAB_PORT_OFFSET:-0} + 1000 * worker))
      python lab/labctl.py down --state-dir ".tmp/$([ "$offset" -eq 0 ] && echo lab || echo "lab-$offset")" \
        >/dev/null 2>&1 || true
    done
  fi
  return "${status[0]}"
}

stage_molecule() {
  if ! ls extensions/molecule/*/molecule.yml >/dev/null 2>&1; then
    echo "no molecule scenarios"
    return 0
  fi
  # Bounded like the integration stage, so that CI always ends with a summary.
  timeout --kill-after=60 "${MOLECULE_STAGE_TIMEOUT:-1200}" ./tools/molecule.sh "$REPORTS"
}

declare -A status
for stage in "${stages[@]}"; do
  echo "==== $stage"
  start=$SECONDS
  "stage_$stage"
  rc=$?
  status[$stage]="$rc $((SECONDS - start))"
done

# One check per lint/sanity stage, one per test case in the JUnit reports.
counts=$(.venv/bin/python - "$REPORTS" <<'PY'
import glob
import sys
import xml.etree.ElementTree as ET

passed = failed = skipped = 0
for path in glob.glob(sys.argv[1] + "/*.xml"):
    for case in ET.parse(path).getroot().iter("testcase"):
        tags = {child.tag for child in case}
        if tags & {"failure", "error"}:
            failed += 1
        elif "skipped" in tags:
            skipped += 1
        else:
            passed += 1
print(passed, failed, skipped)
PY
)
read -r passed failed skipped <<<"$counts"
overall=0
echo "==== summary"
for stage in "${stages[@]}"; do
  read -r rc seconds <<<"${status[$stage]}"
  if [ "$rc" -eq 0 ]; then word=ok; else word=FAILED; overall=1; fi
  printf '%-12s %-7s %4ss\n' "$stage" "$word" "$seconds"
  case $stage in
    lint|sanity|lab|redfish|galaxy|matrix) if [ "$rc" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi ;;
    *) if [ "$rc" -ne 0 ] && ! ls "$REPORTS/$stage"*.xml >/dev/null 2>&1; then failed=$((failed + 1)); fi ;;
  esac
done
echo "total: $passed passed, $failed failed, $skipped skipped"
exit $overall
