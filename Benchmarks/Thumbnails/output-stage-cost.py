#!/usr/bin/env python3
"""What upright, private thumbnails cost: `nuke convert --max-size 256` with its defaults (the
orientation applied, metadata `display`) ÷ the same with `--orientation keep --metadata all`, in
whole-process CPU time (user + system), alternating runs, on JPEGs given EXIF Orientation 6.

    python3 Benchmarks/Thumbnails/output-stage-cost.py .build/release/nuke PHOTO.jpg... [--runs 7]

Each photograph is copied with Orientation 6 written by exiftool (libimage-exiftool-perl), so
the applied path really transposes. Prints one ratio per photograph, their geometric mean and
median.
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
        subprocess.run(["exiftool", "-q", "-q", "-o", rotated, "-Orientation#=6", photo], check=True)
        applied = kept = 0.0
        for _ in range(args.runs):
            kept += cpu([args.nuke, "convert", rotated, out, "--max-size", "256", "--orientation", "keep", "--metadata", "all"])
            applied += cpu([args.nuke, "convert", rotated, out, "--max-size", "256"])
        ratios.append(applied / kept)
        print("%-28s %.3f" % (os.path.basename(photo), applied / kept))
    mean = 1.0
    for ratio in ratios:
        mean *= ratio
    print("defaults ÷ stored pixels and all metadata: geometric mean %.3f, median %.3f"
          % (mean ** (1 / len(ratios)), statistics.median(ratios)))
