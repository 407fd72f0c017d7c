#!/bin/sh
# Start the deepseek-harness reference adapter (spec/vectors.md §10) over the checkout in $HARNESS_DIR.
set -e
: "${HARNESS_DIR:?set HARNESS_DIR to a built deepseek-harness checkout (pnpm install done)}"
HERE=$(cd "$(dirname "$0")" && pwd)
# Node >= 22 must be first on PATH (the harness uses Promise.withResolvers); DSH_NODE_DIR prepends one.
if [ -n "${DSH_NODE_DIR:-}" ]; then PATH="$DSH_NODE_DIR:$PATH"; export PATH; fi
cd "$HARNESS_DIR"
exec "$HARNESS_DIR/node_modules/.bin/tsx" --tsconfig "$HARNESS_DIR/tsconfig.base.json" "$HERE/adapter.mts"
