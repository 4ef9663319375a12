#!/usr/bin/env bash
# Tests scripts/install-deps.sh, as part of the test command:
# 1. every package it names for any group has an install candidate on this machine, and the
#    set installs together (`--check`: what a fresh machine would be given, whatever is installed
#    here);
# 2. on a machine where nothing is installed (a dpkg-query that reports nothing) and apt-get refuses
#    any package without a candidate, it installs every group, one line per group;
# 3. an optional package whose names the index knows but cannot install is skipped with one line,
#    and a required one is an error that names it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
script="$root/scripts/install-deps.sh"
groups=(build test hevc service tier)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "check-install-deps: FAIL: $*" >&2; failures=$((failures + 1)); }

echo "check-install-deps: --check ${groups[*]}"
"$script" --check "${groups[@]}" || fail "--check: a package has no install candidate here"

# A machine with nothing installed, whose apt-get refuses packages without a candidate.
mkdir -p "$work/bin"
cat >"$work/bin/dpkg-query" <<'EOF'
#!/bin/sh
exit 1
EOF
cat >"$work/bin/apt-get" <<EOF
#!/usr/bin/env bash
# update: nothing; install: refuses a package without a candidate, records the others.
[ "\$1" = update ] && exit 0
for argument in "\$@"; do
    case "\$argument" in install|-*) continue ;; esac
    candidate="\$(LC_ALL=C apt-cache policy "\$argument" | sed -n 's/^ *Candidate: *//p' | head -n 1)"
    if [ -z "\$candidate" ] || [ "\$candidate" = "(none)" ]; then
        echo "E: Package '\$argument' has no installation candidate" >&2
        exit 100
    fi
    echo "\$argument" >>"$work/installed"
done
# A noisy install, as dpkg's is: none of it may reach the terminal when it succeeds.
for i in \$(seq 1 50); do echo "(Reading database ... \$i%"; done
EOF
cat >"$work/bin/sudo" <<'EOF'
#!/bin/sh
[ "$1" = -n ] && shift
exec "$@"
EOF
chmod +x "$work/bin/"*

echo "check-install-deps: a machine with nothing installed"
if ! PATH="$work/bin:$PATH" "$script" "${groups[@]}" >"$work/out" 2>&1; then
    fail "installing on an empty machine failed:"
    cat "$work/out" >&2
fi
cat "$work/out"
lines="$(wc -l <"$work/out")"
# One line for the index, one per group, and at most one skipped optional package.
((lines <= ${#groups[@]} + 2)) || fail "the install printed $lines lines, more than one per group"
grep -q "Reading database" "$work/out" && fail "dpkg's progress reached the terminal"
for package in pkg-config libpng-dev libgif-dev libwebp-dev libheif-dev librsvg2-dev webp python3 curl; do
    grep -qx "$package" "$work/installed" 2>/dev/null || fail "$package was not installed"
done
grep -qxE "libjpeg62-turbo-dev|libjpeg-turbo8-dev" "$work/installed" || fail "neither of libjpeg-turbo's names was installed"

# An index that knows every libavcodec and libjpeg name but has a candidate for none
# (as Debian 12's knows libavcodec61).
cat >"$work/bin/apt-cache" <<'EOF'
#!/usr/bin/env bash
[ "$1" = policy ] || exec /usr/bin/apt-cache "$@"
shift
others=()
for name in "$@"; do
    case "$name" in
        libavcodec*|libjpeg*) printf '%s:\n  Installed: (none)\n  Candidate: (none)\n  Version table:\n' "$name" ;;
        *) others+=("$name") ;;
    esac
done
((${#others[@]} == 0)) || /usr/bin/apt-cache policy "${others[@]}"
EOF
chmod +x "$work/bin/apt-cache"
: >"$work/installed"
echo "check-install-deps: an index with no candidate for libavcodec (optional) and libjpeg-turbo (required)"
status=0
PATH="$work/bin:$PATH" "$script" hevc >"$work/out" 2>&1 || status=$?
cat "$work/out"
grep -q "skipping libavcodec61|libavcodec60|libavcodec59|libavcodec58: optional" "$work/out" || fail "the optional libavcodec was not skipped with a line"
grep -q "cannot install libjpeg62-turbo-dev|libjpeg-turbo8-dev" "$work/out" || fail "a required package without a candidate was not named"
((status != 0)) || fail "a required package without a candidate did not fail the install"
grep -q libavcodec "$work/installed" && fail "a libavcodec without a candidate was installed"
status=0
PATH="$work/bin:$PATH" "$script" --print hevc >"$work/out" 2>&1 || status=$?
grep -q "skipping libavcodec" "$work/out" || fail "--print did not say libavcodec would be skipped"

if ((failures)); then
    echo "check-install-deps: $failures failure(s)" >&2
    exit 1
fi
echo "check-install-deps: OK"
