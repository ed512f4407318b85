"""The report's "Build" section (build.jsonl): build speed, peak RSS and
output size beside roost-load's cuckoo build."""

from report_common import BUILD_REF, fint, fmib, fmops, fratio, fsig


def section(rep):
    rep.add("## Build", "")
    rep.notes("build")
    opb = lambda r: r["output_bytes"] / r["keys"] if r.get("output_bytes") else None
    for r in rep.res["build"] or []:
        r["output_bytes_per_key"] = None if "skipped" in r else opb(r)
    rep.per_system(
        "build", "build.jsonl", BUILD_REF,
        ["system", "keys", "seconds", "M keys/s", "ratio to roost-load cuckoo",
         "peak RSS MiB", "output bytes/key", "note"],
        lambda r, ref: [r["system"], fint(r["keys"]), fsig(r["seconds"]),
                        fmops(r["keys_per_s"]),
                        fratio(r["keys_per_s"], ref and ref["keys_per_s"]),
                        fmib(r["peak_rss_bytes"]), fsig(r["output_bytes_per_key"]),
                        r.get("note", "")],
        [("keys_per_s", "build speed (keys/s)", lambda v: f"{fmops(v)} M", True),
         ("peak_rss_bytes", "peak RSS", lambda v: f"{fmib(v)} MiB", False),
         ("output_bytes_per_key", "output bytes/key", fsig, False)])
