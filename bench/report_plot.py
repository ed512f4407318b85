"""The report's plots: gnuplot scripts and data files written to a
temporary directory, drawn as PNGs (`pngcairo`)."""

import subprocess
from pathlib import Path

from report_common import CEILING, ReportError, is_roost

POINTS = [7, 5, 9, 11, 13, 6, 4, 8, 10, 12, 14, 1, 2, 3]
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
          "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#393b79", "#637939",
          "#000000", "#e6ab02", "#a6761d", "#66a61e"]


def gq(s): return "'" + str(s).replace("'", "''") + "'"


def plot(tmp, png, title, xlabel, ylabel, series, xtics, key="below", source=""):
    """series: [(title, [(x, y)...], style)] drawn as lines with points;
    source (command, machine, date) is printed under the title."""
    series = [(t, [p for p in pts if p[1] and p[1] > 0], st) for t, pts, st in series]
    series = [s for s in series if s[1]]
    if not series:
        return False
    stem = tmp / png.stem
    with open(f"{stem}.dat", "w") as f:
        for t, pts, _ in series:
            f.write(f"# {t}\n" + "".join(f"{x} {y}\n" for x, y in sorted(pts)) + "\n\n")
    tics = ", ".join(f"{gq(lbl)} {x}" for x, lbl in xtics)
    xs = [x for _, pts, _ in series for x, _ in pts]
    plots = ", ".join(f"{gq(str(stem) + '.dat')} index {i} using 1:2 with linespoints "
                      f"{st} title {gq(t)}" for i, (t, _, st) in enumerate(series))
    script = f"""set terminal pngcairo size 900,560 font ',10'
set output {gq(png)}
set tmargin 4
set label 1 {gq(title)} at screen 0.5, 0.965 center font ',11'
set label 2 {gq(source)} at screen 0.5, 0.925 center font ',8'
set xlabel {gq(xlabel)}
set ylabel {gq(ylabel)}
set logscale xy
set xrange [{min(xs) / 1.6}:{max(xs) * 1.6}]
set xtics ({tics})
set grid xtics ytics mytics
set key {key} font ',9'
plot {plots}
"""
    Path(f"{stem}.gp").write_text(script)
    try:
        subprocess.run(["gnuplot", f"{stem}.gp"], check=True, capture_output=True, text=True)
    except FileNotFoundError:
        raise ReportError("gnuplot not found (Debian: apt-get install gnuplot-nox)")
    except subprocess.CalledProcessError as e:
        raise ReportError(f"gnuplot failed on {stem}.gp:\n{e.stderr}")
    return True


def style(i, system, dashed=False):
    lw = 2.5 if is_roost(system) else 1.5
    dt = 2 if dashed or system == CEILING else 1
    return f"lc rgb {gq(COLORS[i % len(COLORS)])} pt {POINTS[i % len(POINTS)]} lw {lw} dt {dt}"
