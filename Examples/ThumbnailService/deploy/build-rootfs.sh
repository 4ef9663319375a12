#!/usr/bin/env bash
# The runtime stage of deploy/Containerfile, outside a container, so that CI checks its steps:
#   1. a release build of ThumbnailService with the Swift standard library and Foundation linked
#      statically (the image then needs no Swift toolchain);
#   2. the binary collected into STAGE/app — it is also its own sandboxed decode helper
#      (NukeIsolation starts it in helper mode), so there is no second file to ship;
#   3. the Debian packages the binary needs at run time, from ldd and dpkg, each with the
#      version apt would install (its install candidate), written to STAGE/packages.txt — what
#      the Containerfile's runtime stage installs;
#   4. a non-root system user (thumbnails, uid 10001) when run as root;
#   5. with --check: the binary started as that user with the root file system read-only (a
#      private mount namespace; only a tmpfs /tmp writable), as `podman run --read-only` would;
#      then /health, /ready, a signed GET thumbnail, an upload, /metrics and a SIGTERM drain.
#
# Usage: deploy/build-rootfs.sh [--stage DIR] [--check] [--binary PATH]
#   --binary PATH: stage an existing build instead (CI passes its debug build, which links the
#   Swift runtime from the toolchain: the listed packages then exclude it).
set -euo pipefail
# ldconfig is in /sbin, which a user's PATH on Debian lacks.
PATH="$PATH:/usr/sbin:/sbin"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
stage="${TMPDIR:-/tmp}/thumbnail-rootfs"
check=no
build=yes
binary=""
while [ $# -gt 0 ]; do
    case "$1" in
        --stage) stage="$2"; shift ;;
        --check) check=yes ;;
        --binary) binary="$2"; build=no; shift ;;
        -h|--help) sed -n '2,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "build-rootfs: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
say() { echo "build-rootfs: $*" >&2; }
swift_locked() { if command -v flock >/dev/null && [ -n "${NUKE_SWIFT_LOCK:-}" ]; then flock "$NUKE_SWIFT_LOCK" swift "$@"; else swift "$@"; fi; }

# 1. Release build.
if [ "$build" = yes ]; then
    say "release build (static Swift standard library)"
    swift_locked build --package-path "$here" -c release --static-swift-stdlib --product ThumbnailService -q
fi
[ -n "$binary" ] || binary="$(swift_locked build --package-path "$here" -c release --static-swift-stdlib --show-bin-path)/ThumbnailService"

# 2. Collect.
rm -rf "$stage"
mkdir -p "$stage/app" "$stage/tmp"
cp "$binary" "$stage/app/ThumbnailService"
strip --strip-unneeded "$stage/app/ThumbnailService" 2>/dev/null || true
say "collected $stage/app/ThumbnailService ($(du -h "$stage/app/ThumbnailService" | cut -f1))"

# 3. Runtime packages: the owner of every library ldd resolves, at its install candidate.
# (Outputs are read whole before grep: grep -q leaving a pipe early is a failure under pipefail.)
linked="$(ldd "$stage/app/ThumbnailService")"
if grep -q "not found" <<< "$linked"; then
    grep "not found" <<< "$linked" >&2
    say "FAIL: libraries missing"; exit 1
fi
if grep -q "libswift" <<< "$linked"; then
    [ "$build" = no ] || { say "FAIL: the release binary links the Swift runtime dynamically"; exit 1; }
    say "note: $binary links the Swift runtime from the toolchain (a debug build); the image's release build does not"
fi
# Linked libraries (ldd), and those the codec shims open on first use with dlopen (HEIF, JPEG XL,
# SVG, fontconfig, and libavcodec for HEVC when installed): their sonames are in the binary.
{
    ldd "$stage/app/ThumbnailService" | awk '/=> \//{print $3}'
    strings "$stage/app/ThumbnailService" | grep -E '^lib[A-Za-z0-9_+-]+\.so\.[0-9.]+$' | sort -u | while read -r soname; do
        # awk reads to the end: leaving early would end ldconfig with SIGPIPE, which pipefail
        # turns into a failure of the whole script.
        ldconfig -p | awk -v name="$soname" '!found && $1 == name && /x86-64|x32|AArch64|64bit/ {print $NF; found = 1}'
    done
} | grep -v "/swift/\|libswift\|libFoundation\|libdispatch\|libBlocksRuntime\|lib_Foundation" | sort -u | while read -r library; do
    real="$(readlink -f "$library")"
    dpkg -S "$real" 2>/dev/null || dpkg -S "$library" 2>/dev/null || dpkg -S "/usr$library" 2>/dev/null || echo "unowned: $library"
done | cut -d: -f1 | sed 's/,.*//' | sort -u > "$stage/owners.txt"
if grep -q "^unowned" "$stage/owners.txt"; then cat "$stage/owners.txt" >&2; say "FAIL: a library no package owns"; exit 1; fi
: > "$stage/packages.txt"
while read -r package; do
    case "$package" in libc6|libgcc-s1|libstdc++6) continue ;; esac  # in every Debian image
    candidate="$(apt-cache policy "$package" 2>/dev/null | awk '/Candidate:/{print $2}')"
    [ -n "$candidate" ] && [ "$candidate" != "(none)" ] || { say "FAIL: $package has no install candidate"; exit 1; }
    echo "$package=$candidate" >> "$stage/packages.txt"
