#!/usr/bin/env bash
# The test command on a busy machine: scripts/test.sh runs beside one CPU-bound process per core
# (a user's laptop or a CI runner is rarely idle). Passes when the test command passes; prints how
# long it took.
#
#   scripts/busy-check.sh              run the test command beside the load
#   BUSY_CHECK_COMMAND=... scripts/busy-check.sh   another command beside the same load
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
command="${BUSY_CHECK_COMMAND:-$root/scripts/test.sh}"
cores="$(nproc)"
spinners=()
stop() { for pid in "${spinners[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap stop EXIT
# Plain busy loops at normal priority: they take a whole core each, as a parallel build does.
for _ in $(seq "$cores"); do
    bash -c 'while :; do :; done' &
    spinners+=($!)
done
echo "busy-check: $cores CPU-bound processes (${spinners[*]}) beside: $command" >&2
started=$(date +%s)
status=0
bash -c "$command" || status=$?
elapsed=$(( $(date +%s) - started ))
echo "busy-check: exit $status after $((elapsed / 60)) min $((elapsed % 60)) s beside $cores CPU-bound processes" >&2
exit "$status"
