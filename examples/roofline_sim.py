#!/usr/bin/env python3
"""roofline_sim.py: a deterministic stand-in for CPU LLM decode, for the roofline example.

Decode of one token reads every weight once, so its speed is bounded by memory bandwidth:
tok_s <= read_bandwidth / bytes_per_token. This program prints {"tok_s": ...} for a model on a machine,
at an efficiency below that bound that depends on the machine and the model, as measured speeds do.
With --probe it prints the machine's host read bandwidth in GB/s instead (what `sweep hosts probe` measures).
The machine is SIM_HOST from the environment, else --host.
"""
import argparse
import json
import os
import random
import zlib

# name: (class, host read bandwidth GB/s, decode efficiency)
MACHINES = {
    "desk-7950x": ("consumer", 71.0, 0.82),
    "desk-14900k": ("consumer", 84.0, 0.78),
    "mini-m2pro": ("consumer", 180.0, 0.71),
    "srv-epyc9654": ("server", 390.0, 0.55),
    "srv-xeon8480": ("server", 262.0, 0.61),
}


def machine(name):
    if name in MACHINES:
        return MACHINES[name]
    h = zlib.crc32(name.encode())
    return ("unknown", 40.0 + h % 200, 0.5 + (h >> 8) % 30 / 100.0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", required=True)
    ap.add_argument("--bytes-per-token", type=float)
    ap.add_argument("--model", default="")
    ap.add_argument("--cell", default="")
    ap.add_argument("--probe", choices=["host_read_gbs", "class"])
    a = ap.parse_args()
    name = os.environ.get("SIM_HOST", a.host)
    cls, gbs, eff = machine(name)
    if a.probe == "host_read_gbs":
        print(gbs)
        return
    if a.probe == "class":
        print(cls)
        return
    # larger models stream better (longer sequential reads): +0..6 % efficiency
    eff *= 1.0 + min(a.bytes_per_token / 1e9, 12.0) * 0.005
    eff *= random.Random(a.cell or name + a.model).gauss(1.0, 0.005)
    print(json.dumps({"tok_s": round(gbs * 1e9 / a.bytes_per_token * eff, 3)}))


if __name__ == "__main__":
    main()