done < "$stage/owners.txt"
rm "$stage/owners.txt"
say "runtime packages ($(wc -l < "$stage/packages.txt")), in $stage/packages.txt:"
sed 's/^/    /' "$stage/packages.txt" >&2

# 4. The non-root user.
user=thumbnails
if [ "$(id -u)" = 0 ]; then
    id "$user" >/dev/null 2>&1 || useradd --system --uid 10001 --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$user"
    chown -R root:root "$stage/app"
    chmod 0755 "$stage/app" "$stage/app/ThumbnailService"
    say "user $user ($(id -u "$user")) runs the service; $stage/app is root's, read-only to it"
else
    user="$(id -un)"
    say "not root: no user created; the check runs as $user"
fi

[ "$check" = yes ] || { say "staged in $stage (--check starts it)"; exit 0; }

# 5. Start it as the image would, and meet it.
if [ "$(id -u)" = 0 ] && ! setpriv --reuid="$user" --regid="$user" --init-groups test -x "$stage/app/ThumbnailService"; then
    say "FAIL: $user cannot reach $stage/app/ThumbnailService (a parent folder is private); pick a --stage it can traverse"
    exit 1
fi
port="${PORT:-18480}"
sources="$stage/sources"
mkdir -p "$sources"
cp "$here/../progressive.jpg" "$sources/photo.jpg"
chmod -R a+rX "$sources"
key="$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')"
log="$stage/service.log"
environment=(THUMBNAIL_HOSTNAME=127.0.0.1 THUMBNAIL_PORT="$port" THUMBNAIL_SOURCE_DIRECTORY="$sources"
             THUMBNAIL_SIGNING_KEY="$key" THUMBNAIL_LOG_FORMAT=json THUMBNAIL_DRAIN_DELAY=1 TMPDIR="$stage/tmp" HOME=/nonexistent)
if [ "$(id -u)" = 0 ] && unshare --mount true 2>/dev/null; then
    say "starting as $user with / read-only and only a tmpfs at $stage/tmp (TMPDIR) writable (mount namespace)"
    TMPDIR_MOUNT="$stage/tmp" unshare --mount --propagation private sh -c '
        mount -t tmpfs -o size=64m,mode=1777 tmpfs "$TMPDIR_MOUNT" && mount -o remount,bind,ro / &&
        exec setpriv --reuid="$0" --regid="$0" --init-groups --no-new-privs env -i "$@"' \
        "$user" "${environment[@]}" "$stage/app/ThumbnailService" > "$log" 2>&1 &
else
    say "starting as $user (no mount namespace here: the root file system stays writable)"
    env -i "${environment[@]}" "$stage/app/ThumbnailService" > "$log" 2>&1 &
fi
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/ready" >/dev/null && break; sleep 0.1; done
fail() { say "FAIL: $*"; cat "$log" >&2; exit 1; }
curl -sf "http://127.0.0.1:$port/health" >/dev/null || fail "/health"
curl -sf "http://127.0.0.1:$port/ready" >/dev/null || fail "/ready"
# A signed GET: HMAC-SHA256 of the path after the signature, Base64url (imgproxy's scheme).
source="$(printf 'local:///photo.jpg' | base64 -w0 | tr '+/' '-_' | tr -d '=')"
path="/fill:128:128/$source"
signature="$(printf '%s' "$path" | openssl dgst -sha256 -mac HMAC -macopt "hexkey:$key" -binary | base64 -w0 | tr '+/' '-_' | tr -d '=')"
status="$(curl -s -o "$stage/get.out" -w '%{http_code} %{content_type}' -H 'Accept: image/webp,*/*' "http://127.0.0.1:$port/$signature$path")"
[ "$status" = "200 image/webp" ] || fail "signed GET answered $status"
status="$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/unsafe$path")"
[ "$status" = 403 ] || fail "an unsigned GET answered $status"
status="$(curl -s -o "$stage/post.out" -w '%{http_code}' --data-binary @"$sources/photo.jpg" "http://127.0.0.1:$port/thumbnail?size=96&format=jpeg")"
[ "$status" = 200 ] || fail "upload answered $status"
metrics="$(curl -sf "http://127.0.0.1:$port/metrics")" || fail "/metrics"
grep -q 'thumbnail_requests_total{route="get",status="200",format="webp"} 1' <<< "$metrics" || fail "/metrics"
grep -q '"request_id"' "$log" || fail "no request_id in the JSON log"
kill -TERM "$server"
wait "$server" || fail "exit status $? after SIGTERM"
trap - EXIT
grep -q '"message":"stopped"' "$log" || fail "no clean stop in the log"
say "OK: started as $user, read-only root, answered a signed GET (WebP), refused an unsigned one, thumbnailed an upload, drained on SIGTERM"
