# Shared by run.sh and steady-state.sh (sourced, not run): their common flags, root, apt-get and
# a Python with the modules they need.
#
# Before sourcing, set HELP_LINES (the lines of the script's header that --help prints). After it:
# ROOT, INSTALL, BUILD, PASS (the other arguments, for the Python driver), and the functions
# as_root, apt_install, fetch_photos and find_python.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
INSTALL=1
BUILD=1
PASS=()
while [ $# -gt 0 ]; do
    case "$1" in
        --no-install) INSTALL=0 ;;
        --no-build) BUILD=0 ;;
        -h|--help) sed -n "$HELP_LINES" "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) PASS+=("$1") ;;
    esac
    shift
done

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else return 1; fi
}

APT_UPDATED=0
apt_update_once() {
    if [ "$APT_UPDATED" = 0 ]; then
        as_root apt-get update -qq >&2
        APT_UPDATED=1
    fi
}

# apt_install PACKAGE...: installs them (the index updated once first).
apt_install() {
    say "installing $* with apt-get"
    apt_update_once && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
}

# fetch_photos DIR PACKAGE...: the photographs of Debian's wallpaper packages in DIR/PACKAGE,
# fetched with `apt-get download` and unpacked with `dpkg-deb -x` (never installed) when missing.
fetch_photos() {
    local photos="$1" package scratch
    shift
    for package in "$@"; do
        [ -d "$photos/$package/usr" ] && continue
        [ "$INSTALL" = 1 ] || { say "no photographs in $photos/$package (run without --no-install)"; exit 1; }
        say "fetching $package (apt-get download, dpkg-deb -x)"
        scratch="$(mktemp -d)"
        chmod 755 "$scratch"   # apt's _apt user writes the download here
        if ! (cd "$scratch" && apt-get download -qq "$package" >&2); then
            apt_update_once
            (cd "$scratch" && apt-get download -qq "$package" >&2)
        fi
        mkdir -p "$photos/$package.partial"
        dpkg-deb -x "$scratch"/*.deb "$photos/$package.partial"
        mv "$photos/$package.partial" "$photos/$package"
        rm -rf "$scratch"
    done
}

# find_python CHECK VENV PACKAGE...: sets PY to a Python for which `CHECK PY` succeeds: the real
# interpreter (not a pyenv shim script, so that Python rows time Python, not a shell), else a venv
# in VENV made before; with INSTALL, the packages are installed with pip --user, or into a new
# venv in VENV when pip refuses. Returns 1 when none passes the check.
find_python() {
    local check="$1" venv="$2"
    shift 2
    PY="$(python3 -c 'import sys; print(sys.executable)')"
    if ! "$check" "$PY" && [ -x "$venv/bin/python" ] && "$check" "$venv/bin/python"; then
        PY="$venv/bin/python"
    fi
    if ! "$check" "$PY" && [ "$INSTALL" = 1 ]; then
        say "installing $* with pip --user"
        if ! "$PY" -m pip install --quiet --user "$@" >&2 || ! "$check" "$PY"; then
            say "pip --user refused: using a venv in $venv"
            "$PY" -m venv "$venv" >&2
            "$venv/bin/python" -m pip install --quiet "$@" >&2
            PY="$venv/bin/python"
        fi
    fi
    "$check" "$PY"
}
