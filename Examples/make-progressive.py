#!/usr/bin/env python3
# Renders a synthetic 640×427 scene (sky gradient, sun, hills, striped field) as PPM.
import math
W, H = 640, 427
out = bytearray()
for y in range(H):
    for x in range(W):
        t = y / H
        r, g, b = int(40 + 120 * t), int(90 + 110 * t), int(200 - 60 * t)       # sky
        d = math.hypot(x - 470, y - 120)
        if d < 60:                                                               # sun
            r, g, b = 255, 214, 90
        elif d < 90:
            k = (d - 60) / 30
            r, g, b = int(255 * (1 - k) + r * k), int(214 * (1 - k) + g * k), int(90 * (1 - k) + b * k)
        hill = 300 + 40 * math.sin(x / 70) + 20 * math.sin(x / 23 + 1)
        if y > hill:                                                             # hills
            s = (y - hill) / (H - hill + 1)
            r, g, b = int(40 + 60 * s), int(120 + 50 * s), int(50 + 20 * s)
            if int((x + y * 0.5) / 12) % 2 == 0 and y > hill + 30:               # striped field
                r, g, b = r + 30, g + 30, b
        out += bytes((min(r, 255), min(g, 255), min(b, 255)))
import sys
sys.stdout.buffer.write(b"P6\n%d %d\n255\n" % (W, H) + bytes(out))
