#!/usr/bin/env bash
# Runs the ansible-test found on PATH with a home of its own: tools/ansible_test.sh <home> <ansible-test arguments>.
# ansible-test keeps its sanity virtual environments in ~/.ansible/test/venv/<test>/<python>/<hash>, keyed by the
# Python version and the requirements but not by the ansible-core version, so two runs that share a HOME (two cores
# of the matrix side by side, two checkouts of one user) build the same environment at once and can leave it broken.
# Each caller passes a home of its own under .tmp/ instead (the sanity stage one, each core of the matrix one), which
# also keeps the caller's HOME out of the results.
# Before the run: the user's pip configuration is linked in (ansible-test passes pip HOME but no PIP_* variable),
# ansible-test's offline pip bootstrap is written (tools/offline_get_pip.sh), and an environment that a killed run
# left half-written is removed so that ansible-test builds it again. ansible-test itself removes one without its
# marker.txt, which it writes last; this also removes one that has the marker but whose Python cannot start or that
# holds the leftovers of an interrupted pip run (site-packages/~*, that pip reports as "Ignoring invalid distribution").
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: $0 <home> <ansible-test arguments>" >&2; exit 2; }
home=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$home"
home=$(cd "$home" && pwd)

# The user's pip configuration (an index, a proxy, a certificate), not its cache.
if [ "$home" != "$HOME" ]; then
  for conf in "${XDG_CONFIG_HOME:-$HOME/.config}/pip/pip.conf:.config/pip/pip.conf" \
    "$HOME/.pip/pip.conf:.pip/pip.conf"; do
    if [ -f "${conf%%:*}" ]; then
      mkdir -p "$(dirname "$home/${conf#*:}")"
      ln -sfn "${conf%%:*}" "$home/${conf#*:}"
    fi
  done
fi

HOME="$home" "$here/offline_get_pip.sh" python || exit 1

for venv in "$home"/.ansible/test/venv/*/*/*/; do
  [ -d "$venv" ] || continue
  venv=${venv%/}
  [ -e "$venv/marker.txt" ] || continue  # ansible-test rebuilds it
  if ! "$venv/bin/python" -c pass >/dev/null 2>&1 \
    || compgen -G "$venv/lib/python*/site-packages/~*" >/dev/null; then
    echo "ansible-test: removing the broken environment $venv; ansible-test builds it again"
    rm -rf "$venv"
  fi
done

HOME="$home" exec ansible-test "$@"
