"""The OpenBLAS kernel PyTorch's products run on, for bench/compare and bench/compare-model.

OpenBLAS picks its kernel from the CPU's model number. A CPU newer than the OpenBLAS build (Debian
bookworm's 0.3.21 takes a 2023 Xeon for a "Prescott") gets a kernel without AVX: PyTorch's products
then run at a third of their speed, and a comparison with it means nothing. `pytorch_env` gives
PyTorch the kernel of the instructions the CPU has (OPENBLAS_CORETYPE=SkylakeX with AVX-512,
Haswell with AVX2) when OpenBLAS chose one older than AVX; otherwise OpenBLAS's own choice (the
caller's OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are left out: they pin an older kernel).
"""
import functools
import os
import re
import subprocess

# OpenBLAS's kernels for CPUs without AVX: chosen for a CPU it does not know.
PRE_AVX = {"Katmai", "Coppermine", "Northwood", "Prescott", "Banias", "Core2", "Penryn", "Dunnington", "Nehalem",
           "Atom", "Opteron", "Opteron_SSE3", "Barcelona", "Bobcat", "Nano"}


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            return set(next(line.split(":", 1)[1].split() for line in f if line.startswith("flags")))
    except (OSError, StopIteration):
        return set()


@functools.lru_cache(maxsize=None)
def better_kernel(python):
    """OPENBLAS_CORETYPE for PyTorch's runs and a note saying why, or (None, "") to keep OpenBLAS's
    own choice. Asked of OpenBLAS once per Python (it loads with PyTorch: a second or two)."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    probe = subprocess.run([python, "-c", "import torch; torch.ones(2, 2) @ torch.ones(2, 2)"], capture_output=True,
                           text=True, env=dict(env, OPENBLAS_VERBOSE="2"))
    found = re.search(r"Core: (\w+)", probe.stdout + probe.stderr)
    chosen = found.group(1) if found else None
    if chosen not in PRE_AVX:
        return None, ""
    flags = cpu_flags()
    if {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= flags:
        better = "SkylakeX"
    elif {"avx2", "fma"} <= flags:
        better = "Haswell"
    else:
        return None, ""
    return better, f"OpenBLAS took this CPU for a {chosen} (no AVX): PyTorch runs with OPENBLAS_CORETYPE={better}"


def pytorch_env(python, threads):
    """The environment of a PyTorch run on `threads` threads, and a note on its kernel ("" if OpenBLAS's own)."""
    env = dict(os.environ)
    env.pop("OPENBLAS_CORETYPE", None)
    env.pop("OPENBLAS_L2_SIZE", None)
    env["OMP_NUM_THREADS"] = env["OPENBLAS_NUM_THREADS"] = str(threads)
    kernel, note = better_kernel(python)
    if kernel:
        env["OPENBLAS_CORETYPE"] = kernel
    return env, note
