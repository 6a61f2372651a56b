#!/usr/bin/env bash
# The supported ansible-core minors (meta/runtime.yml: requires_ansible): on each, the sanity tests whose outcome
# depends on the core and the unit tests; on the oldest and the newest, the lab integration smoke (one module per
# client). Each core gets a virtual environment of its own under .tmp/matrix/, made again when tests/requirements.txt
# changes, an ansible-test tree of its own and a home of its own for ansible-test (.tmp/matrix/home-<minor>: its sanity
# environments, which ansible-test keys by Python and requirements but not by core; tools/ansible_test.sh), so two
# cores run side by side (MATRIX_JOBS, default 2) and share nothing that they build.
# `make test-matrix` runs every core; MATRIX_CORES="2.16 2.17" picks some. Ends with one line per part and its
# seconds, and exits non-zero when any part failed.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
MATRIX="$ROOT/.tmp/matrix"

# The newest patch of each minor that installs on Python 3.11.
declare -A CORE=([2.16]=2.16.19 [2.17]=2.17.14 [2.18]=2.18.19 [2.19]=2.19.14)
read -r -a cores <<<"${MATRIX_CORES:-2.16 2.17 2.18 2.19}"
# The oldest and the newest supported core.
SMOKE_CORES=" 2.16 2.19 "
# What the tests and the lab need besides ansible-core, pinned by tests/requirements.txt.
PACKAGES=(pyvmomi requests jmespath PyYAML pytest pytest-xdist pytest-randomly jsonschema sushy-tools)
# The sanity tests that run the collection through the core's own code: documentation loading, the module import
# sandbox, the argument spec and doc checks, meta/runtime.yml's schema. The others (pep8, pylint, yamllint and
# the like) check the files with tools of their own and run in `make test`'s sanity stage on the newest core.
SANITY_TESTS=(ansible-doc import validate-modules runtime-metadata action-plugin-docs)
# A few integration tests against the lab, one or two per client: vCenter SOAP, vLCM REST, Redfish (every vendor
# profile), and a role (its argument spec checked by the core, a real change, a rerun that changes nothing).
SMOKE_TESTS=(
  tests/integration/test_gpu_info.py::test_cluster_hosts_match_ground_truth
  tests/integration/test_vlcm_info.py::test_image_and_compliance_of_a_cluster
  tests/integration/test_bmc_info.py::test_identity_bios_power_and_thermal_match_ground_truth
  tests/integration/test_role_host_graphics.py::test_the_cluster_gets_shared_direct_and_a_rerun_changes_nothing
  tests/integration/test_role_host_graphics.py::test_arguments_are_validated_before_anything_runs
)
JOBS=${MATRIX_JOBS:-2}
PYTHON=${PYTHON:-python3}

