#!/usr/bin/env python3
"""Thumbnail benchmark driver: nuke against vipsthumbnail, Pillow and djpeg, in one table.

    measure.py --nuke PATH [--runs N] [--inputs DIR] [--cache DIR] [--out FILE] [--size S] [--quality Q]

Usually started by run.sh, which installs the tools and builds nuke first.

Every command is a process of its own. Its CPU time (ru_utime + ru_stime, all threads) and peak
resident memory (ru_maxrss) are what the kernel reports to os.wait4 for that process: figures from
the OS, not from the tools. A process inherits its parent's resident size as the starting point of
its ru_maxrss (fork copies the counters; exec keeps the old image's high-water mark), so the tools
are not spawned from this (large) Python process: each is started as a background job of a fresh
/bin/sh, which exits at once, and this driver, a child subreaper (prctl PR_SET_CHILD_SUBREAPER),
adopts the tool and waits for it with os.wait4. The floor left is /bin/sh's size, about 1 MiB; the
table's notes give it (the /bin/true row).

Per test group: one warm-up run of every tool, then --runs rounds, each running every tool once
(nuke, vips, Pillow, then the next round starting one further along), so machine noise hits all
alike. Medians are reported. Each output is checked (exists, decodes, fits in SIZE x SIZE with its
longer side within a pixel of the expected one, or the full size for PNM) and its quality measured:
PSNR against Pillow's LANCZOS resize (reducing_gap=None) of the fully decoded input. A missing or
failing tool shows n/a with the reason.

Table-driven: add an input format by adding a line to THUMBNAIL_FORMATS (and to make-inputs.py's
INPUTS for a generated input); rows of formats that `nuke formats` does not decode are skipped.
"""

import argparse
import ctypes
import datetime
import json
import math
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
from PIL import Image, ImageOps

HERE = os.path.dirname(os.path.abspath(__file__))

# Input formats: make-inputs.py key, file extensions (as `nuke formats --json` lists them),
# thumbnail outputs made from such an input (the input's own format first, then JPEG).
THUMBNAIL_FORMATS = [
    ("jpeg", ("jpg", "jpeg"), ("jpg",)),
    ("png", ("png",), ("png", "jpg")),
    ("webp", ("webp",), ("webp", "jpg")),
    ("gif", ("gif",), ("gif", "jpg")),
    ("heic", ("heic", "heif"), ("jpg",)),
    ("avif", ("avif",), ("avif", "jpg")),
    ("svg", ("svg",), ("png",)),
    ("tiff", ("tif", "tiff"), ("jpg",)),
]

# Full-size decodes to Netpbm: input format key, nuke's output extension, the reference tool.
FULL_DECODES = [
    ("jpeg", "pam", "djpeg"),
]

# nuke ÷ other tool: (CPU limit, peak memory limit, strict), None where there is no target.
# The targets: ≤ 0.8 × vipsthumbnail's CPU and ≤ 1.0 × its peak memory; faster than
# Pillow (its memory is reported, without a target).
TARGETS = {
    "vips": (0.80, 1.00, False),
    "Pillow": (1.00, None, True),
    "djpeg": (1.10, None, False),
}

LOSSY = ("jpg", "jpeg", "webp", "heic", "avif")
LOST = -1000
SH_LAUNCH = '"$@" </dev/null >"$NUKE_BENCH_STDOUT" & echo $!'


class Measurement:
    def __init__(self, cpu, maxrss_kib, wall, status, stderr):
        self.cpu = cpu
        self.maxrss_kib = maxrss_kib
        self.wall = wall
        self.status = status
        self.stderr = stderr


