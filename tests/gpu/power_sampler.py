#!/usr/bin/env python3
"""power_sampler.py OUT [GPU] [PERIOD]: NVML's instantaneous power of GPU (NVML index, default 0) every
PERIOD seconds (default 0.01), as "epoch_seconds watts" lines appended to OUT, until killed (SIGTERM).
A process of its own beside sweep, for tests/gpu/energy.sh: the field NVML_FI_DEV_POWER_INSTANT, since
nvmlDeviceGetPowerUsage averages over a second on Ampere and later. Reads the card's state only."""
import ctypes
import signal
import sys
import time

FI_POWER_INSTANT = 186


class Field(ctypes.Structure):
    _fields_ = [("fieldId", ctypes.c_uint), ("scopeId", ctypes.c_uint), ("timestamp", ctypes.c_longlong),
                ("latencyUsec", ctypes.c_longlong), ("valueType", ctypes.c_int), ("nvmlReturn", ctypes.c_int),
                ("value", ctypes.c_ulonglong)]


def main():
    out, gpu = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0
    period = float(sys.argv[3]) if len(sys.argv) > 3 else 0.01
    nvml = ctypes.CDLL("libnvidia-ml.so.1")
    if nvml.nvmlInit_v2() != 0:
        sys.exit("power_sampler: nvmlInit failed")
    dev = ctypes.c_void_p()
    if nvml.nvmlDeviceGetHandleByIndex_v2(gpu, ctypes.byref(dev)) != 0:
        sys.exit("power_sampler: no GPU %d" % gpu)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    with open(out, "a") as f:
        nxt = time.time()
        while not stop:
            fv = Field(fieldId=FI_POWER_INSTANT)
            if nvml.nvmlDeviceGetFieldValues(dev, 1, ctypes.byref(fv)) == 0 and fv.nvmlReturn == 0:
                # valueType 1 is unsigned int: the low 32 bits (little-endian), milliwatts
                f.write("%.6f %.3f\n" % (time.time(), (fv.value & 0xffffffff) / 1000.0))
            nxt += period
            time.sleep(max(0.0, nxt - time.time()))
        f.flush()


if __name__ == "__main__":
    main()
