#!/usr/bin/env bash
# The test command: installs what is missing, runs every test, then the integration apps.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# test: dwebp, the reference the corpus tests compare WebP decodes with, and python3 for the
# documentation check; hevc: FFmpeg's libavcodec, NukeHEIF's HEVC decoder for large images,
# optional for users, tested here against libde265 (skipped, with a line, where it has no candidate).
# tier: Varnish and HAProxy for the thumbnail service's cache tier (skipped where they have none).
"$root/scripts/install-deps.sh" test hevc tier
# Every package install-deps.sh names can be installed on this machine, as on a fresh one.
"$root/scripts/check-install-deps.sh"
# `swift build -c release` at the root builds every executable target, the tests' helper included:
# none may use `@testable import` (a release build does not compile modules for testing).
executables=$(swift package describe --type json | python3 -c '
import json, sys
print("\n".join(t["path"] for t in json.load(sys.stdin)["targets"] if t["type"] == "executable"))')
if grep -rln '^@testable import' $executables; then
    echo "test: an executable target uses @testable import; swift build -c release would fail" >&2
    exit 1
fi
swift build --build-tests
# The log in the checkout (out/ is ignored): a fixed name in /tmp is another user's file on a shared machine.
mkdir -p "$root/out"
swift test --skip-build 2>&1 | tee "$root/out/test.log"
# Every bomb in Tests/BombCorpus rejected with less than 1 MB allocated (every malloc counted).
"$(swift build --show-bin-path)/NukeBombAllocations"
"$root/scripts/integration.sh"
# DocC: every library product's catalogue builds without a warning; NukeCore documents every public symbol.
"$root/scripts/docs.sh"

# AddressSanitizer: the suite again under ASan (UndefinedBehaviorSanitizer too, in the C shims: Swift has no -sanitize=undefined on Linux), except the
# isolation tests (helpers set RLIMIT_AS, which ASan's shadow memory cannot live under) and the
# CLI tests (they run the normal build's binary). lld: gold fails on the sanitizer runtime.
swift build --build-tests --sanitize=address --scratch-path .build-asan -Xswiftc -use-ld=lld -Xcc -fsanitize=undefined
ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1 \
    swift test --skip-build --sanitize=address --scratch-path .build-asan --skip "NukeIsolationTests|nukeTests"

# Fuzzing: the saved regression inputs through every target, then each target briefly.
"$root/scripts/fuzz.sh" --ci 15