class Spawner:
    """Runs one command and returns the kernel's rusage for that process (see the module doc)."""

    def __init__(self):
        self.adopting = False
        if sys.platform.startswith("linux"):
            try:
                libc = ctypes.CDLL(None, use_errno=True)
                self.adopting = libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
            except (OSError, AttributeError):
                self.adopting = False

    def run(self, argv, stdout_path=None, timeout=600.0):
        for _ in range(3):  # a process lost to another reaper (never seen, but possible) is run again
            m = self.run_once(argv, stdout_path, timeout)
            if m.status != LOST:
                break
        return m

    def run_once(self, argv, stdout_path, timeout):
        with tempfile.TemporaryFile() as err:
            out_path = stdout_path or os.devnull
            start = time.perf_counter()
            if self.adopting:
                env = dict(os.environ, NUKE_BENCH_STDOUT=out_path)
                shell = subprocess.Popen(
                    ["/bin/sh", "-c", SH_LAUNCH, "sh", *argv], stdout=subprocess.PIPE, stderr=err, env=env
                )
                pid_text = shell.stdout.read()
                shell.stdout.close()
                shell.wait()
                try:
                    pid = int(pid_text)  # the tool, now this process's child
                except ValueError:
                    err.seek(0)
                    return Measurement(0.0, 0, 0.0, -1, "could not start: %s" % err.read().decode("utf-8", "replace"))
            else:
                with open(out_path, "wb") as out:
                    child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
                pid = child.pid
                child.returncode = 0  # reaped below with os.wait4, not by Popen
            timed_out = threading.Event()

            def kill():
                timed_out.set()
                os.kill(pid, signal.SIGKILL)

            # Wait without reaping first, so the timer can never signal a reused pid.
            timer = threading.Timer(timeout, kill)
            timer.daemon = True
            timer.start()
            try:
                os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
            except ChildProcessError:
                return Measurement(0.0, 0, 0.0, LOST, "lost the process %d: reaped elsewhere" % pid)
            finally:
                timer.cancel()
                timer.join()
            _, status, usage = os.wait4(pid, 0)
            wall = time.perf_counter() - start
            err.seek(0)
            text = err.read().decode("utf-8", "replace")
            if timed_out.is_set():
                text = "timed out after %.0f s\n%s" % (timeout, text)
            return Measurement(
                usage.ru_utime + usage.ru_stime, usage.ru_maxrss, wall, os.waitstatus_to_exitcode(status), text
            )


class Tool:
    """One command in a test group and what it measured."""

    def __init__(self, name, argv, output, stdout_path=None, missing=None):
        self.name = name
        self.argv = argv
        self.output = output
        self.stdout_path = stdout_path
        self.failure = missing
        self.runs = []
        self.psnr = None

    def record(self, m):
        if m.status != 0:
            last = [line for line in m.stderr.strip().splitlines() if line.strip()][-1:]
            self.failure = "exit %d%s" % (m.status, (": " + last[0][:160]) if last else "")
        else:
            self.runs.append(m)

    def median(self, key):
        return statistics.median(key(m) for m in self.runs) if self.runs else None


class Group:
    def __init__(self, source, job, kind, tools):
        self.source = source
        self.job = job
        self.kind = kind  # "thumb" or "full"
        self.tools = tools


def run_quiet(argv):
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        return (p.stdout + p.stderr).strip()
    except (OSError, subprocess.SubprocessError) as error:
        return "(%s)" % error


def nuke_codecs(nuke):
    """(decodable extensions, encodable extensions, library descriptions) from `nuke formats --json`."""
    p = subprocess.run([nuke, "formats", "--json"], capture_output=True, text=True, check=True)
    info = json.loads(p.stdout)
    decode, encode, libraries = set(), set(info.get("writers", [])), []
    for codec in info.get("codecs", []):
        exts = set(codec.get("extensions", []))
        if codec.get("decode"):
            decode |= exts
        if codec.get("encode"):
            encode |= exts
        lib = "%s: %s %s" % (codec.get("format"), codec.get("library") or "(Swift)", codec.get("libraryVersion", ""))
        if lib.strip() not in libraries:
            libraries.append(lib.strip())
    return decode, encode, libraries


def image_size(path):
    try:
        with Image.open(path) as im:
            return im.size
    except Exception:
        return None


