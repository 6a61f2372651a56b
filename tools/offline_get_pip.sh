#!/usr/bin/env bash
# ansible-test bootstraps pip in its sanity virtual environments with a get-pip script it downloads from a host this
# network cannot reach; it takes a cached one first. This writes, for every pip version that the ansible-test of the
# given Python (default: python on PATH) asks for, a cached script that does the same offline with ensurepip.
set -euo pipefail
python=${1:-python}
cache="$HOME/.ansible/test/cache"
mkdir -p "$cache"
ansible_test=$("$python" -c 'import ansible_test, os; print(os.path.dirname(ansible_test.__file__))')
versions=$(grep -hoE "pip='[0-9.]+'" "$ansible_test/_internal/python_requirements.py" | grep -oE "[0-9.]+" | sort -u)
for version in $versions; do
  cat >"$cache/get_pip_${version//./_}.py" <<'PY'
import os
import subprocess
import sys

env = dict(os.environ)
env.pop("PIP_CONFIG_FILE", None)
subprocess.run([sys.executable, "-m", "ensurepip", "--upgrade"], check=True, env=env)
args = [a for a in sys.argv[1:] if a not in ("--disable-pip-version-check", "--no-setuptools", "--no-wheel")]
if args:
    subprocess.run([sys.executable, "-m", "pip", "install"] + args, check=True, env=env)
PY
done
