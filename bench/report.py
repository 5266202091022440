#!/usr/bin/env python3
"""bench/report.py OUT: the markdown table of scripts/bench from OUT/samples.tsv.

One row per figure: the median of its samples for each target, then rs
against each stock release as a factor where >1 means rs is better (rate
rs/stock, latency and memory stock/rs), then the target and whether it is met.
A figure a target failed to produce shows the recorded reason instead.
"""
import csv
import statistics
import sys
from pathlib import Path

TARGETS = [("stock22", "stock 22.05"), ("stock24", "stock 24.11"), ("rs", "rs")]


def levels(meta, key):
    return [x for x in meta.get(key, "").split() if x]


def rows(meta):
    """(phase, metric key, error keys, label, unit, higher is better, goal factor, goal text)."""
    par = meta.get("PAR", "8")
    big = meta.get("BIG_NODES", "10000")
    lv = levels(meta, "LEVELS")
    top = lv[-1] if lv else "0"
    st = meta.get("STORM_AT", "0")
    match = (1.0, "≥1× (match)")
    r = [
        ("main", "ping_ms", ["ping_failed"], "scontrol ping latency (idle), median", "ms", False, *match),
        ("main", "sbatch_seq_jobs_per_s", ["sbatch_seq_error"], "sbatch rate, 1 submitter", "jobs/s", True, *match),
        ("main", f"sbatch_par{par}_jobs_per_s", [f"sbatch_par{par}_error"], f"sbatch rate, {par} parallel submitters", "jobs/s", True, *match),
    ]
    for lvl in lv:
        r.append(("queue", f"squeue_ms@{lvl}", [f"squeue_error@{lvl}", f"load_submit@fill{lvl}_error"],
                  f"squeue latency, {int(lvl):,} pending, median", "ms", False, *match))
    r.append(("nodes", f"sinfo_ms@nodes{big}", [f"sinfo_error@nodes{big}"], f"sinfo latency, {int(big):,} nodes, median", "ms", False, *match))
    r.append(("main", "e2e_jobs_per_s", ["e2e_error"], f"end-to-end, {int(meta.get('E2E_N', '2000')):,} trivial jobs", "jobs/s", True, 3.0, "≥3×"))
    r.append(("queue", f"load_submit@fill{top}_rps", [f"load_submit@fill{top}_error"],
              f"submit RPCs/s (slurm-load, filling to {int(top):,})", "RPC/s", True, None, ""))
    for lvl in levels(meta, "JOBINFO_AT"):
        goal = (10.0, "≥10×") if lvl == top else (None, "")
        r.append(("queue", f"load_jobinfo@{lvl}_rps", [f"load_jobinfo@{lvl}_error"], f"job-info RPCs/s at {int(lvl):,} jobs", "RPC/s", True, *goal))
    r.append(("nodes", f"load_nodeinfo@{big}_rps", [f"load_nodeinfo@{big}_error"], f"node-info RPCs/s at {int(big):,} nodes", "RPC/s", True, None, ""))
    r.append(("queue", f"load_storm@{st}_ping_p99_ms", [f"load_storm@{st}_ping_error", f"load_storm@{st}_error"],
              f"ping p99 while {meta.get('STORM_CONNS', '64')} clients storm job info ({int(st):,} jobs)", "ms", False, None, "rs < 10 ms"))
    r.append(("queue", f"load_storm@{st}_storm_rps", [f"load_storm@{st}_storm_error", f"load_storm@{st}_error"],
              "job-info RPCs/s during that storm", "RPC/s", True, None, ""))
    r.append(("main", "rss_ctld_MiB@idle", ["rss_ctld_error@idle"], "controller RSS, idle", "MiB", False, None, ""))
    for lvl in lv:
        goal = (2.0, "≤½ (≥2×)") if lvl == top else (None, "")
        r.append(("queue", f"rss_ctld_MiB@pending{lvl}", [f"rss_ctld_error@pending{lvl}"], f"controller RSS, {int(lvl):,} pending", "MiB", False, *goal))
    settle = meta.get("SETTLE_S", "10")
    r.append(("queue", f"rss_ctld_MiB@pending{top}_settled", [f"rss_ctld_error@pending{top}_settled"],
              f"controller RSS, {int(top):,} pending, {settle} s after the last squeue", "MiB", False, 2.0, "≤½ (≥2×)"))
    r.append(("main", "rss_ctld_MiB@after_e2e", ["rss_ctld_error@after_e2e"], "controller RSS after the end-to-end run", "MiB", False, None, ""))
    return r


