#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Merge the series' MAINTAINERS entry (MAINTAINERS.snippet) into MAINTAINERS.

    scripts/maintainers-merge.py MAINTAINERS SNIPPET [--tree DIR]
                                 [--maintainer "NAME <EMAIL>"]

Rewrites MAINTAINERS in place.  The entry goes in before the first entry
whose title sorts after its own; an entry with the same title already there
is replaced, so running this again is harmless.

With --tree DIR (the kernel tree MAINTAINERS belongs to), only the F: and X:
lines whose pattern matches something in DIR are kept, and without any F:
line left the entry is removed: scripts/export-series.sh uses this so that
every commit of the exported series names only files that exist at that
commit.  With --maintainer, the entry gets an M: line for NAME <EMAIL>
after its title (the snippets carry none: the person who exports the
series maintains what it adds).  Used by scripts/assemble.sh (whole entry)
and export-series.sh (with the exporter's git identity).
"""
import glob
import os
import sys


def is_field(l):
    """A line of an entry: "X:<tab>..." with X an upper-case letter."""
    return len(l) > 2 and l[0].isupper() and l[1] == ":" and l[2] == "\t"


def is_title(lines, i):
    """An entry title: an upper-case line after a blank line, not itself a
    field, followed by a field ("S:<tab>..." followed by "F:<tab>..." is
    not a title)."""
    l = lines[i]
    n = lines[i + 1] if i + 1 < len(lines) else ""
    return i > 0 and not lines[i - 1].strip() and bool(l.strip()) \
        and l[0].isupper() and not is_field(l) and is_field(n)


def pattern_exists(tree, pat):
    if pat.endswith("/"):
        return os.path.isdir(os.path.join(tree, pat))
    return bool(glob.glob(os.path.join(tree, pat)))


def main(argv):
    args = argv[1:]
    tree = maintainer = None
    if "--tree" in args:
        i = args.index("--tree")
        tree = args[i + 1]
        del args[i:i + 2]
    if "--maintainer" in args:
        i = args.index("--maintainer")
        maintainer = args[i + 1]
        del args[i:i + 2]
    if len(args) != 2:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    path, snippet = args
    entry = [l for l in open(snippet).read().strip("\n").splitlines()]
    title = entry[0]
    if maintainer:
        entry.insert(1, "M:\t" + maintainer)
    if tree is not None:
        entry = [l for l in entry
                 if not (l[:3] in ("F:\t", "X:\t")
                         and not pattern_exists(tree, l[3:].strip()))]
        if not any(l.startswith("F:\t") for l in entry):
            entry = []
    block = "".join(l + "\n" for l in entry) + "\n" if entry else ""

    lines = open(path).read().splitlines(keepends=True)
    # entries start after the "Maintainers List" header
    start = next(i for i, l in enumerate(lines)
                 if l.startswith("Maintainers List"))
    # drop an entry with our title (up to and including its blank line)
    for i in range(start, len(lines)):
        if lines[i].rstrip("\n") == title and is_title(lines, i):
            j = i
            while j < len(lines) and lines[j].strip():
                j += 1
            del lines[i:j + 1]
            break
    if block:
        for i in range(start, len(lines)):
            if is_title(lines, i) and lines[i].strip() > title:
                lines.insert(i, block)
                break
        else:
            sys.exit("maintainers-merge: no entry sorts after %r" % title)
    open(path, "w").writelines(lines)


if __name__ == "__main__":
    main(sys.argv)
