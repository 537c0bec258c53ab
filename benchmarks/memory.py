"""The memory guard's estimate against the measured peak (defrag/_memory.py).

Usage (from the repository root, defrag built in place or installed; Linux):

    python benchmarks/memory.py [--cases synthetic1,cls28,...] [--cache DIR]

Each case runs in a child process: the benchmark case's data and forest
(benchmarks/run.py's load_data), a small warm-up fit (imports, lazy modules), then
the peak resident memory is reset (/proc/self/clear_refs) and the measured fit runs.
Printed: the estimate DefragModel.fit checked against the limit, the measured
growth of the peak over the resident memory before the fit, and their ratio.
The acceptance asks the estimate to be within 2x of the measured peak.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# name: (benchmark data, DefragModel parameters)
CASES = {
    "synthetic1": ("synthetic1", {}),
    "cls28": ("cls28", {}),
    "cls50": ("cls50", {}),
    "cls28-paper": ("cls28", {"max_splits": None, "rule_list": False, "n_restarts": 2}),
    "cls28-em-k200": ("cls28", {"method": "em", "max_rules": 200, "n_restarts": 2, "max_iter": 3,
                                "eps_schedule": ()}),
    "cls50-em-k500-sub": ("cls50", {"method": "em", "max_rules": 500, "n_restarts": 2, "max_iter": 2,
                                    "eps_schedule": (), "subsample": 2000, "rule_list": False}),
}


def status_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(field)


def child(name, cache):
    import gc

    import defrag.defrag_model as dm
    from defrag import DefragModel
    from run import load_data

    data, params = CASES[name]
    Xtr, ytr, _, _, forest = load_data(data, cache)
    DefragModel(forest, n_restarts=1, max_iter=2, random_state=0).fit(Xtr[:200])  # warm-up
    seen = {}
    original = dm.check_memory

    def recording(estimate, what, knobs, parts=None):
        seen["estimate"], seen["parts"] = estimate, parts
        return original(estimate, what, knobs, parts)

    dm.check_memory = recording
    gc.collect()
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets the peak (VmHWM) to the current resident size
    before = status_kb("VmRSS")
    t = time.perf_counter()
    model = DefragModel(forest, random_state=0, **params).fit(Xtr)
    seconds = time.perf_counter() - t
    peak = status_kb("VmHWM")
    return {"case": name, "N": len(Xtr), "L": len(model.splits_), "K": int(params.get("max_rules", 10)),
            "estimate_mb": seen["estimate"] / 2**20, "measured_mb": (peak - before) / 1024,
            "seconds": seconds, "parts_mb": {k: v / 2**20 for k, v in seen["parts"].items()}}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--cache", default=os.path.join(HERE, ".cache"))
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.cache)))
        return
    print(f"{'case':<20} {'N':>6} {'L':>6} {'K':>5} {'estimate MB':>12} {'measured MB':>12} {'ratio':>6} {'s':>6}")
    for name in args.cases.split(","):
        out = subprocess.run([sys.executable, __file__, "--child", name, "--cache", args.cache],
                             check=True, capture_output=True, text=True).stdout
        r = json.loads(out.strip().splitlines()[-1])
        ratio = r["estimate_mb"] / max(r["measured_mb"], 1e-9)
        print(f"{r['case']:<20} {r['N']:>6} {r['L']:>6} {r['K']:>5} {r['estimate_mb']:>12.1f} "
              f"{r['measured_mb']:>12.1f} {ratio:>6.2f} {r['seconds']:>6.1f}", flush=True)


if __name__ == "__main__":
    main()
