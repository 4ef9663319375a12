#!/usr/bin/env python3
"""Steady-state thumbnails: nuke's API, pyvips and Pillow, each in one long-lived process.

    steady_state.py --nuke-worker PATH --photos DIR [--quick | --held-out] [--rounds N] [--core C]

Usually started by steady-state.sh, which installs the tools, fetches the photographs and builds
the Swift worker first. See "Steady state" in Benchmarks/Thumbnails/README.md.

For each input format (JPEG baseline, JPEG progressive, PNG, WebP, AVIF) three fresh worker
processes are started, all pinned to the same core (`taskset -c C`): NukeSteadyThumbnails (nuke's
API in process), `steady_worker.py pyvips` and `steady_worker.py pillow`. They get the same
requests in turn (file 1 to each tool, file 2 to each tool, ..., the tools' order rotating), one
at a time, for a warm-up round that is discarded and then --rounds measured rounds. Each worker
reports its own process CPU time per thumbnail (CLOCK_PROCESS_CPUTIME_ID, all threads) and, at
the end, its peak resident size (getrusage ru_maxrss).

Workers are started as background jobs of a /bin/sh that exits at once, reading and writing named
pipes: a child forked straight from this (large) Python process would start with its resident
size as the floor of its ru_maxrss.

Quality: every tool's thumbnail pixels (written losslessly during the warm-up round, after its
clock stopped) are compared with `lanczos_reference`: the input decoded in full by Pillow,
converted to float64 and resampled with a separable Lanczos-3 filter (antialiased: the kernel is
widened by the reduction factor) straight to the size that tool produced, without rounding.
PSNR is over R, G and B against that float image.
"""

import argparse
import datetime
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# --- The photographs ---------------------------------------------------------------------------
# Debian packages of real photographs (JPEG, 4-20 MP), fetched by steady-state.sh with
# `apt-get download` and unpacked with `dpkg-deb -x` into --photos DIR/PACKAGE.
PACKAGES = ("lomiri-wallpapers-16.04", "lomiri-wallpapers-20.04", "mate-backgrounds")
LOMIRI = "usr/share/backgrounds"
MATE = "usr/share/backgrounds/mate/nature"
# The benchmark set: 4 baseline and 6 progressive JPEGs (libjpeg-turbo's `progressive` flag).
BENCHMARK = [
    ("lomiri-wallpapers-16.04", LOMIRI, "free_by_Peter_Nerlich.jpg"),             # 2880x2160 baseline 4:4:4
    ("lomiri-wallpapers-16.04", LOMIRI, "umang_by_Abhishek_Mudgal.jpg"),          # 3840x2160 baseline 4:4:4
    ("lomiri-wallpapers-16.04", LOMIRI, "analogpattern_by_Peter_Nerlich.jpg"),    # 2880x2160 baseline 4:2:0
    ("lomiri-wallpapers-20.04", LOMIRI, "Kleiber_by_Lukas_Baubkus.jpg"),          # 6028x3391 baseline 4:2:2
    ("lomiri-wallpapers-16.04", LOMIRI, "Dragonfly_by_Bolly.jpg"),                # 4224x3168 progressive 4:2:2
    ("lomiri-wallpapers-16.04", LOMIRI, "seeding_by_Clements_Engelhardt.jpg"),    # 5312x2988 progressive 4:2:0
    ("lomiri-wallpapers-16.04", LOMIRI, "sunset_by_Aitzol_Berasategi.jpg"),       # 4272x2848 progressive 4:2:2
    ("lomiri-wallpapers-16.04", LOMIRI, "Wine_by_Jakkub_Mede.jpg"),               # 2560x3837 progressive 4:2:2
    ("lomiri-wallpapers-16.04", LOMIRI, "picosdeeuropa_by_Aitzol_Berasategi.jpg"),  # 3264x2448 progressive 4:2:0
    ("lomiri-wallpapers-16.04", LOMIRI, "Bridge_by_Sander_Klootwijk.jpg"),        # 4352x2448 progressive 4:2:2
]
QUICK = ["umang_by_Abhishek_Mudgal.jpg", "Kleiber_by_Lukas_Baubkus.jpg",
         "Dragonfly_by_Bolly.jpg", "picosdeeuropa_by_Aitzol_Berasategi.jpg"]
