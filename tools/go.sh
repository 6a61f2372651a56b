#!/usr/bin/env bash
# The Go toolchain as the lab's vCenter simulator builds with it: Debian's govmomi sources (golang-github-vmware-
# govmomi-dev in /usr/share/gocode), no modules and no network, the build cache under .tmp/. Runs in lab/vcenter.
# Usage: tools/go.sh build|vet|test ... (the Makefile's lab-build and stage lab of tools/test.sh use it)
#
# The simulator's packages import each other as vcsim/<package>: a GOPATH entry under .tmp/ holds vcsim, a link to
# lab/vcenter, and the command runs in that link, so that ./... names the packages by the paths they import each
# other with. Relative file arguments (build -o ../.build/vcsim-gpu) still resolve from lab/vcenter itself.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
link="$ROOT/.tmp/gopath/src/vcsim"
if [ "$(readlink "$link" 2>/dev/null)" != "$ROOT/lab/vcenter" ]; then
  mkdir -p "$(dirname "$link")" && ln -sfn "$ROOT/lab/vcenter" "$link"
fi
cd "$link"
GOPATH="$ROOT/.tmp/gopath:/usr/share/gocode" GO111MODULE=off GOFLAGS= GOCACHE="$ROOT/.tmp/go-cache" exec go "$@"