def read_pixels(path):
    """RGB uint8 array of an image file; PAM (P7) read here, as Pillow has no reader for it."""
    with open(path, "rb") as f:
        magic = f.read(2)
    if magic == b"P7":
        with open(path, "rb") as f:
            data = f.read()
        end = data.index(b"ENDHDR\n") + len(b"ENDHDR\n")
        fields = {}
        for line in data[:end].decode("ascii").splitlines()[1:-1]:
            parts = line.split(None, 1)
            if len(parts) == 2:
                fields[parts[0]] = parts[1]
        w, h, depth, maxval = (int(fields[k]) for k in ("WIDTH", "HEIGHT", "DEPTH", "MAXVAL"))
        dtype = ">u2" if maxval > 255 else "u1"
        a = np.frombuffer(data, dtype=dtype, count=w * h * depth, offset=end).reshape(h, w, depth)
        if maxval != 255:
            a = np.round(a.astype(np.float64) * 255.0 / maxval)
        a = a.astype(np.uint8)
        if depth in (1, 2):
            a = np.repeat(a[..., :1], 3, axis=2)
        return a[..., :3]
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"))


def psnr(a, b):
    if a.shape != b.shape:
        return None
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return math.inf if mse == 0 else 10.0 * math.log10(255.0 * 255.0 / mse)


class References:
    """Full decodes of the inputs by Pillow, and LANCZOS resizes of them, computed once."""

    def __init__(self):
        self.full = {}

    def images(self, source):
        if source not in self.full:
            with Image.open(source) as im:
                raw = im.convert("RGB")
                images = [raw]
                if im.getexif().get(0x0112, 1) not in (0, 1):  # an EXIF orientation to apply
                    images.append(ImageOps.exif_transpose(im).convert("RGB"))
            self.full = {source: images}
        return self.full[source]

    def quality(self, group, tool):
        """PSNR of the tool's output against the reference; the better of the stored and the
        EXIF-upright orientation, as orientation policy is not what this column compares."""
        try:
            out = read_pixels(tool.output)
            best = None
            for full in self.images(group.source):
                if group.kind == "thumb":
                    ref = np.asarray(full.resize((out.shape[1], out.shape[0]), Image.Resampling.LANCZOS, reducing_gap=None))
                else:
                    ref = np.asarray(full)
                value = psnr(out, ref)
                if value is not None and (best is None or value > best):
                    best = value
            return best
        except Exception as error:
            print("measure: no quality for %s: %s" % (tool.output, error), file=sys.stderr)
            return None


def check_output(group, tool, size, source_size):
    """None when the tool's output is plausible, else why not."""
    if not os.path.exists(tool.output) or os.path.getsize(tool.output) == 0:
        return "no output written"
    try:
        dims = read_pixels(tool.output).shape[1::-1]
    except Exception as error:
        return "output does not decode: %s" % error
    if group.kind == "full":
        if source_size and tuple(sorted(dims)) != tuple(sorted(source_size)):
            return "output is %dx%d, not the input's %dx%d" % (dims + tuple(source_size))
        return None
    if max(dims) > size:
        return "output is %dx%d, larger than %d px" % (dims[0], dims[1], size)
    if source_size:
        expected = min(size, max(source_size))
        if max(dims) < expected - 1:
            return "output is %dx%d, expected a %d px longer side" % (dims[0], dims[1], expected)
    return None


def find_inputs(args, formats):
    wanted = {}
    for key, exts, _ in formats:
        for ext in exts:
            wanted[ext] = key
    if args.inputs:
        directory = os.path.abspath(args.inputs)
        how = {}
    else:
        directory = os.path.join(os.path.abspath(args.cache), "inputs")
        keys = sorted({key for key, _, _ in formats})
        subprocess.run(
            [sys.executable, os.path.join(HERE, "make-inputs.py"), directory, "--formats", ",".join(keys)], check=True
        )
        try:
            with open(os.path.join(directory, "manifest.json")) as f:
                how = {name: entry.get("how", "") for name, entry in json.load(f).items()}
        except (OSError, ValueError):
            how = {}
    order = [key for key, _, _ in THUMBNAIL_FORMATS]
    files = []
    for name in os.listdir(directory):
        ext = os.path.splitext(name)[1].lower().lstrip(".")
        path = os.path.join(directory, name)
        if ext in wanted and os.path.isfile(path):
            files.append((order.index(wanted[ext]), name, path, wanted[ext]))
    files.sort()
    return [(path, key, how.get(name, "")) for _, name, path, key in files], directory


