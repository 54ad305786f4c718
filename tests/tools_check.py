#!/usr/bin/env python3
"""tools_check.py TOOL DB: what sweep stored for examples/tools/TOOL.yaml in DB, value for value against what
the tool itself printed or wrote, parsed here with python's json and re (tests/e2e/t0580-tools.sh).

Run from the repository root with $SWEEP set. Prints each comparison; exits 1 on the first difference.
Values must agree to 1e-12 (relative): sweep reads the same decimal text into the same double, and where
it converts (ns into s) multiplies by the same factor. A figure the tool rounds in its text (fio's
IOPS=16.1k) is compared with the exact one of its JSON to the rounding's 0.5 %.
"""
import json
import os
import re
import subprocess
import sys


def sql(db, query):
    out = subprocess.run([os.environ["SWEEP"], "sql", db, query, "--json"], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


def items(db):
    """{cell key: {(item, metric): value}} of the ok results."""
    got = {}
    for r in sql(db, "SELECT v.key, i.item, i.metric, i.value FROM v_results v JOIN items i ON i.result = v.id"
                     " WHERE v.status = 'ok'"):
        # sweep sql --json writes text that reads as a number as a number: an item is a name
        got.setdefault(r["key"], {})[(str(r["item"]), r["metric"])] = r["value"]
    return got


def metrics(db):
    """{cell key: {metric: value}} of the ok results."""
    got = {}
    for r in sql(db, "SELECT v.key, m.name, m.value FROM v_results v JOIN metrics m ON m.result = v.id"
                     " WHERE v.status = 'ok'"):
        got.setdefault(r["key"], {})[r["name"]] = r["value"]
    return got


def same(what, got, want, tol=1e-12):
    ok = got is not None and abs(got - want) <= tol * max(1.0, abs(want))
    print("%s %s: sweep %r, the tool %r" % ("ok" if ok else "DIFFERENT", what, got, want))
    if not ok:
        sys.exit(1)


def count(what, got, want):
    print("%s %s: %d (want %d)" % ("ok" if got == want else "DIFFERENT", what, got, want))
    if got != want:
        sys.exit(1)


def gbench(db):
    """The JSON file of each cell: an item's value is the mean of its iterations, the tool's own _mean."""
    unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    got = items(db)
    count("cells", len(got), 2)
    for key, vals in got.items():
        doc = json.load(open("build/tools/%s-gbench.json" % key))
        runs = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"]
        names = sorted({b["name"] for b in runs})
        count("benchmarks of cell " + key, len({i for i, _ in vals}), len(names))
        for name in names:
            reps = [b for b in runs if b["name"] == name]
            mean = [b for b in doc["benchmarks"] if b["name"] == name + "_mean"][0]
            count("repetitions of " + name, len(reps), 3)
            for m in ("real_time", "cpu_time"):
                want = sum(b[m] * unit[b["time_unit"]] for b in reps) / len(reps)
                same("%s %s (s)" % (name, m), vals.get((name, m)), want)
                same("%s %s against the tool's _mean" % (name, m), vals.get((name, m)),
                     mean[m] * unit[mean["time_unit"]], 1e-9)
            same(name + " items_per_second", vals.get((name, "items_per_second")),
                 sum(b["items_per_second"] for b in reps) / len(reps))


def hyperfine(db):
    got = items(db)
    count("cells", len(got), 2)
    for key, vals in got.items():
        doc = json.load(open("build/tools/%s-hyperfine.json" % key))
        count("commands of cell " + key, len({i for i, _ in vals}), len(doc["results"]))
        for r in doc["results"]:
            for m in ("mean", "median", "user", "system"):
                same("%s %s" % (r["command"], m), vals.get((r["command"], m)), r[m])


def fio(db):
    """fio's JSON on the captured stdout (its normal text follows it there)."""
    rows = sql(db, "SELECT v.key, r.stdout FROM v_results v JOIN results r ON r.id = v.id WHERE v.status = 'ok'")
    got = metrics(db)
    count("cells", len(rows), 2)
    for row in rows:
        out = row["stdout"]
        doc, _ = json.JSONDecoder().raw_decode(out[out.index("\n{") + 1:])
        read = doc["jobs"][0]["read"]
        vals = got[row["key"]]
        same("iops", vals.get("iops"), read["iops"])
        same("bw_bytes", vals.get("bw_bytes"), read["bw_bytes"])
        same("clat p99", vals.get("clat_p99_ns"), read["clat_ns"]["percentile"]["99.000000"])
        text = re.search(r"read: IOPS=([0-9.]+)([kM]?), BW=([0-9.]+)([KMG])iB/s", out)
        same("IOPS= as the text says", vals.get("iops_text"),
             float(text.group(1)) * {"": 1, "k": 1e3, "M": 1e6}[text.group(2)])
        same("BW= as the text says", vals.get("bw_text"),
             float(text.group(3)) * {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}[text.group(4)])
        same("the text's rounded IOPS against the JSON's", vals.get("iops_text"), read["iops"], 5e-3)
        same("the text's rounded BW against the JSON's", vals.get("bw_text"), read["bw_bytes"], 5e-3)


def sysbench(db):
    rows = sql(db, "SELECT v.key, r.stdout FROM v_results v JOIN results r ON r.id = v.id WHERE v.status = 'ok'")
    got = metrics(db)
    count("cells", len(rows), 2)
    for row in rows:
        out, vals = row["stdout"], got[row["key"]]
        same("events per second", vals.get("events_per_s"),
             float(re.search(r"events per second:\s+([0-9.]+)", out).group(1)))
        same("total time in ms", vals.get("total_time_ms"),
             float(re.search(r"total time:\s+([0-9.]+)s", out).group(1)) * 1e3)
        same("latency avg", vals.get("latency_avg_ms"), float(re.search(r"\bavg:\s+([0-9.]+)", out).group(1)))
        same("latency p95", vals.get("latency_p95_ms"),
             float(re.search(r"95th percentile:\s+([0-9.]+)", out).group(1)))


def pytest_benchmark(db):
    got = items(db)
    count("cells", len(got), 1)
    for key, vals in got.items():
        doc = json.load(open("build/tools/%s-pytest.json" % key))
        count("tests", len({i for i, _ in vals}), len(doc["benchmarks"]))
        for b in doc["benchmarks"]:
            for m in ("mean", "median", "ops", "rounds"):
                same("%s %s" % (b["name"], m), vals.get((b["name"], m)), b["stats"][m])


def nccl_tests(db):
    text = open("examples/tools/samples/nccl-tests-all_reduce.txt").read()
    rows = [line.split() for line in text.splitlines() if line and not line.startswith("#")]
    (vals,) = items(db).values()
    (cell,) = metrics(db).values()
    count("sizes", len({i for i, _ in vals}), len(rows))
    for r in rows:
        same(r[0] + " busbw", vals.get((r[0], "busbw")), float(r[7]))
        same(r[0] + " busbw in place", vals.get((r[0], "busbw_inplace")), float(r[11]))
        same(r[0] + " time", vals.get((r[0], "time_us")), float(r[5]))
    avg = float(re.search(r"# Avg bus bandwidth\s+:\s+([0-9.]+)", text).group(1))
    same("the average it printed", cell.get("avg_busbw"), avg)
    same("the mean of the rows' busbw, as it averages them", (cell["busbw"] + cell["busbw_inplace"]) / 2, avg, 1e-4)


def nvbench(db):
    doc = json.load(open("examples/tools/samples/nvbench-axes.json"))
    tags = {"gpu_time": "nv/cold/time/gpu/mean", "gpu_noise": "nv/cold/time/gpu/stdev/relative",
            "cpu_time": "nv/cold/time/cpu/mean", "batch_gpu_time": "nv/batch/time/gpu/mean",
            "samples": "nv/cold/sample_size"}
    (vals,) = items(db).values()
    states = doc["benchmarks"][0]["states"]
    count("states", len({i for i, _ in vals}), len(states))
    for st in states:
        summ = {s["tag"]: s for s in st["summaries"]}
        for m, tag in tags.items():
            (value,) = [d["value"] for d in summ[tag]["data"] if d["name"] == "value"]
            same("%s %s" % (st["name"], m), vals.get((st["name"], m)), float(value))


def gbench_console(db):
    """Its console table: bytes' k, M, G as powers of 1024, items' as powers of 1000, times with their unit;
    against the same run's JSON file too, to the console's rounding (6 significant digits, times 3)."""
    got = items(db)
    rows = captured(db, "stdout")
    count("cells", len(rows), 2)
    for key, out in rows:
        doc = json.load(open("build/tools/%s-gbench-console.json" % key))
        for b in doc["benchmarks"]:
            line = re.search(r"^%s +([0-9.]+) ([a-z]+) .*bytes_per_second=([0-9.]+)([kMGT]?)/s "
                             r"items_per_second=([0-9.]+)([kMGT]?)/s" % re.escape(b["name"]), out, re.M)
            vals = got[key]
            for m, at, base in (("bytes_per_second", 3, 1024), ("items_per_second", 5, 1000)):
                text = float(line.group(at)) * base ** " kMGT".index(line.group(at + 1) or " ")
                same("%s %s, the text's k, M, G of %d" % (b["name"], m, base), vals.get((b["name"], m)), text)
                same("%s %s against its JSON" % (b["name"], m), vals.get((b["name"], m)), b[m], 5e-6)
            same(b["name"] + " time, the text", vals.get((b["name"], "time")), float(line.group(1)) * TIME[line.group(2)])
            same(b["name"] + " time against its JSON", vals.get((b["name"], "time")),
                 b["real_time"] * TIME[b["time_unit"]], 5e-3)


def captured(db, stream):
    """[(cell key, what the tool wrote on stream)] of the ok results: sweep keeps each cell's stdout head and
    stderr tail (64 KiB), as the tool wrote them."""
    rows = sql(db, "SELECT v.key, r.%s AS text FROM v_results v JOIN results r ON r.id = v.id"
                   " WHERE v.status = 'ok'" % stream)
    return [(r["key"], r["text"]) for r in rows]


TIME = {"ns": 1e-9, "nsec": 1e-9, "us": 1e-6, "usec": 1e-6, "ms": 1e-3, "msec": 1e-3, "s": 1.0, "sec": 1.0}


def terminal(line):
    """What a terminal shows of a line that '\r' went back over: each part overwrites the start of the last."""
    shown = ""
    for part in line.split("\r"):
        shown = part + shown[len(part):]
    return shown.rstrip(" ")


def zstd(db):
    got = metrics(db)
    rows = captured(db, "stdout")
    count("cells", len(rows), 2)
    for key, out in rows:
        (line,) = [terminal(l) for l in out.split("\n") if "#" in l]
        comp, dec = re.findall(r"([0-9.]+) MB/s", line)
        same("compression MB/s, the last figure shown", got[key].get("comp"), float(comp))
        same("decompression MB/s", got[key].get("dec"), float(dec))
        same("ratio", got[key].get("ratio"), float(re.search(r"\(x([0-9.]+)\)", line).group(1)))


def timeit(db):
    got = metrics(db)
    rows = captured(db, "stdout")
    count("cells", len(rows), 2)
    for key, out in rows:
        v, u = re.search(r"best of [0-9]+: ([0-9.]+) ([a-z]+) per loop", out).groups()
        same("per loop in s (it printed %s %s)" % (v, u), got[key].get("loop"), float(v) * TIME[u])


def openssl(db):
    got = metrics(db)
    rows = captured(db, "stdout")
    count("cells", len(rows), 4)
    for key, out in rows:
        v = re.search(r"^[+]F:[0-9]+:[^:]+:([0-9.]+)$", out, re.M).group(1)
        same("MB/s of its bytes per second", got[key].get("rate"), float(v) / 1e6)


def perf_stat(db):
    got = metrics(db)
    rows = captured(db, "stderr")
    count("cells", len(rows), 2)
    for key, err in rows:
        same("task-clock in s", got[key].get("task_clock"),
             float(re.search(r"([0-9.]+) msec +task-clock", err).group(1)) / 1e3)
        v, p = re.search(r"page-faults +# +([0-9.]+) ([KMG]?)/sec", err).groups()
        same("page faults a second", got[key].get("faults_rate"), float(v) * {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}[p])


def iperf3(db):
    got = metrics(db)
    rows = captured(db, "stdout")
    count("cells", len(rows), 2)
    for key, out in rows:
        doc = json.loads(out)   # a key given twice: python keeps its last value, as duplicate_keys: last
        same("bits per second received", got[key].get("received_bps"), doc["end"]["sum_received"]["bits_per_second"])
        same("bits per second sent", got[key].get("sent_bps"), doc["end"]["sum_sent"]["bits_per_second"])
        same("retransmits", got[key].get("retransmits"), doc["end"]["sum_sent"]["retransmits"])


def pyperf(db):
    got = metrics(db)
    rows = captured(db, "stdout")
    count("cells", len(rows), 1)
    for key, out in rows:
        m, mu, sd, su = re.search(r"Mean \+- std dev: ([0-9.]+) ([a-z]+) \+- ([0-9.]+) ([a-z]+)", out).groups()
        same("mean in s (it printed %s %s)" % (m, mu), got[key].get("mean"), float(m) * TIME[mu])
        same("std dev in s", got[key].get("stdev"), float(sd) * TIME[su])


def pyperf_json(db):
    got = metrics(db)
    count("cells", len(got), 1)
    for key, vals in got.items():
        doc = json.load(open("build/tools/%s-pyperf.json" % key))
        values = [v for run in doc["benchmarks"][0]["runs"] for v in run.get("values", [])]
        same("the mean of its %d values" % len(values), vals.get("mean"), sum(values) / len(values))


def fio_jobs(db):
    """Two jobs of one name: their sum (combine: sum), no note."""
    got = items(db)
    rows = captured(db, "stdout")
    count("cells", len(rows), 1)
    for key, out in rows:
        jobs = [j for j in json.loads(out)["jobs"] if j["jobname"] == "reader"]
        count("jobs named reader", len(jobs), 2)
        for m, path in (("iops", "iops"), ("bw_bytes", "bw_bytes"), ("ios", "total_ios")):
            same("reader %s, the jobs' sum" % m, got[key].get(("reader", m)), sum(j["read"][path] for j in jobs))
    count("results with a note", sql(db, "SELECT count(*) AS n FROM results WHERE note IS NOT NULL")[0]["n"], 0)


if __name__ == "__main__":
    checks = {"gbench": gbench, "hyperfine": hyperfine, "fio": fio, "sysbench": sysbench,
              "pytest-benchmark": pytest_benchmark, "nccl-tests": nccl_tests, "nvbench": nvbench, "zstd": zstd,
              "gbench-console": gbench_console,
              "timeit": timeit, "openssl": openssl, "perf-stat": perf_stat, "iperf3": iperf3, "pyperf": pyperf,
              "pyperf-json": pyperf_json, "fio-jobs": fio_jobs}
    checks[sys.argv[1]](sys.argv[2])
