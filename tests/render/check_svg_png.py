#!/usr/bin/env python3
"""check_svg_png.py MAP.svg SHOT.png: checks a browser's rendering of a case map.

Reads the map geometry the SVG declares (data-x0, data-y0, data-cell-w/h,
data-columns on <g class="cells">) and the claimed interval, then checks pixel
colours in the PNG that headless Chromium made of it: for every column of the
first row, the colour is the step of the share of its cases that hold (none,
quarters, all) and says inside / outside the claimed interval exactly as the
report's own map does; every cell's <title> names its codes and its
holding/total counts as the map has them; the picture is not blank.
Exit 1 on the first wrong pixel or title. Standard library only (zlib PNG decoding)."""
import json
import struct
import sys
import xml.etree.ElementTree as ET
import zlib

import re

# The six steps of the share of a cell's cases that hold (src/report/svg.cpp's
# kSteps), and outside the claimed interval the same colour at 40% on white.
STEPS = ["#c51b7d", "#de77ae", "#f1b6da", "#b8e186", "#7fbc41", "#276419"]
PALE = 0.4


def step_of(holding, total):
    if holding == 0:
        return 0
    if holding == total:
        return 5
    return 1 + min(3, 4 * holding // total)


def colour_of(holding, total, inside):
    rgb = hex_rgb(STEPS[step_of(holding, total)])
    return rgb if inside else tuple(int(255 - (255 - c) * PALE + 0.5) for c in rgb)


def read_png(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    width, height, depth, colour_type, _, _, interlace = header
    assert depth == 8 and interlace == 0 and colour_type in (2, 6), f"unsupported PNG {header}"
    bpp = 3 if colour_type == 2 else 4
    raw, stride = zlib.decompress(idat), width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return width, height, lambda x, y: tuple(rows[y][x * bpp:x * bpp + 3])


def hex_rgb(colour):
    return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))


def check_panel(cells, report, pixel, size):
    """Every column of one panel (<g class="cells">): a column holds codes
    first + k*per .. first + (k+1)*per - 1 of the claim's map; it fails when any
    case of its band fails, and is inside the claim when any of its codes is."""
    x0, y0 = int(cells.get("data-x0")), int(cells.get("data-y0"))
    cw, ch = int(cells.get("data-cell-w")), int(cells.get("data-cell-h"))
    columns, bands = int(cells.get("data-columns")), int(cells.get("data-rows"))
    per_band = int(cells.get("data-rows-per-band", "1"))
    first = int(cells.get("data-first-code", "0"))
    per = int(cells.get("data-codes-per-column", "1"))
    map_first = int(cells.get("data-map-first-code", "0"))
    lo, hi = report["over"]["spec_interval"]
    claim = report["claims"][int(cells.get("data-claim", "0"))]
    rows, map_columns, bits = claim["map"]["rows"], claim["map"]["columns"], claim["map"]["failing_hex"]
    assert size[0] >= x0 + columns * cw and size[1] >= y0 + ch * bands, "screenshot smaller than the map"
    band = 1 if bands > 1 else 0  # element code 1 (subnormal before scaling) in an unbanded map
    checked = 0
    for column in range(columns):
        codes = range(first + column * per, min(first + (column + 1) * per, map_first + map_columns))
        if any(c in codes for c in (lo - 1, lo, hi, hi + 1)):
            continue  # the claimed-interval outline is drawn over these cells' edges
        holding = total = 0
        for code in codes:
            for row in range(band * per_band, min(rows, (band + 1) * per_band)):
                bit = (code - map_first) * rows + row
                total += 1
                holding += 0 if (int(bits[bit // 4], 16) >> (3 - bit % 4)) & 1 else 1
        inside = codes[-1] >= lo and codes[0] <= hi
        want = colour_of(holding, total, inside)
        x, y = x0 + column * cw + cw // 2, y0 + band * ch + ch // 2
        got = pixel(x, y)
        if max(abs(g - w) for g, w in zip(got, want)) > 24:
            print(f"pixel ({x},{y}) for column {column} (codes {codes[0]}..{codes[-1]}): rgb{got}, expected rgb{want} "
                  f"({holding}/{total} hold, {'inside' if inside else 'outside'} the claim)")
            return None
        checked += 1
    return checked


TITLE = re.compile(r"^codes? (\S+?)(?:\.\.(\S+))?, (.*): (\d+)/(\d+) hold$")


def check_titles(cells, report):
    """Every rectangle of a panel has a <title> "codes A..B, ROWS: H/T hold" whose
    counts are the map's over those codes and the rectangle's band of rows."""
    ns = "{http://www.w3.org/2000/svg}"
    y0, ch = int(cells.get("data-y0")), int(cells.get("data-cell-h"))
    per_band = int(cells.get("data-rows-per-band", "1"))
    map_first = int(cells.get("data-map-first-code", "0"))
    claim = report["claims"][int(cells.get("data-claim", "0"))]
    rows, bits = claim["map"]["rows"], claim["map"]["failing_hex"]
    n = 0
    for rect in cells.iter(f"{ns}rect"):
        title = rect.find(f"{ns}title")
        m = TITLE.match(title.text if title is not None else "")
        if not m:
            print(f"a cell without a title of codes and counts: {ET.tostring(rect)[:200]}")
            return None
        lo = int(m.group(1), 0)  # "0x3C00" (inputs over 8 bits) or "113"
        hi = int(m.group(2), 0) if m.group(2) else lo
        band = (int(rect.get("y")) - y0) // ch
        holding = total = 0
        for code in range(lo, hi + 1):
            for row in range(band * per_band, min(rows, (band + 1) * per_band)):
                bit = (code - map_first) * rows + row
                total += 1
                holding += 0 if (int(bits[bit // 4], 16) >> (3 - bit % 4)) & 1 else 1
        if (holding, total) != (int(m.group(4)), int(m.group(5))):
            print(f"title {title.text!r}: the map has {holding}/{total} there")
            return None
        n += 1
    return n


def main(svg_path, png_path, report_path):
    svg = ET.parse(svg_path).getroot()
    ns = {"s": "http://www.w3.org/2000/svg"}
    report = json.load(open(report_path))["result"]
    width, height, pixel = read_png(png_path)
    panels = svg.findall(".//s:g[@class='cells']", ns)
    checked = 0
    titles = 0
    for cells in panels:
        n = check_panel(cells, report, pixel, (width, height))
        t = check_titles(cells, report)
        if n is None or t is None:
            return 1
        checked += n
        titles += t
    y0, ch = int(panels[0].get("data-y0")), int(panels[0].get("data-cell-h"))
    distinct = {pixel(x, y0 + ch // 2) for x in range(0, width, 7)}
    if len(distinct) < 4:
        print(f"picture nearly blank: {len(distinct)} colours on the first map row")
        return 1
    print(f"{checked} columns of {len(panels)} panels checked in the browser's rendering, {titles} cell titles; "
          f"{len(distinct)} colours on the first row")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
