#!/usr/bin/env python3
"""figure_geometry.py SVG: checks a figure gnuplot drew (sweep plot, a page's figure) from its geometry.

- each panel's plot area (its border's box) is at least 60 % of the panel's width and height (the canvas
  divided by the layout's columns and rows, ceil(sqrt(panels)) columns as sweep lays facets out);
- the x tick labels under a border do not overlap, each label's box taken from its place, its anchor, its
  font size and its text (0.62 of the font size a character: wider than DejaVu Sans's digits and most
  letters, so that a pass means no overlap);
- the legend's box is under its panel's plot area (so under its title), each entry's text lies inside it,
  and no two lines of its text overlap.
Prints "panel K: area W% x H%" per panel and "ok", or what is wrong, and exits 1.
"""
import math
import re
import sys

CHAR_W = 0.62


def rects(svg):
    """Closed rectangles: (x1, y1, x2, y2, drawn downwards first), each once."""
    seen, out = set(), []
    for d in re.findall(r"d='M([-\d.]+),([-\d.]+) L([-\d.]+),([-\d.]+) L([-\d.]+),([-\d.]+) "
                        r"L([-\d.]+),([-\d.]+) L[-\d.]+,[-\d.]+ Z", svg):
        v = [float(x) for x in d]
        xs, ys = v[0::2], v[1::2]
        box = (min(xs), min(ys), max(xs), max(ys))
        if box in seen or box[2] - box[0] < 1 or box[3] - box[1] < 1:
            continue
        seen.add(box)
        out.append(box + (v[1] < v[3],))
    return out


def texts(svg):
    """Text drawn: (x, y, anchor, font size, text, rotated)."""
    out = []
    for m in re.finditer(r'<g transform="translate\(([-\d.]+),([-\d.]+)\)( rotate\([-\d.]+\))?"[^>]*'
                         r'font-size="([\d.]+)"\s+text-anchor="(\w+)">\s*<text>(.*?)</text>', svg, re.S):
        t = re.sub(r"<[^>]+>", "", m.group(6))
        for a, b in (("&lt;", "<"), ("&gt;", ">"), ("&amp;", "&"), ("&apos;", "'"), ("&quot;", '"')):
            t = t.replace(a, b)
        out.append((float(m.group(1)), float(m.group(2)), m.group(5), float(m.group(4)), t, bool(m.group(3))))
    return out


def box_of(t):
    """A text's box (x1, y1, x2, y2): its width from its characters, its height the font size."""
    x, y, anchor, fs, s, _ = t
    w = len(s) * CHAR_W * fs
    x1 = x - w / 2 if anchor == "middle" else x - w if anchor == "end" else x
    return (x1, y - fs * 0.8, x1 + w, y + fs * 0.25)


def meet(a, b):
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def main():
    svg = open(sys.argv[1], encoding="utf-8").read()
    m = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg)
    width, height = float(m.group(1)), float(m.group(2))
    rs = rects(svg)
    borders = [r[:4] for r in rs if r[4]]
    keys = [r[:4] for r in rs if not r[4]]
    bad = []
    if not borders:
        print("no plot area found")
        return 1
    cols = math.ceil(math.sqrt(len(borders)))
    rows = math.ceil(len(borders) / cols)
    ts = texts(svg)
    for k, b in enumerate(borders):
        fw, fh = (b[2] - b[0]) / (width / cols), (b[3] - b[1]) / (height / rows)
        print("panel %d: area %.0f%% x %.0f%%" % (k + 1, fw * 100, fh * 100))
        if fw < 0.6 or fh < 0.6:
            bad.append("panel %d: its plot area is %.0f%% x %.0f%% of its share of the figure" % (k + 1, fw * 100, fh * 100))
        ticks = sorted((t for t in ts if t[2] == "middle" and not t[5] and b[0] - 30 <= t[0] <= b[2] + 30
                        and b[3] < t[1] < b[3] + 2.2 * t[3]), key=lambda t: t[0])
        for p, q in zip(ticks, ticks[1:]):
            if box_of(p)[2] + 0.1 * p[3] > box_of(q)[0]:
                bad.append("panel %d: x tick labels '%s' and '%s' overlap" % (k + 1, p[4], q[4]))
        titles = [t for t in ts if t[2] == "middle" and not t[5] and t[1] < b[1]]
        cw, ch = width / cols, height / rows
        cell = (math.floor((b[0] + b[2]) / 2 / cw), math.floor((b[1] + b[3]) / 2 / ch))
        for key in keys:
            if (math.floor((key[0] + key[2]) / 2 / cw), math.floor((key[1] + key[3]) / 2 / ch)) != cell:
                continue      # another panel's
            if key[0] < b[2] and b[0] < key[2] and key[1] < b[3]:
                bad.append("panel %d: the legend is not under the plot area" % (k + 1))
            if meet(key, b):
                bad.append("panel %d: the legend's box %s covers the plot area %s" % (k + 1, key, b))
            for t in titles:
                if meet(key, box_of(t)):
                    bad.append("the legend's box meets the title '%s'" % t[4])
    for key in keys:
        entries = [t for t in ts if t[2] == "start" and key[1] <= t[1] <= key[3] and key[0] <= t[0] <= key[2]]
        for t in entries:
            if box_of(t)[2] > key[2] + 2:
                bad.append("the legend's entry '%s' spills out of its box" % t[4])
        for i, t in enumerate(entries):
            for u in entries[i + 1:]:
                a, b = box_of(t), box_of(u)
                if a[0] < b[2] and b[0] < a[2] and abs(t[1] - u[1]) < 0.9 * t[3]:
                    bad.append("the legend's lines '%s' and '%s' overlap" % (t[4], u[4]))
    for line in bad:
        print(line)
    if not bad:
        print("ok")
    return 1 if bad else 0


sys.exit(main())
