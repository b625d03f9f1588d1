#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Median table of bench/scenarios/numa-hint-seed.sh runs.

  bench/numa-hint-medians.py OUT.LOG...

Each OUT.LOG is the output of one boot (one run of every configuration it
names, "bench: === CONFIG ===" lines and "RESULT CONFIG_key=value" lines).
Runs are grouped by workload (the "bench: WORKLOAD: ..." line) and by the
scenario's settings that change the regime (rate limit, scan period max).
Per run, each configuration's promotions and model cost per episode are
taken against the time configuration of the same run (runs of a fixed
duration, such as twoproc's, do different numbers of episodes); the table gives, per configuration,
the median over the runs that have it, and the number of runs.
"""
import re
import statistics
import sys


def parse(path):
    """One run: its group name and {config: {key: value}}."""
    cfgs, res, group, knobs = [], {}, None, []
    for line in open(path, errors="replace"):
        line = line.strip()
        m = re.match(r"bench: === (\S+) ===$", line)
        if m:
            cfgs.append(m.group(1))
            continue
        m = re.match(r"bench: (uniform|twoproc|hotchunk): \d+ MiB", line)
        if m and group is None:
            group = m.group(1)
            continue
        m = re.match(r"bench: \S*(promote_rate_limit_MBps|scan_period_max_ms) = (\d+)$", line)
        if m:
            knobs.append("%s=%s" % (m.group(1).split("_")[-2], m.group(2)))
            continue
        m = re.match(r"RESULT (\S+?)=(\S+)$", line)
        if not m:
            continue
        key, val = m.groups()
        # the longest configuration name that prefixes the key
        for c in sorted(cfgs, key=len, reverse=True):
            if key.startswith(c + "_"):
                res.setdefault(c, {})[key[len(c) + 1:]] = val
                break
    return "%s %s" % (group, " ".join(sorted(knobs))), res


def num(r, k):
    try:
        return float(r[k])
    except (KeyError, ValueError):
        return None


def per_ep(r):
    """Modelled cost per episode of the large process."""
    ep = num(r, "episodes")
    return num(r, "model_s") / ep if ep else num(r, "model_s")


def main(paths):
    groups = {}
    for p in paths:
        g, res = parse(p)
        if "time" not in res:
            print("skipped %s: no time configuration" % p, file=sys.stderr)
            continue
        groups.setdefault(g, []).append(res)
    cols = ("runs", "x_time", "cost", "dram%", "final%", "wrong_pu", "wrong_pg",
            "small%")
    for g, runs in sorted(groups.items()):
        print("%s (%d runs; medians)" % (g, len(runs)))
        print("  %-20s" % "config" + "".join("%10s" % c for c in cols))
        order = []
        for res in runs:
            order += [c for c in res if c not in order]
        for c in order:
            v = {k: [] for k in cols[1:]}
            n = 0
            for res in runs:
                r, t = res.get(c), res["time"]
                if not r or num(r, "model_s") is None:
                    continue
                n += 1
                # uniform/twoproc: ep_promoted; hotchunk: hot pages promoted
                pk = "ep_promoted_pages"
                if num(t, pk):
                    v["x_time"].append(num(r, pk) / num(t, pk))
                v["cost"].append(per_ep(r) / per_ep(t))
                for k, rk in (("dram%", "dram_share_pct"),
                              ("final%", "hot_final_pct"),
                              ("wrong_pu", "wrong_per_useful"),
                              ("wrong_pg", "wrong_promoted_pages"),
                              ("small%", "small_hot_final_pct")):
                    if num(r, rk) is not None:
                        v[k].append(num(r, rk))
            row = "  %-20s%10d" % (c, n)
            for k in cols[1:]:
                row += "%10s" % ("%.3f" % statistics.median(v[k]) if v[k] else "-")
            print(row)
        print()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