def fmt(x):
    if x >= 100:
        return f"{x:,.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def main():
    out = Path(sys.argv[1])
    meta = {}
    for line in (out / "meta.txt").read_text().splitlines():
        if line.startswith("command: "):
            meta["command"] = line[len("command: "):]
        elif "=" in line and ":" not in line.split("=", 1)[0]:
            k, v = line.split("=", 1)
            meta[k] = v
    vals, errs, loads = {}, {}, {}
    with open(out / "samples.tsv") as f:
        for s in csv.DictReader(f, delimiter="\t"):
            t, m, u, v = s["target"], s["metric"], s["unit"], s["value"]
            loads.setdefault((t, s["phase"]), []).append(float(s["load1"] or 0))
            if u == "text":
                # an error for metric family m (e.g. sbatch_seq_error, load_jobinfo@10000_error)
                errs.setdefault(t, []).append((m, s["phase"], v))
                continue
            try:
                vals.setdefault((t, m), []).append(float(v))
            except ValueError:
                pass

    def value(t, key):
        v = vals.get((t, key))
        return statistics.median(v) if v else None

    def failure(t, phase, keys):
        for m, p, why in errs.get(t, []):
            if m in keys or (m == "up_error" and p == phase):
                return why
        return None

    present = [t for t, _ in TARGETS if any(k[0] == t for k in vals) or t in errs]
    head = ["metric", "unit"] + [lbl for t, lbl in TARGETS if t in present]
    stocks = [t for t in ("stock22", "stock24") if t in present]
    if "rs" in present:
        head += [f"rs vs {dict(TARGETS)[s].split()[1]}" for s in stocks] + ["goal", "met"]
    print(f"<!-- {meta.get('command', '')} -->")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for phase, key, ekeys, label, unit, higher, goal, goal_txt in rows(meta):
        cells = [label, unit]
        got = {}
        wrong_depth = set()
        for t, _ in TARGETS:
            if t not in present:
                continue
            v = value(t, key)
            got[t] = v
            if v is None:
                why = failure(t, phase, ekeys)
                cells.append(f"failed: {why}" if why else "—")
            else:
                cell = fmt(v)
                # a latency over a queue that is not what it should be says so
                if key.startswith(("squeue_ms@", "sinfo_ms@")):
                    n = value(t, key.replace("_ms@", "_lines@"))
                    want = key.split("@")[1].removeprefix("nodes")
                    if n is not None and key.startswith("squeue") and int(n) != int(want):
                        cell += f" ({int(n):,} listed)"
                        wrong_depth.add(t)
                cells.append(cell)
        if "rs" in present:
            factors = []
            for s in stocks:
                a, b = got.get("rs"), got.get(s)
                if a and b:
                    f = a / b if higher else b / a
                    factors.append(f)
                    cells.append(f"{f:.2f}×")
                else:
                    factors.append(None)
                    cells.append("—")
            cells.append(goal_txt)
            met = ""
            if key.endswith("ping_p99_ms"):
                met = "no (no figure)" if got.get("rs") is None else ("yes" if got["rs"] < 10 else "no")
            elif goal and factors and all(f is not None for f in factors):
                met = "yes" if min(factors) >= goal else "no"
            elif goal:
                met = "no (no figure)" if got.get("rs") is None else "?"
            if wrong_depth and met:
                met = "not comparable (queue depth)"
            cells.append(met)
        print("| " + " | ".join(cells) + " |")
    print()
    print("Factors: >1 means rs is better (rates rs/stock; latency and memory stock/rs). "
          "Medians of the samples; 1-minute load average of the 2-CPU machine while each phase ran:")
    for (t, p), ls in sorted(loads.items()):
        print(f"- {t} {p}: {min(ls):.2f}–{max(ls):.2f}")
    failures = [(t, m, why) for t, es in errs.items() for m, _, why in es]
    if failures:
        print()
        print("Failures and errors recorded:")
        for t, m, why in failures:
            print(f"- {t}: {m}: {why}")


if __name__ == "__main__":
    main()
