#!/usr/bin/python3
"""Pixel statistics of a PNG screenshot, standard library only.

usage: png_stats.py FILE [#rrggbb ...]
prints: width height nonwhite_fraction distinct_colours, then one line
"#rrggbb count" per colour asked for (exact matches).
"""
import struct
import sys
import zlib


def read_png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit("not a PNG: " + path)
    pos, idat, width = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise SystemExit("unsupported PNG format (depth %d, colour type %d)" % (depth, ctype))
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(height):
        ftype, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if ftype == 1:
                line[x] = (line[x] + a) & 255
            elif ftype == 2:
                line[x] = (line[x] + b) & 255
            elif ftype == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return width, height, bpp, rows


def main():
    width, height, bpp, rows = read_png(sys.argv[1])
    wanted = {bytes.fromhex(c.lstrip("#")): 0 for c in sys.argv[2:]}
    counts = {}
    nonwhite = 0
    for line in rows:
        for x in range(0, len(line), bpp):
            px = bytes(line[x:x + 3])
            counts[px] = counts.get(px, 0) + 1
            if px != b"\xff\xff\xff":
                nonwhite += 1
    for c in wanted:
        wanted[c] = counts.get(c, 0)
    print(width, height, "%.4f" % (nonwhite / float(width * height)), len(counts))
    for c, n in wanted.items():
        print("#" + c.hex(), n)


main()
