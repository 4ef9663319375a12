#!/usr/bin/env bash
# Installs the system packages NukeCodecs needs, when they are missing (Debian and Ubuntu).
#
#   scripts/install-deps.sh [GROUP...]          install what the groups need and is missing
#   scripts/install-deps.sh --print [GROUP...]  say what would be installed, install nothing
#   scripts/install-deps.sh --check [GROUP...]  check that everything the groups name would be
#                                               installable on a fresh machine (exit 1 if not)
#
# `build` (the codec libraries and pkg-config) is always included. Other groups:
#   test      the reference tools the tests compare with (dwebp, djxl), python3 for the docs check, and
#             Ghostscript's default_cmyk.icc (libgs-common, optional: its CMYK tests skip without it)
#   hevc      FFmpeg's libavcodec: optional, NukeHEIF decodes large 8-bit HEVC with it
#   service   curl, for the thumbnail service's load test
#   tier      Varnish and HAProxy, for the service's cache tier test (optional: skipped, with a
#             line, where they have no install candidate)
# A group may also be a Debian package name.
#
# A package with several names (libjpeg-turbo's headers; libavcodec, whose ABI version is in its
# name) is chosen by install candidate (`apt-cache policy`), never by index entry: an index may
# know a name (another package refers to it) that has no version to install. An optional package
# without a candidate is skipped with one line; a required one is an error.
set -euo pipefail

# One entry per package: alternatives separated by `|`, tried in order; a trailing `?` marks it
# optional. libavcodec: 61 on Debian 13, 60 on Ubuntu 24.04, 59 on Debian 12, 58 on Ubuntu 22.04.
group_entries() {
    case "$1" in
        build) echo "pkg-config libpng-dev libgif-dev libwebp-dev libheif-dev librsvg2-dev liblcms2-dev libtiff-dev libjxl-dev libjpeg62-turbo-dev|libjpeg-turbo8-dev" ;;
        test) echo "webp libjxl-tools python3 libgs-common?" ;;
        hevc) echo "libavcodec61|libavcodec60|libavcodec59|libavcodec58?" ;;
        service) echo "curl" ;;
        tier) echo "varnish? haproxy? curl" ;;
        *) echo "$1" ;;
    esac
}

mode=install
groups=(build)
for argument in "$@"; do
    case "$argument" in
        --print) mode=print ;;
        --check) mode=check ;;
        -h|--help) sed -n '2,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "install-deps: unknown option $argument (see --help)" >&2; exit 2 ;;
        build) ;;
        # Older spellings of the groups.
        webp|python3) groups+=(test) ;;
        libavcodec) groups+=(hevc) ;;
        curl) groups+=(service) ;;
        *) groups+=("$argument") ;;
    esac
done
# Each group once, in the order first named.
declare -A seen=()
unique=()
for group in "${groups[@]}"; do
    [ -n "${seen[$group]:-}" ] && continue
    seen[$group]=1
    unique+=("$group")
done
groups=("${unique[@]}")

say() { echo "install-deps: $*" >&2; }

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

# The version apt would install, or nothing when it has none (unknown name, or known but `(none)`).
# `apt-cache policy` is slow to start, so every name of the groups is asked in one call.
declare -A candidates=()
candidates_read=0
read_candidates() {
    local names=() group entry name version
    for group in "${groups[@]}"; do
        for entry in $(group_entries "$group"); do names+=($(tr '|' ' ' <<<"${entry%\?}")); done
    done
    while IFS= read -r line; do
        if [[ "$line" =~ ^([^[:space:]]+):$ ]]; then
            name="${BASH_REMATCH[1]}"
        elif [[ "$line" =~ ^[[:space:]]+Candidate:[[:space:]]*(.*)$ ]]; then
            version="${BASH_REMATCH[1]}"
            [ "$version" != "(none)" ] && candidates[$name]="$version"
        fi
    done < <(LC_ALL=C apt-cache policy "${names[@]}" 2>/dev/null)
    candidates_read=1
}
# Reads the candidates in this shell: `$(...)` subshells see the cache, but cannot fill it.
candidate() {
    ((candidates_read)) || read_candidates
    echo "${candidates[$1]:-}"
}

# Whether apt's package index has been downloaded (a fresh container starts without one).
index_present() { compgen -G "/var/lib/apt/lists/*_Packages" >/dev/null || compgen -G "/var/lib/apt/lists/*_Packages.*" >/dev/null; }

