#!/usr/bin/python3
"""Draws a Grafana dashboard's panels from Prometheus with gnuplot, without
Grafana: one PNG per row of the dashboard, one plot per panel.

It reads the dashboard (deploy/grafana/roost.json), fills in its variables
as Grafana would (a query variable from label_values() over the Prometheus
HTTP API, a multi-value one as the regex (a|b|c)), runs every panel's
queries over a time range with /api/v1/query_range, and hands the series
to gnuplot: time series as lines, a heatmap's cumulative buckets as a
grid of per-bucket rates. Standard library only (urllib, json); gnuplot
must be on PATH.

Used by tests/deploy/prometheus_live_test.py, which draws docs/img/grafana-*.png
from a live Prometheus scraping roost-servers under load. By hand:

    deploy/grafana/plot.py --prometheus http://127.0.0.1:9090 \\
        --start 1717000000 --end 1717003600 --var namespace=prod --out /tmp/plots
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys
import urllib.parse
import urllib.request

DEFAULT_DASHBOARD = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                 "roost.json")


class Prometheus:
    """The few calls of Prometheus's HTTP API (/api/v1) this needs."""

    def __init__(self, url, timeout=30):
        self.url = url.rstrip("/")
        self.timeout = timeout

    def get(self, path, **params):
        query = urllib.parse.urlencode(params, doseq=True)
        with urllib.request.urlopen(f"{self.url}{path}?{query}",
                                    timeout=self.timeout) as response:
            body = json.load(response)
        if body.get("status") != "success":
            raise RuntimeError(f"{path} {params}: {body}")
        return body["data"]

    def query(self, expr, time=None):
        params = {"query": expr}
        if time is not None:
            params["time"] = f"{time:.3f}"
        return self.get("/api/v1/query", **params)["result"]

    def query_range(self, expr, start, end, step):
        return self.get("/api/v1/query_range", query=expr,
                        start=f"{start:.3f}", end=f"{end:.3f}",
                        step=f"{step}s")["result"]

    def label_values(self, label, match):
        return self.get(f"/api/v1/label/{label}/values",
                        **{"match[]": match})


def substitute(text, values):
    """`text` with $name and ${name} replaced by values[name]."""
    def replace(m):
        name = m.group(1) or m.group(2)
        return values.get(name, m.group(0))
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", replace, text)


def regex_escape(value):
    """A label value as Grafana escapes it into a Prometheus regex."""
    return re.sub(r"([\\^$.|?*+()\[\]{}])", r"\\\1", value)


def resolve_variables(prometheus, dashboard, given):
    """Each templating variable's text, as Grafana substitutes it: `given`
    where set, else every value of a multi-value variable as (a|b), else
    the first value. Variables are resolved in order, so a query may name
    the ones before it."""
    values = {}
    for var in dashboard.get("templating", {}).get("list", []):
        name = var["name"]
        if var["type"] == "datasource":
            values[name] = given.get(name, "prometheus")
            continue
        query = var.get("query")
        if isinstance(query, dict):
            query = query.get("query", "")
        m = re.fullmatch(r"\s*label_values\((.*),\s*(\w+)\)\s*",
                         substitute(query or "", values))
        if name in given:
            values[name] = given[name]
            continue
        if m is None:
            raise ValueError(f"variable {name}: cannot resolve {query!r}")
        found = sorted(prometheus.label_values(m.group(2), m.group(1)))
        if not found:
            raise ValueError(f"variable {name}: {query!r} has no values")
        if var.get("multi"):
            values[name] = "(" + "|".join(regex_escape(v) for v in found) + ")"
        else:
            values[name] = found[0]
    return values


def rows(dashboard):
    """[(row title, [panel, ...]), ...] in the dashboard's order."""
    out = []
    for panel in dashboard["panels"]:
        if panel["type"] == "row":
            out.append((panel["title"], list(panel.get("panels", []))))
        elif out:
            out[-1][1].append(panel)
        else:
            out.append(("", [panel]))
    return out


def legend(fmt, labels):
    """A series' name from its target's legendFormat ({{label}})."""
    if not fmt:
        return "{" + ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"
    return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: labels.get(m.group(1), ""),
                  fmt)


def fetch_panels(prometheus, dashboard, values, start, end, step):
    """Every panel's series over [start, end]:
    [(row title, [(panel, [(target, [(legend, [(t, v), ...]), ...]), ...]), ...]), ...]
    """
    out = []
    for title, panels in rows(dashboard):
        drawn = []
        for panel in panels:
            targets = []
            for target in panel.get("targets", []):
                expr = substitute(target["expr"], values)
                result = prometheus.query_range(expr, start, end, step)
                series = [(legend(target.get("legendFormat", ""), r["metric"]),
                           [(float(t), float(v)) for t, v in r["values"]])
                          for r in result]
                series.sort(key=lambda s: s[0])
                targets.append((dict(target, expr=expr), series))
            drawn.append((panel, targets))
        out.append((title, drawn))
    return out