# Not photographs (renders), left out of both sets.
NOT_PHOTOGRAPHS = {"Fossa_by_Jasper_Roks.jpg", "Painting-Colors_by__herobrine7gamer.jpg"}
HELD_OUT_MIN_PIXELS = 4_000_000

# --- The inputs made from them -----------------------------------------------------------------
# Reference encoders at fixed settings; bump INPUTS_VERSION when they change.
INPUTS_VERSION = 1
PNG_HOW = "Pillow, zlib level 6 (libpng's default), no optimize"
WEBP_HOW = "cwebp -q 90 -m 4 (libwebp %s) from the PNG"
AVIF_HOW = "heif-enc -A -q 70 -p speed=6 -p chroma=420 (libheif %s, aom) from the PNG, no embedded thumbnail"

# Table rows: label, input extension, which JPEGs (progressive or not; None for other formats).
FORMATS = [
    ("JPEG baseline", "jpg", False),
    ("JPEG progressive", "jpg", True),
    ("PNG", "png", None),
    ("WebP", "webp", None),
    ("AVIF", "avif", None),
]
TOOLS = ("nuke", "pyvips", "Pillow", "Pillow-fit")
# Pillow-fit (Pillow with NukeCodecs' DCT scale rule) runs only on JPEG, where the rules differ.
JPEG_ONLY = ("Pillow-fit",)


def log(text):
    print("steady: " + text, file=sys.stderr, flush=True)


def photo_path(photos, package, folder, name):
    return os.path.join(photos, package, folder, name)


def benchmark_photos(photos, quick):
    chosen = [entry for entry in BENCHMARK if not quick or entry[2] in QUICK]
    return [photo_path(photos, *entry) for entry in chosen]


def held_out_photos(photos):
    from PIL import Image

    used = {name for _, _, name in BENCHMARK} | NOT_PHOTOGRAPHS
    found = []
    for package, folder in (("lomiri-wallpapers-16.04", LOMIRI), ("lomiri-wallpapers-20.04", LOMIRI), ("mate-backgrounds", MATE)):
        directory = os.path.join(photos, package, folder)
        for name in sorted(os.listdir(directory)) if os.path.isdir(directory) else []:
            path = os.path.join(directory, name)
            if not name.lower().endswith(".jpg") or name in used:
                continue
            with Image.open(path) as im:
                if im.width * im.height >= HELD_OUT_MIN_PIXELS and im.mode == "RGB":
                    found.append(path)
    return found


def is_progressive(path):
    from PIL import Image

    with Image.open(path) as im:
        return bool(im.info.get("progressive") or im.info.get("progression"))


def tool_version(argv):
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        return (p.stdout + p.stderr).strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        return "?"


def make_inputs(photos, directory):
    """Copies of the JPEGs and PNG, WebP and AVIF versions made by the reference encoders, cached."""
    from PIL import Image

    os.makedirs(directory, exist_ok=True)
    webp_version = tool_version(["cwebp", "-version"])
    heif_version = tool_version(["heif-enc", "--help"]).split("version:")[-1].strip()
    how = {"png": PNG_HOW, "webp": WEBP_HOW % webp_version, "avif": AVIF_HOW % heif_version}
    inputs = []
    for source in photos:
        stem = os.path.splitext(os.path.basename(source))[0]
        paths = {ext: os.path.join(directory, "%s.%s" % (stem, ext)) for ext in ("jpg", "png", "webp", "avif")}
        stamp = os.path.join(directory, stem + ".made")
        wanted = "%d %s" % (INPUTS_VERSION, json.dumps(how, sort_keys=True))
        current = open(stamp).read() if os.path.exists(stamp) else ""
        if current != wanted or not all(os.path.exists(p) for p in paths.values()):
            log("making the PNG, WebP and AVIF of %s" % stem)
            shutil.copyfile(source, paths["jpg"])
            with Image.open(source) as im:
                im.convert("RGB").save(paths["png"], compress_level=6)
            subprocess.run(["cwebp", "-quiet", "-q", "90", "-m", "4", paths["png"], "-o", paths["webp"]], check=True)
            subprocess.run(["heif-enc", "-A", "-q", "70", "-p", "speed=6", "-p", "chroma=420", paths["png"], "-o", paths["avif"]],
                           check=True, stdout=subprocess.DEVNULL)
            with open(stamp, "w") as f:
                f.write(wanted)
        inputs.append((stem, paths, is_progressive(source)))
    return inputs, how


# --- Workers -------------------------------------------------------------------------------------

