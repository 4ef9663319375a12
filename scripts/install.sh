#!/usr/bin/env bash
# Builds `nuke` and NukePipeline's `nuke-fetch` and installs them side by side, so that
# `nuke fetch URL... --out DIR` works (nuke runs the nuke-fetch beside it).
#
#   scripts/install.sh                  release builds, into ~/.local/bin
#   scripts/install.sh --prefix DIR     into DIR/bin
#   scripts/install.sh --debug          debug builds (the test command's: they are built already)
#
# Installs the system packages the codecs need when missing, as the demo does. The first
# release build of nuke-fetch also builds SwiftNIO, AsyncHTTPClient and swift-nio-ssl's BoringSSL.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prefix="$HOME/.local"
configuration=release
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix="$2"; shift 2 ;;
        --debug) configuration=debug; shift ;;
        -h|--help) sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
"$root/scripts/install-deps.sh"
flags=(-c "$configuration")
# Release: the Swift standard library and Foundation linked in (lld), as the demo builds nuke.
[ "$configuration" = release ] && flags+=(--static-swift-stdlib -Xswiftc -use-ld=lld)
swift build --package-path "$root" "${flags[@]}" --product nuke
swift build --package-path "$root/NukePipeline" "${flags[@]}" --product nuke-fetch
mkdir -p "$prefix/bin"
install -m 755 "$(swift build --package-path "$root" -c "$configuration" --show-bin-path)/nuke" "$prefix/bin/nuke"
install -m 755 "$(swift build --package-path "$root/NukePipeline" -c "$configuration" --show-bin-path)/nuke-fetch" "$prefix/bin/nuke-fetch"
# nuke finds the nuke-fetch beside it before any on PATH.
env -u NUKE_FETCH "$prefix/bin/nuke" fetch --help > /dev/null
echo "install: nuke and nuke-fetch are in $prefix/bin"
case ":$PATH:" in
    *":$prefix/bin:"*) ;;
    *) echo "install: $prefix/bin is not on PATH; add it, or run $prefix/bin/nuke" ;;
esac