def _quote(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _le_value(le):
    return math.inf if le == "+Inf" else float(le)


def _unit_setup(unit, largest):
    """gnuplot lines for a Grafana unit, and the factor values are scaled by
    (`largest`: the largest value drawn, to pick hours over seconds)."""
    if unit == "percentunit":
        return ['set ylabel "%"', 'set format y "%g"'], 100.0
    if unit == "s" and largest >= 3 * 3600:
        return ['set ylabel "hours"', 'set format y "%g"'], 1 / 3600
    if unit == "s" and largest >= 180:
        return ['set ylabel "minutes"', 'set format y "%g"'], 1 / 60
    if unit == "s":
        return ['set ylabel "seconds"', 'set format y "%.1s%c"'], 1.0
    if unit == "bytes":
        return ['set ylabel "bytes"', 'set format y "%.1s%cB"'], 1.0
    if unit == "Bps":
        return ['set ylabel "bytes/s"', 'set format y "%.1s%cB"'], 1.0
    if unit == "reqps":
        return ['set ylabel "requests/s"', 'set format y "%g"'], 1.0
    return ['set ylabel ""', 'set format y "%g"'], 1.0


def plot_rows(fetched, start, end, out_dir, prefix="grafana", gnuplot="gnuplot"):
    """Writes one PNG per row into out_dir (PREFIX-ROW.png), time from
    `start` to `end`, and the data behind it; returns their paths."""
    os.makedirs(out_dir, exist_ok=True)
    data_dir = os.path.join(out_dir, "data")
    os.makedirs(data_dir, exist_ok=True)
    pngs = []
    for row_index, (title, panels) in enumerate(fetched):
        slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or str(row_index)
        png = os.path.join(out_dir, f"{prefix}-{slug}.png")
        columns = 3
        plot_rows_count = max(1, math.ceil(len(panels) / columns))
        script = [
            f"set terminal pngcairo size 1800,{440 * plot_rows_count + 60} "
            'font "DejaVu Sans,11" noenhanced',
            f"set output {_quote(png)}",
            "set datafile missing NaN",
            f"set multiplot layout {plot_rows_count},{columns} "
            f"title {_quote('roost dashboard: ' + title)} font \",15\"",
            'set xlabel "seconds from the start"',
            f"set xrange [0:{end - start:.0f}]",
            "set grid",
            "set key below font \",9\" maxrows 4",
            "set border 3", "set tics nomirror",
        ]
        for panel_index, (panel, targets) in enumerate(panels):
            data = os.path.join(data_dir, f"{slug}-{panel_index}.dat")
            defaults = panel.get("fieldConfig", {}).get("defaults", {})
            unit = defaults.get("unit", "") if panel["type"] != "heatmap" else ""
            values = [v for _, ss in targets for _, points in ss
                      for _, v in points if not math.isnan(v)]
            setup, scale = _unit_setup(unit, max(values, default=0))
            script += [f"set title {_quote(panel['title'])} font \",12\""] + setup
            # The panel's own bounds, as Grafana draws them.
            low = defaults.get("min")
            high = defaults.get("max")
            script.append("set yrange [{}:{}]".format(
                "*" if low is None else low * scale,
                "*" if high is None else high * scale))
            lines = []
            plots = []
            if panel["type"] == "heatmap":
                # Cumulative buckets (le) to a rate per bucket, on a grid of
                # time by bucket.
                series = [s for _, ss in targets for s in ss]
                series.sort(key=lambda s: _le_value(s[0]))
                if series:
                    times = [t for t, _ in series[0][1]]
                    cumulative = [dict(points) for _, points in series]
                    for t in times:
                        below = 0.0
                        for i, points in enumerate(cumulative):
                            v = points.get(t, math.nan)
                            lines.append(f"{t - start:.1f} {i} {v - below:.6g}")
                            below = v if not math.isnan(v) else below
                        lines.append("")
                    ticks = ", ".join(f"{_quote(le)} {i}"
                                      for i, (le, _) in enumerate(series))
                    script += [f"set ytics ({ticks})",
                               'set ylabel "blocks touched (le)"',
                               'set cblabel "lookups/s"',
                               "set palette defined (0 'white', 1 '#fdae6b', 2 '#e6550d', 3 '#7f2704')"]
                    plots.append(f"{_quote(data)} using 1:2:3 with image notitle")
            else:
                index = 0
                for target, series in targets:
                    for name, points in series:
                        for t, v in points:
                            lines.append(f"{t - start:.1f} {v * scale:.9g}")
                        lines += ["", ""]
                        plots.append(f"{_quote(data)} index {index} using 1:2 "
                                     f"with lines lw 2 title {_quote(name)}")
                        index += 1
            with open(data, "w") as f:
                f.write("\n".join(lines) + "\n")
            if not plots:
                script += ["set label 1 \"no data\" at graph 0.5,0.5 center",
                           "plot [0:1] [0:1] -1 notitle", "unset label 1"]
            else:
                script.append("plot " + ", \\\n  ".join(plots))
            if panel["type"] == "heatmap":
                script += ["set ytics autofreq", "unset cblabel"]
            script.append("set yrange [*:*]")
        script.append("unset multiplot")
        gp = os.path.join(data_dir, f"{slug}.gp")
        with open(gp, "w") as f:
            f.write("\n".join(script) + "\n")
        done = subprocess.run([gnuplot, gp], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"gnuplot {gp}: exit {done.returncode}: "
                               f"{done.stderr.strip()}")
        pngs.append(png)
    return pngs


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prometheus", required=True, help="http://HOST:PORT")
    parser.add_argument("--dashboard", default=DEFAULT_DASHBOARD)
    parser.add_argument("--start", type=float, required=True, help="Unix seconds")
    parser.add_argument("--end", type=float, required=True, help="Unix seconds")
    parser.add_argument("--step", type=float, default=2)
    parser.add_argument("--var", action="append", default=[],
                        help="NAME=VALUE for a dashboard variable (repeatable)")
    parser.add_argument("--out", required=True, help="directory for the PNGs")
    args = parser.parse_args()
    with open(args.dashboard) as f:
        dashboard = json.load(f)
    prometheus = Prometheus(args.prometheus)
    given = dict(v.split("=", 1) for v in args.var)
    values = resolve_variables(prometheus, dashboard, given)
    fetched = fetch_panels(prometheus, dashboard, values, args.start, args.end,
                           args.step)
    for png in plot_rows(fetched, args.start, args.end, args.out):
        print(png)


if __name__ == "__main__":
    sys.exit(main())
