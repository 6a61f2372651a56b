#!/usr/bin/env bash
# Builds the collection's HTML docsite into .tmp/docs/build/html (`make docs`): lints the collection's docs, lays out
# the Sphinx site with `antsibull-docs sphinx-init`, then runs the build script it writes, which renders every module,
# plugin and role page with antsibull-docs and builds them and the guides of docs/ with Sphinx, warnings as errors.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SITE="$ROOT/.tmp/docs"
export ANSIBLE_COLLECTIONS_PATH="$ROOT/.tmp/collections"
COLLECTION="$ANSIBLE_COLLECTIONS_PATH/ansible_collections/gpuops/vgpu"

(cd "$COLLECTION" && antsibull-docs lint-collection-docs --plugin-docs .)

rm -rf "$SITE"
mkdir -p "$SITE"
chmod 755 "$SITE"  # sphinx-init writes only into a directory no one else can write to
antsibull-docs sphinx-init --use-current --fail-on-error --dest-dir "$SITE" --no-add-antsibull-docs-version \
  --project gpuops.vgpu --copyright 'gpuops maintainers' --title 'gpuops.vgpu documentation' gpuops.vgpu >/dev/null
cat "$ROOT/tools/docs/conf_local.py" >>"$SITE/conf.py"
GPUOPS_DOCS_GUIDES="$ROOT/docs" "$SITE/build.sh"
echo "docsite: $SITE/build/html/index.html"