sudo=""
if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
log="$(mktemp "${TMPDIR:-/tmp}/install-deps.XXXXXX")"
trap 'rm -f "$log"' EXIT

# Runs a command with its output in the log; on failure prints the log and exits with its status.
quietly() {
    local status=0
    "$@" >"$log" 2>&1 || status=$?
    if ((status)); then
        say "failed: $*"
        cat "$log" >&2
        exit "$status"
    fi
}

index_updated=0
update_index() {
    ((index_updated)) && return 0
    index_updated=1
    say "updating the package index"
    quietly $sudo env DEBIAN_FRONTEND=noninteractive apt-get update
}

# Picks the alternative to install for an entry: the first with an install candidate.
choose() {
    local alternative
    for alternative in $(tr '|' ' ' <<<"${1%\?}"); do
        if [ -n "$(candidate "$alternative")" ]; then echo "$alternative"; return 0; fi
    done
    return 0
}

if ! command -v dpkg-query >/dev/null || ! command -v apt-get >/dev/null; then
    if [ "$mode" = install ]; then
        say "this is not a Debian or Ubuntu system (apt-get not found)."
        say "install libjpeg-turbo, libpng, giflib, libwebp, libheif, librsvg, libjxl and pkg-config with your package manager."
        exit 1
    fi
    say "apt-get not found: nothing to print or check"
    exit 1
fi

# --print and --check need apt's index to name candidates; they download it only when it is absent.
ensure_index() {
    index_present && return 0
    if [ -n "$sudo" ] && ! sudo -n true 2>/dev/null; then
        say "apt's package index is empty: run \`sudo apt-get update\` first"
        exit 1
    fi
    update_index
}

# --check looks past what is installed here: what would a fresh machine be given?
if [ "$mode" = check ]; then
    ensure_index
    read_candidates
    failures=0
    chosen=()
    for group in "${groups[@]}"; do
        for entry in $(group_entries "$group"); do
            package="$(choose "$entry")"
            if [ -n "$package" ]; then
                chosen+=("$package")
                echo "$group: $package $(candidate "$package")"
            elif [[ "$entry" == *\? ]]; then
                echo "$group: skipped ${entry%\?} (optional, no install candidate)"
            else
                echo "$group: FAIL: no install candidate for ${entry}" >&2
                failures=$((failures + 1))
            fi
        done
    done
    # The whole set must also resolve together, as one `apt-get install` of them would.
    if ((${#chosen[@]})) && ! LC_ALL=C apt-get install --simulate --no-install-recommends "${chosen[@]}" >"$log" 2>&1; then
        echo "FAIL: apt-get cannot install ${chosen[*]} together:" >&2
        cat "$log" >&2
        failures=$((failures + 1))
    fi
    if ((failures)); then exit 1; fi
    echo "install-deps: every package has an install candidate and they install together"
    exit 0
fi

# What each group lacks on this machine.
declare -A needed=()
any_needed=0
for group in "${groups[@]}"; do
    for entry in $(group_entries "$group"); do
        satisfied=0
        for alternative in $(tr '|' ' ' <<<"${entry%\?}"); do
            if installed "$alternative"; then satisfied=1; break; fi
        done
        if ((!satisfied)); then
            needed[$group]+="$entry "
            any_needed=1
        fi
    done
done

if ((!any_needed)); then
    [ "$mode" = print ] && say "nothing to install"
    exit 0
fi

if [ "$mode" = install ]; then update_index; else ensure_index; fi
read_candidates

status=0
for group in "${groups[@]}"; do
    [ -z "${needed[$group]:-}" ] && continue
    packages=()
    for entry in ${needed[$group]}; do
        package="$(choose "$entry")"
        if [ -n "$package" ]; then
            packages+=("$package")
        elif [[ "$entry" == *\? ]]; then
            say "skipping ${entry%\?}: optional, and none of these names has an install candidate here"
        else
            say "cannot install $entry: none of these names has an install candidate here (apt-cache policy)"
            status=1
        fi
    done
    ((${#packages[@]})) || continue
    if [ "$mode" = print ]; then
        echo "$group: ${packages[*]}"
        continue
    fi
    say "installing $group: ${packages[*]}"
    quietly $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${packages[@]}"
done
exit "$status"