class Worker:
    """One long-lived tool process, pinned to a core, spoken to through two named pipes."""

    LAUNCH = '"$@" <"$W_IN" >"$W_OUT" 2>"$W_ERR" & echo $!'

    def __init__(self, name, argv, core, scratch):
        self.name = name
        base = os.path.join(scratch, name)
        self.err_path = base + ".stderr"
        for suffix in (".in", ".out"):
            if os.path.exists(base + suffix):
                os.unlink(base + suffix)
            os.mkfifo(base + suffix)
        env = dict(os.environ, W_IN=base + ".in", W_OUT=base + ".out", W_ERR=self.err_path)
        # Only the pid line is read: the job holds the pipe until it has opened the named pipes.
        shell = subprocess.Popen(["/bin/sh", "-c", self.LAUNCH, "sh", "taskset", "-c", str(core), *argv],
                                 stdout=subprocess.PIPE, env=env)
        self.pid = int(shell.stdout.readline())
        shell.wait()
        self.requests = open(base + ".in", "w", buffering=1)
        self.answers = open(base + ".out", "r")
        shell.stdout.close()

    def ask(self, fields):
        self.requests.write("\t".join(fields) + "\n")
        line = self.answers.readline()
        if not line:
            raise RuntimeError("%s ended: %s" % (self.name, open(self.err_path).read()[-500:]))
        return line.rstrip("\n").split("\t")

    def close(self):
        self.requests.close()
        self.answers.close()


def start_workers(args, scratch, tools):
    common = ["--size", str(args.size), "--quality", str(args.quality)]
    script = [sys.executable, os.path.join(HERE, "steady_worker.py")]
    argv = {
        "nuke": [args.nuke_worker, *common],
        "pyvips": [*script, "pyvips", *common],
        "Pillow": [*script, "pillow", *common],
        "Pillow-fit": [*script, "pillow-fit", *common],
    }
    return {tool: Worker(tool, argv[tool], args.core, scratch) for tool in tools}


class Result:
    def __init__(self):
        self.cpu = {}      # (tool, stem) -> [seconds]
        self.size = {}     # (tool, stem) -> (w, h)
        self.pixels = {}   # (tool, stem) -> PNG path
        self.output = {}   # (tool, stem) -> JPEG path
        self.rss = {}      # tool -> KiB
        self.failure = {}  # tool -> message
        self.psnr = {}     # (tool, stem) -> dB of the pixels
        self.psnr_jpeg = {}  # (tool, stem) -> dB of the JPEG file


def run_format(args, label, ext, files, work):
    result = Result()
    scratch = tempfile.mkdtemp(prefix="steady-")
    tools = tuple(t for t in TOOLS if ext == "jpg" or t not in JPEG_ONLY)
    workers = start_workers(args, scratch, tools)
    try:
        for round_index in range(args.rounds + 1):   # round 0: warm-up, discarded
            for file_index, (stem, paths, _) in enumerate(files):
                shift = (round_index + file_index) % len(tools)
                for tool in tools[shift:] + tools[:shift]:
                    if tool in result.failure:
                        continue
                    out = os.path.join(work, "%s.%s.%s.jpg" % (stem, ext, tool))
                    fields = ["T", paths[ext], out]
                    if round_index == 0:
                        fields.append(os.path.join(work, "%s.%s.%s.png" % (stem, ext, tool)))
                    answer = workers[tool].ask(fields)
                    if answer[0] != "ok":
                        result.failure[tool] = "%s: %s" % (stem, " ".join(answer[1:]))
                        continue
                    if round_index == 0:
                        size = (int(answer[3]), int(answer[4]))
                        if max(size) > args.size or max(size) < args.size - 1:
                            result.failure[tool] = "%s: a %d×%d thumbnail for a %d px box" % (stem, *size, args.size)
                            continue
                        result.size[(tool, stem)] = size
                        result.pixels[(tool, stem)] = fields[3]
                        result.output[(tool, stem)] = out
                    else:
                        result.cpu.setdefault((tool, stem), []).append(int(answer[1]) / 1e9)
            log("%s: round %d of %d%s" % (label, round_index, args.rounds, " (warm-up)" if round_index == 0 else ""))
        for tool, worker in workers.items():
            answer = worker.ask(["R"])
            result.rss[tool] = int(answer[1]) if answer[0] == "rss" else None
    finally:
        for worker in workers.values():
            worker.close()
        shutil.rmtree(scratch, ignore_errors=True)
    return result