venv() {
  local minor=$1 dir="$MATRIX/venv-$1" want site
  want=$( (echo "${CORE[$minor]} ${PACKAGES[*]}"; cat requirements.txt tests/requirements.txt) | sha256sum | cut -d' ' -f1)
  if [ "$(cat "$dir/.requirements.sha256" 2>/dev/null)" != "$want" ]; then
    rm -rf "$dir"
    "$PYTHON" -m venv "$dir" || return 1
    # tests/requirements.txt pins the versions; its ansible-core (and the packages built on it) give way to the
    # core under test.
    grep -vE '^(-r|ansible|antsibull|molecule|redfish-|kubernetes-|pytest-testinfra|Sphinx|sphinx|myst|selenium)' \
      tests/requirements.txt >"$dir.constraints"
    "$dir/bin/pip" install -q -c "$dir.constraints" "ansible-core==${CORE[$minor]}" "${PACKAGES[@]}" \
      2>&1 | grep -v "^WARNING: Location"
    # grep reads the whole answer: with -q it would stop early and break the pipe under pipefail.
    "$dir/bin/ansible" --version | grep "core ${CORE[$minor]}" >/dev/null || return 1
    echo "$want" >"$dir/.requirements.sha256"
  fi
  # The collections the integration tests use besides this one (ansible.posix's json callback reads the results,
  # community.general's redfish_info is an independent client): the copies that the ansible package of .venv
  # carries, found by ansible-core in the virtual environment's site-packages.
  site=$("$dir/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])') || return 1
  for collection in ansible/posix community/general; do
    mkdir -p "$site/ansible_collections/$collection"
    rsync -a --delete "$ROOT/.venv/lib/python3.11/site-packages/ansible_collections/$collection/" \
      "$site/ansible_collections/$collection/"
  done
}

tree() {
  local tree="$MATRIX/tree-$1/ansible_collections/gpuops/vgpu"
  mkdir -p "$tree"
  rsync -a --delete --exclude .venv --exclude .tmp --exclude .git --exclude lab/.build --exclude tests/output \
    --exclude __pycache__ --exclude .pytest_cache "$ROOT/" "$tree/"
  (cd "$tree" && { [ -d .git ] || git init -q; } && git add -A >/dev/null 2>&1)
  echo "$tree"
}

# One core, its parts one after the other; each part's result goes to $MATRIX/results-<core> as "part rc seconds".
run_core() {
  local minor=$1 bin="$MATRIX/venv-$1/bin" log="$MATRIX/log-$1" results="$MATRIX/results-$1" start tree rc
  : >"$results"
  exec >"$log" 2>&1
  start=$SECONDS
  venv "$minor"
  rc=$?
  echo "venv $rc $((SECONDS - start))" >>"$results"
  [ "$rc" -eq 0 ] || return 1
  tree=$(tree "$minor")
  # ansible-test with this core's home (tools/ansible_test.sh).
  local ansible_test=("$ROOT/tools/ansible_test.sh" "$MATRIX/home-$minor")
  start=$SECONDS
  (cd "$tree" && PATH="$bin:$PATH" "${ansible_test[@]}" sanity --local --python 3.11 --color no \
    --exclude lab/ --exclude bench/ --exclude tools/ --exclude .ci/ --exclude extensions/ \
    $(printf -- '--test %s ' "${SANITY_TESTS[@]}"))
  echo "sanity $? $((SECONDS - start))" >>"$results"
  start=$SECONDS
  (cd "$tree" && PATH="$bin:$PATH" "${ansible_test[@]}" units --local --python 3.11 --color no)
  echo "units $? $((SECONDS - start))" >>"$results"
  if [[ $SMOKE_CORES == *" $minor "* ]]; then
    start=$SECONDS
    # Each core's smoke starts labs of its own, on ports of its own.
    LAB_PORT_OFFSET=$((${LAB_PORT_OFFSET:-0} + 3000 + 300 * (${minor#2.} - 16))) \
      ANSIBLE_COLLECTIONS_PATH="$ROOT/.tmp/collections" PATH="$bin:$PATH" \
      "$bin/pytest" -p no:cacheprovider -p no:randomly -q -n 1 "${SMOKE_TESTS[@]}"
    echo "smoke $? $((SECONDS - start))" >>"$results"
  fi
}

mkdir -p "$MATRIX"
start=$SECONDS
pids=()
for minor in "${cores[@]}"; do
  [ -n "${CORE[$minor]:-}" ] || { echo "no such core in the matrix: $minor (one of ${!CORE[*]})"; exit 2; }
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
  run_core "$minor" &
  pids+=($!)
done
wait "${pids[@]}"

overall=0
for minor in "${cores[@]}"; do
  while read -r part rc seconds; do
    if [ "$rc" -eq 0 ]; then word=ok; else word=FAILED; overall=1; tail -n 40 "$MATRIX/log-$minor"; fi
    printf 'ansible-core %-8s %-7s %-7s %4ss\n' "${CORE[$minor]}" "$part" "$word" "$seconds"
  done <"$MATRIX/results-$minor"
  grep -q '^units ' "$MATRIX/results-$minor" || { echo "ansible-core ${CORE[$minor]} did not finish"; overall=1; }
done
echo "matrix: ${cores[*]} in $((SECONDS - start)) s"
exit $overall
