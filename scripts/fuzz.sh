#!/usr/bin/env bash
# Fuzzes NukeCodecs with libFuzzer and AddressSanitizer (Fuzz/NukeFuzz).
#
#   scripts/fuzz.sh TARGET [SECONDS]   fuzz one target (jpeg, png, gif, webp, heif, svg, tiff, bmp,
#                                      ico, xbm, jxl, registry, wire: helper
#                                      conversations sent over a socket pair with
#                                      descriptors attached, read by the host's own
#                                      reader, then encoded)
#                                      for SECONDS (default 300), seeded from Fixtures/ and
#                                      ../shared/corpora when present; a crash is written to
#                                      out/fuzz/crashes/ and the script exits non-zero
#   scripts/fuzz.sh --ci [SECONDS]     replay Fixtures/regressions/ through every target, then
#                                      fuzz each target for SECONDS (default 20)
#
# The working corpus of each target grows in out/fuzz/TARGET (not committed). Every crash found
# is fixed and its input kept in Fixtures/regressions/TARGET/ so that CI replays it.
set -euo pipefail
# The Swift runtime's crash reporter would run inside AddressSanitizer's report; LeakSanitizer
# ignores what system libraries keep on purpose (Fuzz/lsan.supp).
export SWIFT_BACKTRACE=enable=no
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export LSAN_OPTIONS="suppressions=$root/Fuzz/lsan.supp:print_suppressions=0"
targets=(jpeg png gif webp heif svg tiff bmp ico xbm jxl registry wire)

build() {
    echo "fuzz: building NukeFuzz with libFuzzer and AddressSanitizer" >&2
    # lld: gold fails on the sanitizer runtime's debug information.
    swift build -c release --scratch-path .build-fuzz --product NukeFuzz \
        -Xswiftc -sanitize=fuzzer,address -Xcc -fsanitize=fuzzer-no-link,address -Xswiftc -use-ld=lld >&2
    echo "$root/.build-fuzz/release/NukeFuzz"
}

seeds() {
    local target="$1" folders=()
    case "$target" in
        jpeg) folders=(jpeg output color) ;;
        png) folders=(png apng) ;;
        gif) folders=(gif) ;;
        webp) folders=(webp) ;;
        heif) folders=(heif) ;;
        svg) folders=(svg) ;;
        tiff) folders=(tiff) ;;
        bmp) folders=(bmp) ;;
        ico) folders=(ico cur) ;;
        xbm) folders=(xbm) ;;
        jxl) folders=(jxl) ;;
        registry) folders=(jpeg png apng gif webp heif svg tiff output color bmp ico cur xbm jxl) ;;
        # Helper conversations: the seeds scripts/make-wire-seeds.py writes (honest and hostile).
        wire) folders=(wire) ;;
    esac
    for folder in "${folders[@]}"; do
        [ -d "Fixtures/$folder" ] && echo "Fixtures/$folder"
        # The public corpora seed the targets whose library survives them in process; librsvg's
        # and libheif's hold known crashers of those libraries (they run isolated in the tests).
        case "$target" in registry | heif | svg) ;; *) [ -d "../shared/corpora/$folder" ] && echo "../shared/corpora/$folder" ;; esac
    done
    [ -d "Fixtures/regressions/$target" ] && echo "Fixtures/regressions/$target"
    return 0
}

fuzz() {
    local binary="$1" target="$2" seconds="$3"
    mkdir -p "out/fuzz/$target" out/fuzz/crashes
    local dirs
    mapfile -t dirs < <(seeds "$target")
    echo "fuzz: $target for ${seconds}s" >&2
    # -timeout: an input slower than 10 s is a hang; -rss_limit_mb: the limits keep decodes small.
    # heif decodes HEVC with FFmpeg's libavcodec when it is installed, which NukeHEIF otherwise
    # uses only for images over 1 MB; registry keeps the default (libde265 for these sizes).
    local hevc=""
    [ "$target" = heif ] && hevc=ffmpeg
    NUKE_HEIF_HEVC_DECODER="$hevc" NUKE_FUZZ_TARGET="$target" "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2560 \
        -artifact_prefix="out/fuzz/crashes/$target-" -print_final_stats=1 "out/fuzz/$target" "${dirs[@]}" 2>"out/fuzz/$target.log" || {
        echo "fuzz: $target FAILED; the input is in out/fuzz/crashes/, the report in out/fuzz/$target.log" >&2
        tail -40 "out/fuzz/$target.log" >&2
        return 1
    }
    grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|cov: " "out/fuzz/$target.log" | tail -3 >&2
}

if [ "${1:-}" = "--ci" ]; then
    seconds="${2:-20}"
    binary="$(build)"
    mkdir -p out
    for target in "${targets[@]}"; do
        if [ -d Fixtures/regressions ]; then
            # Without -max_total_time and with files as arguments, libFuzzer runs each input once.
            mapfile -t inputs < <(find Fixtures/regressions -type f ! -name '*.md' | sort)
            if [ ${#inputs[@]} -gt 0 ]; then
                NUKE_FUZZ_TARGET="$target" "$binary" -timeout=10 "${inputs[@]}" >/dev/null 2>"out/fuzz-replay-$target.log" || {
                    echo "fuzz: replaying Fixtures/regressions through $target FAILED" >&2
                    tail -40 "out/fuzz-replay-$target.log" >&2
                    exit 1
                }
            fi
        fi
    done
    echo "fuzz: Fixtures/regressions replayed through every target" >&2
    for target in "${targets[@]}"; do fuzz "$binary" "$target" "$seconds"; done
    exit 0
fi

target="${1:?usage: scripts/fuzz.sh TARGET [SECONDS] | --ci [SECONDS]}"
seconds="${2:-300}"
binary="$(build)"
fuzz "$binary" "$target" "$seconds"