# --- Quality -------------------------------------------------------------------------------------

def lanczos_matrix(n_in, n_out):
    """The (n_out, n_in) float64 matrix of a Lanczos-3 resample from n_in to n_out samples.

    Pixel i covers [i, i + 1) in both grids; output pixel j's centre falls on input coordinate
    (j + 0.5) * n_in / n_out. When reducing, the kernel is stretched by the factor (antialiasing),
    as Pillow's and vips's resamplers do. Each row sums to 1 (edges renormalised).
    """
    import numpy as np

    scale = n_in / n_out
    stretch = max(scale, 1.0)
    centres = (np.arange(n_out, dtype=np.float64) + 0.5) * scale
    t = ((np.arange(n_in, dtype=np.float64) + 0.5)[None, :] - centres[:, None]) / stretch
    weights = np.sinc(t) * np.sinc(t / 3.0)
    weights[np.abs(t) >= 3.0] = 0.0
    return weights / weights.sum(axis=1, keepdims=True)


class References:
    """Full decodes by Pillow (EXIF orientation applied), resampled in float64 per output size."""

    def __init__(self):
        self.source = None
        self.full = None
        self.cache = {}

    def reference(self, path, size):
        import numpy as np
        from PIL import Image, ImageOps

        if path != self.source:
            with Image.open(path) as im:
                upright = ImageOps.exif_transpose(im).convert("RGB")
                self.full = np.asarray(upright, dtype=np.float64)
            self.source, self.cache = path, {}
        if size not in self.cache:
            height, width = self.full.shape[:2]
            rows, cols = lanczos_matrix(height, size[1]), lanczos_matrix(width, size[0])
            channels = [rows @ self.full[:, :, c] @ cols.T for c in range(3)]
            self.cache[size] = np.clip(np.stack(channels, axis=2), 0.0, 255.0)
        return self.cache[size]


def psnr(path, reference):
    import numpy as np
    from PIL import Image

    with Image.open(path) as im:
        pixels = np.asarray(im.convert("RGB"), dtype=np.float64)
    if pixels.shape != reference.shape:
        return None
    mse = float(np.mean((pixels - reference) ** 2))
    return math.inf if mse == 0 else 10.0 * math.log10(255.0 ** 2 / mse)


def measure_quality(result, ext, files, references):
    for stem, paths, _ in files:
        for tool in TOOLS:
            if (tool, stem) not in result.size:
                continue
            ref = references.reference(paths[ext], result.size[(tool, stem)])
            result.psnr[(tool, stem)] = psnr(result.pixels[(tool, stem)], ref)
            result.psnr_jpeg[(tool, stem)] = psnr(result.output[(tool, stem)], ref)


# --- Report --------------------------------------------------------------------------------------

def median_cpu(result, tool, stem):
    runs = result.cpu.get((tool, stem))
    return statistics.median(runs) if runs else None


def summary(result, files):
    """Per tool: median over files of the per-file median CPU; nuke ÷ tool: median of per-file ratios."""
    out = {}
    for tool in TOOLS:
        per_file = [median_cpu(result, tool, stem) for stem, _, _ in files]
        per_file = [v for v in per_file if v is not None]
        ratios = []
        for stem, _, _ in files:
            n, t = median_cpu(result, "nuke", stem), median_cpu(result, tool, stem)
            if n is not None and t:
                ratios.append(n / t)
        qualities = [result.psnr.get((tool, stem)) for stem, _, _ in files]
        qualities = [q for q in qualities if q is not None and not math.isinf(q)]
        jpeg_q = [result.psnr_jpeg.get((tool, stem)) for stem, _, _ in files]
        jpeg_q = [q for q in jpeg_q if q is not None and not math.isinf(q)]
        out[tool] = {
            "ms": statistics.median(per_file) * 1000 if per_file and tool not in result.failure else None,
            "ratio": statistics.median(ratios) if ratios and tool not in result.failure else None,
            "ratio_range": (min(ratios), max(ratios)) if ratios else None,
            "rss": result.rss.get(tool),
            "psnr": statistics.fmean(qualities) if qualities else None,
            "psnr_jpeg": statistics.fmean(jpeg_q) if jpeg_q else None,
        }
    return out


def fmt(value, pattern, missing="n/a"):
    return missing if value is None else pattern % value


