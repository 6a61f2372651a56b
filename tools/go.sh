#!/usr/bin/env bash
# The Go toolchain as the lab's vCenter simulator builds with it: Debian's govmomi sources (golang-github-vmware-
# govmomi-dev in /usr/share/gocode), no modules and no network, the build cache under .tmp/. Runs in lab/vcenter.
# Usage: tools/go.sh build|vet|test ... (the Makefile's lab-build and stage lab of tools/test.sh use it)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT/lab/vcenter"
GOPATH=/usr/share/gocode GO111MODULE=off GOFLAGS= GOCACHE="$ROOT/.tmp/go-cache" exec go "$@"
