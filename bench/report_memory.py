"""The report's "Memory per key" section (memory.jsonl)."""

from report_common import MEM_REF, fint, fratio, fsig


def section(rep):
    rep.add("## Memory per key", "")
    rep.notes("memory")
    rep.per_system(
        "memory", "memory.jsonl", MEM_REF,
        ["system", "keys", "bytes", "bytes/key", "ratio to roost", "what"],
        lambda r, ref: [r["system"], fint(r["keys"]), fint(r["bytes"]),
                        fsig(r["bytes_per_key"]),
                        fratio(r["bytes_per_key"], ref and ref["bytes_per_key"]),
                        r.get("what", "")],
        [("bytes_per_key", "bytes/key", fsig, False)])