def versions(args):
    lines = []
    git = lambda *a: subprocess.run(["git", "-C", HERE, *a], capture_output=True, text=True).stdout.strip()
    dirty = git("status", "--porcelain", "--untracked-files=no")
    lines.append("- nuke: commit %s%s, `%s` (release build), NukeCodecs' API in process" % (
        git("rev-parse", "--short=12", "HEAD"), " + uncommitted changes" if dirty else "", os.path.relpath(args.nuke_worker)))
    # In a process of its own: libvips loaded here would lend its libwebp to Pillow's version query.
    probe = ("import pyvips; print('pyvips %s, libvips %d.%d.%d (%s mode)' % (pyvips.__version__, pyvips.version(0), "
             "pyvips.version(1), pyvips.version(2), 'API' if pyvips.API_mode else 'ABI'))")
    lines.append("- " + tool_version([sys.executable, "-c", probe]))
    from PIL import Image, features
    libs = ", ".join("%s %s" % (n, features.version(n)) for n in ("libjpeg_turbo", "zlib", "webp", "avif") if features.version(n))
    lines.append("- Pillow %s (%s), Python %s" % (Image.__version__, libs, platform.python_version()))
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    load = os.getloadavg()
    lines.append("- machine: %s, %d CPUs; every worker pinned to core %s; load average at start %.2f %.2f %.2f" % (
        cpu, os.cpu_count() or 0, args.core, *load))
    if os.environ.get("GLIBC_TUNABLES"):
        # Inherited by every worker alike (the thumbnail service's --heap-keep-megabytes sets the same).
        lines.append("- every worker ran with GLIBC_TUNABLES=%s" % os.environ["GLIBC_TUNABLES"])
    return lines


