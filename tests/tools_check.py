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


if __name__ == "__main__":
    checks = {"gbench": gbench, "hyperfine": hyperfine, "fio": fio, "sysbench": sysbench,
              "pytest-benchmark": pytest_benchmark, "nccl-tests": nccl_tests, "nvbench": nvbench}
    checks[sys.argv[1]](sys.argv[2])
