#!/usr/bin/env python3
"""Draws kb's app icons (kb-192.png, kb-512.png) as the same shapes as kb.svg: a blue
square and a white note card with three lines. Plain Python (zlib), no image library:
run `python3 make-icons.py` in this folder after changing the shapes."""
import struct
import zlib

BLUE = (0x24, 0x57, 0xC5)
WHITE = (0xFF, 0xFF, 0xFF)
# In 512 units: (x0, y0, x1, y1, corner radius, colour), painted in order.
SHAPES = [
    (0, 0, 512, 512, 0, BLUE),
    (136, 104, 376, 408, 28, WHITE),
    (176, 168, 336, 192, 12, BLUE),
    (176, 236, 336, 260, 12, BLUE),
    (176, 304, 280, 328, 12, BLUE),
]


def inside(x, y, shape):
    x0, y0, x1, y1, r, _ = shape
    if not (x0 <= x < x1 and y0 <= y < y1):
        return False
    cx = min(max(x, x0 + r), x1 - r)
    cy = min(max(y, y0 + r), y1 - r)
    return (x - cx) ** 2 + (y - cy) ** 2 <= r * r


def colour(x, y):
    found = BLUE
    for shape in SHAPES:
        if inside(x, y, shape):
            found = shape[5]
    return found


def draw(size, samples=4):
    scale = 512 / size
    rows = []
    for py in range(size):
        row = bytearray([0])
        for px in range(size):
            total = [0, 0, 0]
            for sy in range(samples):
                for sx in range(samples):
                    c = colour((px + (sx + 0.5) / samples) * scale, (py + (sy + 0.5) / samples) * scale)
                    for i in range(3):
                        total[i] += c[i]
            row += bytes(round(t / samples / samples) for t in total)
        rows.append(bytes(row))
    return b"".join(rows)


def png(size):
    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(draw(size), 9)) + chunk(b"IEND", b"")


for size in (192, 512):
    with open(f"kb-{size}.png", "wb") as f:
        f.write(png(size))
