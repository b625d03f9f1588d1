#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Count the results of `make check` and print the summary line.

Inputs: the host checks (TSV: name, status, detail), the lab console log
(KUnit TAP, parsed by the base tree's tools/testing/kunit/kunit.py, and the
kernel log scanned for WARNING/BUG/Oops/KASAN/lockdep reports) and the
kselftest runner's output.  A kselftest program with TAP subtests is counted
per subtest.  Tests listed in scripts/base-known-failures that fail are
reported as base-known, counted apart.  A kselftest that check-guest.sh ran
a second time (upstream DAMON selftests only) is counted by its rerun and
printed as FLAKY when the two runs disagree.  Last line: "N passed, N failed, N skipped".
Exit status 1 on any failure.
"""
import argparse
import json
import os
import re
import subprocess
import sys

DMESG_BAD = re.compile(r"WARNING:|BUG:|Oops|KASAN:|UBSAN:|general protection fault|"
                       r"possible circular locking|possible recursive locking|"
                       r"inconsistent lock state|lockdep is turned off|"
                       r"DEBUG_LOCKS_WARN_ON|Kernel panic|"
                       r"INFO: task .* blocked|soft lockup|hard LOCKUP|"
                       r"Out of memory|oom-kill")
# boot banners of the debug kernel that match the above and report nothing
DMESG_BANNER = re.compile(r"RCU lockdep checking is enabled")

results = []  # (name, status, detail)


def add(name, status, detail=""):
    results.append((name, status, detail))


def kunit(console, json_out, src):
    tool = os.path.join(src, "tools/testing/kunit/kunit.py")
    with open(console, errors="replace") as f:
        r = subprocess.run([sys.executable, tool, "parse", "--json=" + json_out],
                           stdin=f, capture_output=True, text=True)
    try:
        data = json.load(open(json_out))
    except (OSError, ValueError):
        add("kunit/parse", "fail", "kunit.py parse gave no JSON: " + r.stderr[-300:])
        return

    def walk(group, prefix):
        for t in group.get("test_cases", []):
            st = {"PASS": "pass", "SKIP": "skip"}.get(t["status"], "fail")
            add(f"{prefix}{group['name']}.{t['name']}", st)
        for g in group.get("sub_groups", []):
            walk(g, prefix + group["name"] + "/" if group.get("name") else prefix)

    n0 = len(results)
    walk(data, "kunit/")
    if len(results) == n0:
        add("kunit/any-tests-ran", "fail", "no KUnit results in the console log")


def kselftests(path):
    top = re.compile(r"^(not )?ok \d+ selftests: (\S+): (\S+)(.*)$")
    sub = re.compile(r"^# (not )?ok \d+ (.*?)(?:\s+#\s*(SKIP|TODO)\b(.*))?$")
    # program -> (its results, its last output lines); a rerun replaces it
    programs = {}
    nested, output = [], []
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        m = sub.match(line)
        if m:
            name = m.group(2).strip()
            st = "skip" if m.group(3) == "SKIP" else ("fail" if m.group(1) else "pass")
            nested.append((name, st, (m.group(4) or "").strip()))
            continue
        m = top.match(line)
        if not m:
            if line.startswith("# ") and not re.match(
                    r"# (overriding timeout|selftests: |check-guest: )", line):
                output.append(line[2:])
            continue
        coll, test, rest = m.group(2), m.group(3), m.group(4)
        failed = bool(m.group(1))
        base = f"{coll}/{test}"
        tail = " | ".join(output[-4:])
        if base in programs:
            first_tail = programs[base][1]
            tail = tail or first_tail
            if not failed:
                print(f"FLAKY      {base}: failed, passed on rerun (first run: {first_tail})")
        res = []
        if nested:
            res = [(f"{base}/{name}", st, det) for name, st, det in nested]
            if failed and not any(st == "fail" for _, st, _ in nested):
                res.append((base, "fail", "program failed after its subtests" + rest))
        elif "# SKIP" in rest:
            res = [(base, "skip", rest.split("# SKIP", 1)[1].strip())]
        else:
            res = [(base, "fail" if failed else "pass",
                    rest.strip(" #") + (f" [{tail}]" if failed and tail else ""))]
        programs[base] = (res, tail)
        nested, output = [], []
    for res, _ in programs.values():
        for r in res:
            add(*r)


def lab_cause(console):
    """The guest command's last line of output, which usually says why it
    failed (e.g. "bash: ...: No such file or directory")."""
    if not console or not os.path.exists(console):
        return "; no console log"
    last = ""
    for l in open(console, errors="replace"):
        l = l.strip()
        if l.startswith("lab: command exited"):
            break
        if l:
            last = l
    return f"; last output: {last[:200]}" if last else ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", required=True)
    ap.add_argument("--lab-rc", type=int)
    ap.add_argument("--console")
    ap.add_argument("--kselftest")
    ap.add_argument("--kunit-json")
    ap.add_argument("--base-known")
    ap.add_argument("--prefix", default="",
                    help="put before the names of the lab's results (a second lab boot)")
    ap.add_argument("--tsv-out", help="also write every result there, as --host reads them")
    a = ap.parse_args()
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../build/linux")

    for line in open(a.host):
        name, st, det = (line.rstrip("\n").split("\t") + ["", ""])[:3]
        add(name, st, det)
    nr_host = len(results)
    if a.console:
        if a.lab_rc != 0:
            add("lab/boot-and-run", "fail",
                {124: "host-side timeout"}.get(a.lab_rc, f"exit {a.lab_rc}")
                + lab_cause(a.console))
        else:
            add("lab/boot-and-run", "pass")
        if os.path.exists(a.console):
            kunit(a.console, a.kunit_json, src)
            # "traps:" lines report user-space faults, not kernel ones
            bad = [l.strip() for l in open(a.console, errors="replace")
                   if DMESG_BAD.search(l) and " traps: " not in l
                   and not DMESG_BANNER.search(l)]
            add("lab/dmesg-clean", "fail" if bad else "pass", "; ".join(bad[:5]))
        if a.kselftest and os.path.exists(a.kselftest):
            kselftests(a.kselftest)
        elif a.kselftest:
            add("lab/kselftests-ran", "fail", "no kselftest output")
    results[nr_host:] = [(a.prefix + n, st, det) for n, st, det in results[nr_host:]]
    if a.tsv_out:
        with open(a.tsv_out, "w") as f:
            for name, st, det in results:
                f.write(f"{name}\t{st}\t{det}\n")

    known = {}
    if a.base_known and os.path.exists(a.base_known):
        for line in open(a.base_known):
            if line.strip() and not line.startswith("#"):
                k, _, why = line.partition(":")
                known[k.strip()] = why.strip()

    counts = {"pass": 0, "fail": 0, "skip": 0, "base-known": 0}
    for name, st, det in results:
        if st == "fail" and name in known:
            st, det = "base-known", known[name]
        counts[st] += 1
        if st != "pass":
            print(f"{st.upper():10} {name}" + (f": {det}" if det else ""))
    if counts["base-known"]:
        print(f"base-known failures (fail on the unpatched base too): {counts['base-known']}")
    print(f"{counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped")
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
