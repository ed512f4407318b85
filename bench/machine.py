"""What the benchmark scripts say about the machine they ran on: its cores,
memory and CPU model, its load average, and the time, as their reports
print them (load_bench_report.py, server_bench_report.py) and as
bench/run.sh's machine.json holds them (result_rows.py)."""

import os
import time
from pathlib import Path

PROC = Path("/proc")


def nproc():
    """The cores this process may run on (as nproc(1) counts them)."""
    return len(os.sched_getaffinity(0))


def mem_total_gib(proc=PROC):
    """MemTotal of /proc/meminfo, in GiB; None when it cannot be read."""
    for line in _read(proc / "meminfo").splitlines():
        fields = line.split()
        if fields and fields[0] == "MemTotal:":
            return int(fields[1]) / 1048576
    return None


def cpu_model(proc=PROC):
    """The first "model name" of /proc/cpuinfo; "" when there is none."""
    for line in _read(proc / "cpuinfo").splitlines():
        if "model name" in line and ": " in line:
            return line.split(": ")[1]
    return ""


def load_average(proc=PROC):
    """The 1, 5 and 15-minute load averages, as /proc/loadavg has them."""
    return " ".join(_read(proc / "loadavg").split()[:3])


def utc_now():
    """The time, as the reports date a run: 2026-01-02 15:04 UTC."""
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())


def summary(proc=PROC):
    """"2 cores, 15.6 GiB, MODEL": the machine line of a report."""
    mem = mem_total_gib(proc)
    return (f"{nproc()} cores, {'?' if mem is None else f'{mem:.1f}'} GiB, "
            f"{cpu_model(proc)}")


def _read(path):
    try:
        return path.read_text()
    except OSError:
        return ""