def build_groups(args, inputs, nuke_encode, work):
    vips = shutil.which("vipsthumbnail")
    djpeg = shutil.which("djpeg")
    pillow = [sys.executable, os.path.join(HERE, "pillow_thumb.py")]
    size, q = str(args.size), str(args.quality)
    groups = []
    outputs_for = {key: outs for key, _, outs in THUMBNAIL_FORMATS}
    for path, key, _ in inputs:
        stem = os.path.splitext(os.path.basename(path))[0]
        base = os.path.join(work, stem + "-" + key)
        for ext in outputs_for[key]:
            if ext not in nuke_encode:
                continue
            vips_out = base + ".vips." + ext
            tools = [
                Tool("nuke", [args.nuke, "convert", path, base + ".nuke." + ext, "--max-size", "%sx%s" % (size, size)]
                     + (["--quality", q] if ext in LOSSY else []), base + ".nuke." + ext),
                # ">": shrink only, as nuke and Pillow do (vipsthumbnail enlarges small images otherwise).
                Tool("vips", [vips or "vipsthumbnail", path, "-s", "%sx%s>" % (size, size),
                              "-o", vips_out + ("[Q=%s]" % q if ext in LOSSY else "")], vips_out,
                     missing=None if vips else "vipsthumbnail not found"),
                Tool("Pillow", pillow + [path, base + ".pillow." + ext, size, q], base + ".pillow." + ext),
            ]
            groups.append(Group(path, "thumbnail %s px → %s" % (size, ext.upper()), "thumb", tools))
        for full_key, nuke_ext, reference in FULL_DECODES:
            if full_key != key or reference != "djpeg":
                continue
            tools = [
                Tool("nuke", [args.nuke, "convert", path, base + ".nuke." + nuke_ext], base + ".nuke." + nuke_ext),
                Tool("djpeg", [djpeg or "djpeg", "-pnm", path], base + ".djpeg.ppm", stdout_path=base + ".djpeg.ppm",
                     missing=None if djpeg else "djpeg not found (libjpeg-turbo-progs)"),
            ]
            groups.append(Group(path, "full decode → %s (djpeg: PPM)" % nuke_ext.upper(), "full", tools))
    return groups


def measure(groups, spawner, runs, size, log):
    sizes = {}
    for gi, group in enumerate(groups):
        source_size = sizes.setdefault(group.source, image_size(group.source))
        log("[%d/%d] %s: %s" % (gi + 1, len(groups), os.path.basename(group.source), group.job))
        for tool in group.tools:  # warm-up, and a first check
            if tool.failure:
                continue
            m = spawner.run(tool.argv, tool.stdout_path)
            if m.status != 0:
                tool.record(m)
                continue
            tool.failure = check_output(group, tool, size, source_size)
        live = [t for t in group.tools if not t.failure]
        for r in range(runs):
            shift = r % len(live) if live else 0
            for tool in live[shift:] + live[:shift]:
                if not tool.failure:
                    tool.record(spawner.run(tool.argv, tool.stdout_path))
        for tool in live:
            if not tool.failure:
                tool.failure = check_output(group, tool, size, source_size)


def fmt_ms(seconds):
    return "%.0f" % (seconds * 1000.0) if seconds is not None else "n/a"


def fmt_mib(kib):
    return "%.1f" % (kib / 1024.0) if kib is not None else "n/a"


def verdict(ratio, limit, strict):
    if ratio is None or limit is None:
        return ""
    ok = ratio < limit if strict else ratio <= limit
    return " ✓" if ok else " ✗"


