#!/usr/bin/env python3
"""What upright, colour-managed, private thumbnails cost: `nuke convert --max-size 256` with its
defaults (the orientation applied, sRGB, metadata `display`) ÷ the same with `--orientation keep
--color keep --metadata all`, in whole-process CPU time (user + system), alternating runs.

    python3 Benchmarks/Thumbnails/output-stage-cost.py .build/release/nuke PHOTO.jpg... [--runs 7] [--profile P.icc]

Each photograph is copied with Orientation 6 written by exiftool (libimage-exiftool-perl), so the
applied path really transposes, and with `--profile` embedded (Fixtures/color/display-p3.icc), so
the sRGB conversion really runs. Prints one ratio per photograph, their geometric mean and median.
"""
import argparse
import os
import resource
import statistics
import subprocess
import tempfile

parser = argparse.ArgumentParser()
parser.add_argument("nuke")
parser.add_argument("photos", nargs="+")
parser.add_argument("--runs", type=int, default=7)
parser.add_argument("--profile")
args = parser.parse_args()


def cpu(command):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


with tempfile.TemporaryDirectory() as directory:
    out = os.path.join(directory, "out.jpg")
    ratios = []
    for photo in args.photos:
        rotated = os.path.join(directory, "o6-" + os.path.basename(photo))
        tags = ["-Orientation#=6"] + (["-ICC_Profile<=" + args.profile] if args.profile else [])
        subprocess.run(["exiftool", "-q", "-q", "-o", rotated] + tags + [photo], check=True)
        applied = kept = 0.0
        for _ in range(args.runs):
            kept += cpu([args.nuke, "convert", rotated, out, "--max-size", "256", "--orientation", "keep", "--color", "keep", "--metadata", "all"])
            applied += cpu([args.nuke, "convert", rotated, out, "--max-size", "256"])
        ratios.append(applied / kept)
        print("%-28s %.3f" % (os.path.basename(photo), applied / kept))
    mean = 1.0
    for ratio in ratios:
        mean *= ratio
    print("defaults ÷ stored pixels, colours and metadata: geometric mean %.3f, median %.3f"
          % (mean ** (1 / len(ratios)), statistics.median(ratios)))
