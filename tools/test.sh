#!/usr/bin/env bash
# Runs the collection's checks, each stage to its end even when an earlier one failed, then prints one line per
# stage and a closing count. Stages: lint sanity lab redfish units docs galaxy matrix integration molecule.
# With no arguments (`make test`) all of them run, the short ones side by side in two lanes (LANES below) and the
# integration stage after them on its own; TEST_SERIAL=1 runs them one after the other. Stages named as arguments run
# one after the other, in that order.
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

# Two lanes for 2 cores, of about the same length on a cold machine (stage seconds in docs/development.md). Stages
# that share something they build stay in one lane: sanity and units share the ansible-test tree and home, lint and
# galaxy the checkout that `ansible-galaxy collection build` packs. The lab, redfish and matrix stages start servers on
# ports apart from each other's (tests/lab/vcenter_smoke.py: free ports; lab/bmc/validate.py: 8471 and up;
# tools/test-matrix.sh: LAB_PORT_OFFSET 3000 and up). The integration stage's two workers use both cores.
LANES=("sanity units matrix docs lab redfish" "lint galaxy molecule")
AFTER_LANES=(integration)

stages=("$@")
lanes=()
if [ ${#stages[@]} -eq 0 ]; then
  read -r -a stages <<<"${LANES[*]} ${AFTER_LANES[*]}"
  [ "${TEST_SERIAL:-0}" = 1 ] || lanes=("${LANES[@]}")
fi

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
  { ./tools/go.sh vet ./... && ./tools/go.sh test -count=1 ./...; } 2>&1 | tail -n 20 || return 1
  python tests/lab/vcenter_smoke.py 2>&1 | tail -n 5
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
  # that needs a topology of its own restarts that worker's lab once rather than at every test; the longest files go
  # first (LONG_FILES in tests/integration/conftest.py).
  local seed=${INTEGRATION_SEED:-$((RANDOM * 32768 + RANDOM))}
  echo "random order: --randomly-seed=$seed (INTEGRATION_SEED=$seed repeats it)"
  # A test that hangs fails after INTEGRATION_TEST_TIMEOUT seconds (pytest-timeout), and the whole stage stops after
  # INTEGRATION_STAGE_TIMEOUT, so that CI always ends with what ran; each result is written to
  # $REPORTS/integration.log as it comes, and the slowest tests close the stage.
  # COLUMNS: the closing summary gives each failure's message, not only its name, when the output is a pipe.
  COLUMNS=250 timeout --kill-after=60 "${INTEGRATION_STAGE_TIMEOUT:-3300}" \
    pytest -p no:cacheprovider -rfE -n "${INTEGRATION_WORKERS:-2}" --dist loadfile --no-loadscope-reorder -p randomly \
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

# A stage's output goes to .tmp/stages/<stage>.log and is printed whole when the stage ends, so that stages running
# side by side do not mix their lines; its exit status and seconds go to <stage>.status.
STAGES="$ROOT/.tmp/stages"
rm -rf "$STAGES"
mkdir -p "$STAGES"
run_stage() {
  local stage=$1 start=$SECONDS rc
  "stage_$stage" >"$STAGES/$stage.log" 2>&1
  rc=$?
  echo "$rc $((SECONDS - start))" >"$STAGES/$stage.status"
  {
    flock 9
    echo "==== $stage ($((SECONDS - start)) s, exit $rc)"
    cat "$STAGES/$stage.log"
  } 9>"$STAGES/.print.lock"
}
run_lane() {
  local stage
  for stage in $1; do run_stage "$stage"; done
}
# Stages one after the other, their output as it comes.
run_in_order() {
  local stage start
  for stage in "$@"; do
    echo "==== $stage"
    start=$SECONDS
    "stage_$stage"
    echo "$? $((SECONDS - start))" >"$STAGES/$stage.status"
  done
}

if [ ${#lanes[@]} -gt 0 ]; then
  start=$SECONDS
  echo "==== side by side: $(printf '[%s] ' "${lanes[@]}")"
  pids=()
  for lane in "${lanes[@]}"; do
    run_lane "$lane" &
    pids+=($!)
  done
  wait "${pids[@]}"
  echo "==== the lanes took $((SECONDS - start)) s"
  run_in_order "${AFTER_LANES[@]}"
else
  run_in_order "${stages[@]}"
fi

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
elapsed=$SECONDS
overall=0
echo "==== summary"
for stage in "${stages[@]}"; do
  read -r rc seconds <"$STAGES/$stage.status" 2>/dev/null || { rc=1; seconds=0; }
  if [ "$rc" -eq 0 ]; then word=ok; else word=FAILED; overall=1; fi
  printf '%-12s %-7s %4ss\n' "$stage" "$word" "$seconds"
  case $stage in
    lint|sanity|lab|redfish|galaxy|matrix) if [ "$rc" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi ;;
    *) if [ "$rc" -ne 0 ] && ! ls "$REPORTS/$stage"*.xml >/dev/null 2>&1; then failed=$((failed + 1)); fi ;;
  esac
done
echo "total: $passed passed, $failed failed, $skipped skipped, in $elapsed s"
exit $overall