def versions(args, nuke_libraries):
    lines = []
    commit = run_quiet(["git", "-C", HERE, "rev-parse", "--short=12", "HEAD"])
    dirty = run_quiet(["git", "-C", HERE, "status", "--porcelain", "--untracked-files=no"])
    branch = run_quiet(["git", "-C", HERE, "rev-parse", "--abbrev-ref", "HEAD"])
    lines.append("- nuke: commit %s%s (%s), release build `%s`; codecs: %s" % (
        commit, " + uncommitted changes" if dirty else "", branch, os.path.relpath(args.nuke), "; ".join(nuke_libraries)))
    vips = shutil.which("vips")
    if shutil.which("vipsthumbnail"):
        libs = []
        lib = "/usr/lib/%s-linux-gnu/libvips.so.42" % platform.machine()
        if os.path.exists(lib):
            for line in run_quiet(["ldd", lib]).splitlines():
                name = line.strip().split(" ")[0]
                if any(s in name for s in ("jpeg", "png", "spng", "webp", "heif", "z.so")):
                    libs.append(name)
        lines.append("- vipsthumbnail: %s (default threads; libvips links %s)" % (
            run_quiet([vips, "--version"]) if vips else run_quiet(["vipsthumbnail", "--vips-version"]), ", ".join(libs) or "?"))
    else:
        lines.append("- vipsthumbnail: not found")
    try:
        from PIL import features
        extra = ", ".join("%s %s" % (n, features.version(n)) for n in ("libjpeg_turbo", "zlib") if features.version(n))
    except Exception:
        extra = ""
    lines.append("- Pillow %s (%s) on Python %s (`%s`)" % (Image.__version__, extra, platform.python_version(), sys.executable))
    if shutil.which("djpeg"):
        lines.append("- djpeg: %s" % run_quiet(["djpeg", "-version"]).splitlines()[0])
    else:
        lines.append("- djpeg: not found")
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0, 0, 0)
    lines.append("- machine: %s, %d CPUs, %s; load average at start %.2f %.2f %.2f" % (
        cpu, os.cpu_count() or 0, platform.platform(), *load))
    return lines