def render(args, set_name, inputs, how, rows, details, version_lines):
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = ["## Steady-state thumbnails: nuke, pyvips and Pillow in long-lived processes (%s)" % now, ""]
    out.append("%s set, %d photographs; %d × %d px box, JPEG quality %d for every tool; a warm-up round, then %d "
               "measured rounds, tools interleaved. CPU = the worker's process CPU time per thumbnail "
               "(read, decode, resize, encode, write; all threads), median per file, then the median "
               "over files; nuke ÷ tool = median of the per-file ratios (min–max). Peak RSS = the "
               "worker's ru_maxrss over its whole run (one fresh worker per format). PSNR = mean over "
               "files, dB, of the thumbnail's pixels (before JPEG encoding; the JPEG file's in brackets) "
               "against a float64 Lanczos-3 resize of Pillow's full decode to the same size. Pillow-fit (JPEG only): "
               "Pillow with NukeCodecs' DCT scale rule (`draft` to twice the thumbnail's own size; "
               "Pillow's `thumbnail` drafts to twice the box in both dimensions)." % (
                   set_name, len(inputs), args.size, args.size, args.quality, args.rounds))
    out.append("")
    out += version_lines
    progressive = sum(1 for _, _, p in inputs if p)
    out.append("- photographs: %d JPEGs (%d progressive) from Debian's %s; PNG: %s; WebP: %s; AVIF: %s" % (
        len(inputs), progressive, ", ".join(PACKAGES), how["png"], how["webp"], how["avif"]))
    out.append("")
    out.append("| format | files | CPU ms: nuke / pyvips / Pillow / Pillow-fit | nuke ÷ pyvips | nuke ÷ Pillow | nuke ÷ Pillow-fit | peak RSS MiB: nuke / pyvips / Pillow / Pillow-fit | PSNR dB: nuke / pyvips / Pillow / Pillow-fit |")
    out.append("|---|---:|---|---|---|---|---|---|")
    for label, count, s, failures in rows:
        ran = lambda t: s[t]["rss"] is not None
        cell = lambda t, value, pattern: fmt(value, pattern) if ran(t) else "—"
        cpu = " / ".join(cell(t, s[t]["ms"], "%.1f") for t in TOOLS)
        ratio = lambda t: ("n/a" if s[t]["ratio"] is None else "%.2f (%.2f–%.2f)" % (s[t]["ratio"], *s[t]["ratio_range"])) if ran(t) else "—"
        rss = " / ".join(cell(t, s[t]["rss"] and s[t]["rss"] / 1024.0, "%.1f") for t in TOOLS)
        quality = " / ".join("%s (%s)" % (fmt(s[t]["psnr"], "%.2f"), fmt(s[t]["psnr_jpeg"], "%.2f")) if ran(t) else "—" for t in TOOLS)
        out.append("| %s | %d | %s | %s | %s | %s | %s | %s |" % (label, count, cpu, ratio("pyvips"), ratio("Pillow"), ratio("Pillow-fit"), rss, quality))
        for tool, message in failures.items():
            out.append("| | | %s failed: %s | | | | | |" % (tool, message.replace("|", "\\|")))
    out.append("")
    out.append("Per file (median CPU ms; PSNR dB of the pixels):")
    out.append("")
    out.append("| format | file | size | nuke ms | pyvips ms | Pillow ms | Pillow-fit ms | nuke ÷ pyvips | nuke ÷ Pillow | nuke ÷ Pillow-fit | PSNR nuke / pyvips / Pillow / Pillow-fit |")
    out.append("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    out += details
    out.append("")
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nuke-worker", required=True, help="NukeSteadyThumbnails, a release build")
    parser.add_argument("--photos", required=True, help="the unpacked Debian packages (DIR/PACKAGE/usr/...)")
    parser.add_argument("--cache", default=os.path.join(HERE, "..", "..", "out", "benchmarks", "steady"))
    parser.add_argument("--out", help="also write the tables here")
    parser.add_argument("--quick", action="store_true", help="4 photographs (2 baseline, 2 progressive), 2 rounds")
    parser.add_argument("--held-out", action="store_true", help="the package's other photographs instead of the benchmark set")
    parser.add_argument("--rounds", type=int, help="measured rounds after the warm-up (default 5, --quick 2)")
    parser.add_argument("--core", default="1", help="the core every worker is pinned to (default 1)")
    parser.add_argument("--formats", default="jpeg,png,webp,avif", help="comma-separated subset of jpeg,png,webp,avif")
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--quality", type=int, default=85)
    args = parser.parse_args()
    args.rounds = args.rounds or (2 if args.quick else 5)
    args.nuke_worker = os.path.abspath(args.nuke_worker)
    cache = os.path.abspath(args.cache)

    if args.held_out:
        photos, set_name = held_out_photos(args.photos), "held-out"
    else:
        photos, set_name = benchmark_photos(args.photos, args.quick), "quick" if args.quick else "benchmark"
    missing = [p for p in photos if not os.path.exists(p)]
    if missing or not photos:
        log("photographs missing (run steady-state.sh, which fetches them): %s" % (", ".join(missing) or args.photos))
        return 1
    inputs, how = make_inputs(photos, os.path.join(cache, "inputs"))
    version_lines = versions(args)
    wanted = set(args.formats.split(","))
    references = References()
    rows, details = [], []
    for label, ext, progressive in FORMATS:
        if ("jpeg" if ext == "jpg" else ext) not in wanted:
            continue
        files = [f for f in inputs if progressive is None or f[2] == progressive]
        if not files:
            continue
        work = os.path.join(cache, "work", set_name)
        os.makedirs(work, exist_ok=True)
        result = run_format(args, label, ext, files, work)
        measure_quality(result, ext, files, references)
        s = summary(result, files)
        rows.append((label, len(files), s, result.failure))
        for stem, _, _ in files:
            ms = {t: median_cpu(result, t, stem) for t in TOOLS}
            size = result.size.get(("nuke", stem))
            ratio = lambda t: "n/a" if ms["nuke"] is None or not ms[t] else "%.2f" % (ms["nuke"] / ms[t])
            ran = lambda t: t in result.rss
            details.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                label, stem, "%d×%d" % size if size else "?",
                *(fmt(ms[t] and ms[t] * 1000, "%.1f") if ran(t) else "—" for t in TOOLS),
                *(ratio(t) if ran(t) else "—" for t in ("pyvips", "Pillow", "Pillow-fit")),
                " / ".join(fmt(result.psnr.get((t, stem)), "%.2f") if ran(t) else "—" for t in TOOLS)))
        log("%s: nuke %s ms, nuke ÷ pyvips %s, nuke ÷ Pillow %s" % (
            label, fmt(s["nuke"]["ms"], "%.1f"), fmt(s["pyvips"]["ratio"], "%.2f"), fmt(s["Pillow"]["ratio"], "%.2f")))
    table = render(args, set_name, inputs, how, rows, details, version_lines)
    print(table)
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            f.write(table)
        log("wrote %s" % args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
