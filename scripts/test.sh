#!/usr/bin/env bash
# The test command: installs what is missing, runs every test, then the integration apps.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# webp: dwebp, the reference the corpus tests compare WebP decodes with.
"$root/scripts/install-deps.sh" webp
swift build --build-tests
swift test --skip-build 2>&1 | tee "${TMPDIR:-/tmp}/nukecodecs-test.log"
"$root/scripts/integration.sh"
