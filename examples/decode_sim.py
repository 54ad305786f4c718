#!/usr/bin/env python3
"""decode_sim.py: a deterministic stand-in for an LLM decode benchmark, for the decode-grid example.

Prints one JSON line per problem, {"item": "p07", "tok_s": 812.5}, as a real harness would. The speed
depends on the model, the token budget, the host and the system; the "cache" system is a few percent faster
than "baseline" on most problems. The noise is seeded by the cell key, so a cell always prints the same
numbers and two passes of a cell differ a little, like real passes.
"""
import argparse
import json
import os
import random
import zlib

MODELS = {"llama-8b": 1450.0, "qwen-14b": 830.0}   # tokens/s at budget 256 on a reference host


def host_factor(host):
    # Hosts differ in speed: a stable factor in [0.75, 1.25) from the host's name.
    return 0.75 + (zlib.crc32(host.encode()) % 1000) / 2000.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--system", required=True, choices=["cache", "baseline"])
    ap.add_argument("--model", required=True, choices=sorted(MODELS))
    ap.add_argument("--budget", type=int, required=True)
    ap.add_argument("--host", required=True)
    ap.add_argument("--cell", required=True)
    ap.add_argument("--problems", type=int, default=30)
    a = ap.parse_args()
    host = os.environ.get("SIM_HOST", a.host)
    base = MODELS[a.model] * host_factor(host) * (256.0 / a.budget) ** 0.15
    # The cache helps more with longer budgets (more reuse): +2 %, +4 %, +7 %.
    gain = {256: 1.02, 1024: 1.04, 4096: 1.07}.get(a.budget, 1.03)
    problem_rng = random.Random("problems")        # the same 30 problems in every cell
    noise_rng = random.Random(a.cell)              # run-to-run noise, fixed per cell
    for i in range(a.problems):
        difficulty = problem_rng.uniform(0.6, 1.4)
        per_problem_gain = problem_rng.gauss(gain, 0.02)
        tok_s = base / difficulty * (per_problem_gain if a.system == "cache" else 1.0)
        tok_s *= noise_rng.gauss(1.0, 0.01)
        print(json.dumps({"item": "p%02d" % i, "tok_s": round(tok_s, 2)}))


if __name__ == "__main__":
    main()