def render(args, groups, inputs, directory, version_lines, skipped, baselines, spawner):
    out = []
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out.append("## Thumbnails: nuke vs vipsthumbnail, Pillow and djpeg (%s)" % now)
    out.append("")
    out.append("Medians of %d runs after one warm-up, tools interleaved per run. CPU = user+sys of the "
               "process (all threads), peak RSS = ru_maxrss, both from os.wait4. Quality = PSNR (dB) "
               "against Pillow LANCZOS (reducing_gap=None) from the full decode; ∞ = identical. "
               "JPEG quality %d for every tool." % (args.runs, args.quality))
    out.append("")
    out += version_lines
    out.append("- inputs (%s):" % directory)
    for path, _, how in inputs:
        dims = image_size(path)
        out.append("  - %s: %s, %.2f MiB%s" % (
            os.path.basename(path), "%dx%d (%.1f MP)" % (dims[0], dims[1], dims[0] * dims[1] / 1e6) if dims else "?",
            os.path.getsize(path) / 1048576.0, ", " + how if how else ""))
    out.append("")
    out.append("| input | job | tool | CPU ms (min–max) | peak RSS MiB | wall ms | PSNR dB | nuke ÷ tool: CPU | nuke ÷ tool: RSS | target (nuke ÷ tool) |")
    out.append("|---|---|---|---:|---:|---:|---:|---:|---:|---|")
    met, missed = [], []
    for group in groups:
        nuke = group.tools[0]
        n_cpu = nuke.median(lambda m: m.cpu) if not nuke.failure else None
        n_rss = nuke.median(lambda m: m.maxrss_kib) if not nuke.failure else None
        for tool in group.tools:
            cells = [os.path.basename(group.source), group.job, tool.name]
            if tool.failure or not tool.runs:
                cells += ["n/a", "n/a", "n/a", "n/a", "", "", "n/a: %s" % (tool.failure or "no runs")]
                out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
                continue
            cpu = tool.median(lambda m: m.cpu)
            rss = tool.median(lambda m: m.maxrss_kib)
            wall = tool.median(lambda m: m.wall)
            lo, hi = min(m.cpu for m in tool.runs), max(m.cpu for m in tool.runs)
            q = tool.psnr
            cells += ["%s (%s–%s)" % (fmt_ms(cpu), fmt_ms(lo), fmt_ms(hi)), fmt_mib(rss), fmt_ms(wall),
                      "n/a" if q is None else ("∞" if math.isinf(q) else "%.1f" % q)]
            if tool is nuke:
                cells += ["", "", ""]
            else:
                cpu_limit, rss_limit, strict = TARGETS.get(tool.name, (None, None, False))
                r_cpu = n_cpu / cpu if n_cpu is not None and cpu else None
                r_rss = n_rss / rss if n_rss is not None and rss else None
                cells.append("n/a" if r_cpu is None else "%.2f×%s" % (r_cpu, verdict(r_cpu, cpu_limit, strict)))
                cells.append("n/a" if r_rss is None else "%.2f×%s" % (r_rss, verdict(r_rss, rss_limit, strict)))
                op = "<" if strict else "≤"
                target = []
                if cpu_limit is not None:
                    target.append("CPU %s %.2f×" % (op, cpu_limit))
                if rss_limit is not None:
                    target.append("RSS %s %.2f×" % (op, rss_limit))
                cells.append(", ".join(target))
                for ratio, limit, what in ((r_cpu, cpu_limit, "CPU"), (r_rss, rss_limit, "RSS")):
                    if ratio is None or limit is None:
                        continue
                    label = "%s %s vs %s %s %.2f×" % (os.path.basename(group.source), group.job, tool.name, what, ratio)
                    (met if verdict(ratio, limit, strict) == " ✓" else missed).append(label)
            out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    out.append("")
    out.append("Targets met: %d of %d (✓ met, ✗ missed)." % (len(met), len(met) + len(missed)))
    out.append("")
    for label, tool in baselines:
        if tool.runs:
            out.append("- %s: %s ms CPU, %s MiB peak RSS (median)." % (
                label, fmt_ms(tool.median(lambda m: m.cpu)), fmt_mib(tool.median(lambda m: m.maxrss_kib))))
    if not spawner.adopting:
        out.append("- Not adopting children (no PR_SET_CHILD_SUBREAPER): every peak RSS includes this driver's size as a floor.")
    if skipped:
        out.append("- Skipped, not decoded by `nuke formats`: %s." % ", ".join(skipped))
    out.append("")
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nuke", required=True, help="the nuke binary (a release build)")
    parser.add_argument("--runs", type=int, default=7, help="measured runs per tool (default 7)")
    parser.add_argument("--inputs", help="measure these .jpg/.jpeg/.png (…) files instead of the generated ones")
    parser.add_argument("--cache", default=os.path.join(HERE, "..", "..", "out", "benchmarks"))
    parser.add_argument("--out", help="also write the table here")
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--quality", type=int, default=80, help="JPEG quality for every tool (nuke's default: 80)")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    args.nuke = os.path.abspath(args.nuke)

    def log(text):
        print("measure: " + text, file=sys.stderr, flush=True)

    decode, encode, libraries = nuke_codecs(args.nuke)
    formats = [f for f in THUMBNAIL_FORMATS if set(f[1]) & decode]
    skipped = [f[0] for f in THUMBNAIL_FORMATS if not set(f[1]) & decode]
    inputs, directory = find_inputs(args, formats)
    if not inputs:
        print("measure: no inputs in %s" % directory, file=sys.stderr)
        return 1
    version_lines = versions(args, libraries)
    work = os.path.join(os.path.abspath(args.cache), "work")
    os.makedirs(work, exist_ok=True)
    spawner = Spawner()
    groups = build_groups(args, inputs, encode, work)
    measure(groups, spawner, args.runs, args.size, log)

    baselines = [
        ("/bin/true (the spawning floor)", Tool("true", ["/bin/true"], None)),
        ("Pillow's fixed cost: `python3 -c 'import PIL.Image'`", Tool("import", [sys.executable, "-c", "import PIL.Image"], None)),
        ("nuke's fixed cost: `nuke --help` (libheif and librsvg load on first use)", Tool("help", [args.nuke, "--help"], None)),
        ("nuke with every codec library loaded: `nuke formats`", Tool("formats", [args.nuke, "formats"], None)),
    ]
    if shutil.which("vipsthumbnail"):
        baselines.append(("vips's fixed cost: `vipsthumbnail --vips-version`",
                          Tool("vips-version", [shutil.which("vipsthumbnail"), "--vips-version"], None)))
    for _ in range(args.runs):
        for _, tool in baselines:
            tool.record(spawner.run(tool.argv))

    references = References()
    for group in groups:
        for tool in group.tools:
            if not tool.failure:
                tool.psnr = references.quality(group, tool)

    table = render(args, groups, inputs, directory, version_lines, skipped, baselines, spawner)
    print(table)
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            f.write(table)
        log("wrote %s" % args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
