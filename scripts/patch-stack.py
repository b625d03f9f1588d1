#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Edit the series as git commits, then write it back to patches/.

  scripts/patch-stack.py init [FILE...]
      build/stack: a git repo whose tag "base" holds the pristine version of
      every upstream file the patches touch (and of each FILE, to be edited
      next), then one commit per entry of patches/new-files, in order: the
      patch applied and the entry's new files added at their repo paths
      (MAINTAINERS.snippet as it is).
  scripts/patch-stack.py sync
      take into build/stack the repo's new files edited since init: each
      goes into the commit that adds it (a file that a later commit
      changes is left out, and named: edit it in build/stack).
  scripts/patch-stack.py export
      write build/stack back: per commit, the files it adds are new files of
      the repo, and the rest of its diff (hunks on upstream files, or on new
      files that an earlier commit added) is its patch.  Rewrites
      patches/*.patch, patches/series and the entries of patches/new-files,
      copies the new files, then runs scripts/assemble.sh.

Edit in between with git: `git -C build/stack rebase -i base` to change,
reorder, split or drop commits.  A commit message is the patch's header:
subject, blank line, changelog, and optionally a line "---" followed by
notes for reviewers, which stay below the "---" of the patch.  A commit
that only adds files is an entry without a patch (its message goes into
patches/new-files).  A patch keeps its file name while its subject stays;
a new or renamed one is named from its subject, numbered by position.
The series markers of patches/series ("#= NAME ...", see that file) stay
where they were, before the patch that followed them.
"""
import os
import re
import shutil
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(REPO, 'build', 'linux')
STACK = os.path.join(REPO, 'build', 'stack')
PATCHES = os.path.join(REPO, 'patches')
ENV = dict(os.environ, GIT_AUTHOR_NAME='stack', GIT_AUTHOR_EMAIL='stack@localhost',
           GIT_COMMITTER_NAME='stack', GIT_COMMITTER_EMAIL='stack@localhost',
           GIT_AUTHOR_DATE='2000-01-01T00:00:00Z',
           GIT_COMMITTER_DATE='2000-01-01T00:00:00Z')


def die(msg):
    sys.stderr.write('patch-stack: %s\n' % msg)
    sys.exit(1)


def git(*args, cwd=STACK, check=True, inp=None):
    r = subprocess.run(['git', '-c', 'core.abbrev=9', '-c', 'gc.auto=0'] + list(args),
                       cwd=cwd, env=ENV, input=inp, capture_output=True, text=True)
    if check and r.returncode:
        die('git %s: %s' % (' '.join(args), r.stderr.strip()))
    return r.stdout


def read_new_files():
    """patches/new-files: (head comment lines, [(name, [files], [msg lines])])."""
    head, entries = [], []
    for line in open(os.path.join(PATCHES, 'new-files')):
        line = line.rstrip('\n')
        if not entries and (line.startswith('#') or not line.strip()):
            head.append(line)
        elif line.startswith('#') or not line.strip():
            continue
        elif line.startswith('|'):
            m = line[1:]
            entries[-1][2].append(m[1:] if m.startswith(' ') else m)
        elif line[0].isspace():
            entries[-1][1].extend(line.split())
        else:
            name, _, files = line.partition(':')
            entries.append((name, files.split(), []))
    while head and not head[-1].strip():
        head.pop()
    return head, entries


def read_series():
    """patches/series: (patch names, {patch name: marker lines before it})."""
    names, markers, pending = [], {}, []
    for line in open(os.path.join(PATCHES, 'series')):
        line = line.rstrip('\n')
        if line.startswith('#=') or (line.startswith('#') and names):
            pending.append(line)
        elif line.startswith('#') or not line.strip():
            continue
        else:
            if pending:
                markers[line] = pending
                pending = []
            names.append(line)
    return names, markers


def patch_header(path):
    """Subject, changelog and notes of a patch file, as a commit message."""
    lines = open(path).read().split('\n')
    subject = re.sub(r'^Subject: \[PATCH\] ', '', lines[0])
    sep = lines.index('---')
    stat = next(i for i in range(sep + 1, len(lines))
                if re.match(r'^ \S+\s+\|\s+\d+', lines[i]))
    notes = '\n'.join(lines[sep + 1:stat]).strip('\n')
    message = '\n'.join([subject] + lines[1:sep]).rstrip('\n') + '\n'
    if notes:
        message += '---\n' + notes + '\n'
    return message


def patch_files(path):
    return re.findall(r'^\+\+\+ b/(\S+)', open(path).read(), re.M)


def init(extra):
    if not os.path.isdir(os.path.join(SRC, '.git')):
        die('no build/linux: run make tree first')
    _, entries = read_new_files()
    series, _ = read_series()
    if [e[0] for e in entries if e[0].endswith('.patch')] != series:
        die('the .patch entries of patches/new-files are not patches/series, in order')
    shutil.rmtree(STACK, ignore_errors=True)
    os.makedirs(STACK)
    git('init', '-q')
    news = {f for e in entries for f in e[1]}
    upstream = set(extra)
    for name in series:
        upstream.update(f for f in patch_files(os.path.join(PATCHES, name)) if f not in news)
    for f in sorted(upstream) + ['.gitattributes']:
        r = subprocess.run(['git', 'show', 'base:' + f], cwd=SRC, capture_output=True)
        if r.returncode:
            continue
        os.makedirs(os.path.dirname(os.path.join(STACK, f)) or STACK, exist_ok=True)
        open(os.path.join(STACK, f), 'wb').write(r.stdout)
    git('add', '-A')
    git('commit', '-q', '-m', 'base: the upstream files the series touches')
    git('tag', 'base')
    for name, files, msg in entries:
        for f in files:
            dst = os.path.join(STACK, f)
            os.makedirs(os.path.dirname(dst) or STACK, exist_ok=True)
            shutil.copy2(os.path.join(REPO, f), dst)
        if name.endswith('.patch'):
            p = os.path.join(PATCHES, name)
            r = subprocess.run(['patch', '-p1', '--fuzz=0', '--no-backup-if-mismatch',
                                '-s', '-f', '-d', STACK], stdin=open(p),
                               capture_output=True, text=True)
            if r.returncode:
                die('patches/%s does not apply:\n%s' % (name, r.stdout + r.stderr))
            message = patch_header(p)
        else:
            message = '\n'.join(msg).rstrip('\n') + '\n'
        git('add', '-A')
        git('commit', '-q', '--cleanup=verbatim', '-F', '-', inp=message)
    # what the new files were at init: export refuses to overwrite edits
    # made in the repo since
    snap = STACK + '.snapshot'
    shutil.rmtree(snap, ignore_errors=True)
    for f in news:
        os.makedirs(os.path.dirname(os.path.join(snap, f)) or snap, exist_ok=True)
        shutil.copy2(os.path.join(REPO, f), os.path.join(snap, f))
    n = git('rev-list', '--count', 'base..HEAD').strip()
    print('patch-stack: build/stack holds %s commits on tag base' % n)


def slug(subject):
    s = re.sub(r'[^a-z0-9]+', '-', subject.lower()).strip('-')
    return s[:60]


def export():
    if not os.path.isdir(os.path.join(STACK, '.git')):
        die('no build/stack: run scripts/patch-stack.py init')
    if git('status', '--porcelain').strip():
        die('build/stack has uncommitted changes')
    head, old_entries = read_new_files()
    old_series, markers = read_series()
    old_by_subject = {}
    for name in old_series:
        old_by_subject[patch_header(os.path.join(PATCHES, name)).split('\n')[0]] = name
    old_nonpatch = {}
    for name, _, msg in old_entries:
        if not name.endswith('.patch') and msg:
            old_nonpatch[msg[0]] = name
    old_news = {f for e in old_entries for f in e[1]}
    commits = git('rev-list', '--reverse', 'base..HEAD').split()
    entries, patches, news, n = [], {}, [], 0
    for c in commits:
        message = git('log', '-1', '--format=%B', c).rstrip('\n')
        subject = message.split('\n')[0]
        added = git('diff', '--name-only', '--diff-filter=A', c + '~1', c).split()
        rest = [f for f in git('diff', '--name-only', c + '~1', c).split() if f not in added]
        news.extend((f, c) for f in added)
        if rest:
            n += 1
            old = old_by_subject.get(subject)
            name = '%04d-%s.patch' % (n, old[5:-6] if old else slug(subject))
            lines = message.split('\n')[1:]
            sep = lines.index('---') if '---' in lines else len(lines)
            body = '\n'.join(lines[:sep]).rstrip('\n')
            notes = '\n'.join(lines[sep + 1:])
            text = 'Subject: [PATCH] %s\n%s\n---\n' % (subject, body)
            if notes.strip():
                text += notes.strip('\n') + '\n\n'
            text += git('diff', '--stat=72', c + '~1', c, '--', *rest) + '\n'
            text += git('diff', c + '~1', c, '--', *rest)
            text += '-- \n2.39.5\n'
            patches[name] = (text, old)
            entries.append((name, added, None))
        else:
            name = old_nonpatch.get(subject) or slug(subject)
            entries.append((name, added, message.split('\n')))
    # patches
    for name in old_series:
        os.unlink(os.path.join(PATCHES, name))
    for name, (text, _) in patches.items():
        open(os.path.join(PATCHES, name), 'w').write(text)
    # series, with its head comment and the markers before the same patches
    series_head = []
    for line in open(os.path.join(PATCHES, 'series')):
        if not line.startswith('#') or line.startswith('#='):
            break
        series_head.append(line.rstrip('\n'))
    out = series_head[:]
    for name, (_, old) in patches.items():
        out.extend(markers.get(old, []))
        out.append(name)
    open(os.path.join(PATCHES, 'series'), 'w').write('\n'.join(out) + '\n')
    # new-files
    out = head[:]
    for name, files, msg in entries:
        out.append('')
        out.append(name + ':')
        out.extend('\t' + f for f in files)
        if msg is not None:
            out.extend(('| ' + l) if l else '|' for l in msg)
    open(os.path.join(PATCHES, 'new-files'), 'w').write('\n'.join(out) + '\n')
    # new files, unless edited in the repo since init
    snap = STACK + '.snapshot'
    for f, c in news:
        mine, before = os.path.join(REPO, f), os.path.join(snap, f)
        if (os.path.exists(mine) and os.path.exists(before) and
                open(mine).read() != open(before).read() and
                open(mine).read() != git('show', '%s:%s' % (c, f))):
            die('%s was edited in the repo after init: commit it in build/stack, '
                'or init again' % f)
    for f, c in news:
        dst = os.path.join(REPO, f)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        open(dst, 'w').write(git('show', '%s:%s' % (c, f)))
        # the repo now holds this version: later edits are measured from it
        os.makedirs(os.path.dirname(os.path.join(snap, f)), exist_ok=True)
        shutil.copy2(dst, os.path.join(snap, f))
    gone = sorted(old_news - {f for f, _ in news})
    for f in gone:
        if os.path.exists(os.path.join(REPO, f)):
            os.unlink(os.path.join(REPO, f))
    r = subprocess.run([os.path.join(REPO, 'scripts', 'assemble.sh')],
                       capture_output=True, text=True)
    sys.stdout.write(r.stdout.splitlines()[-1] + '\n' if r.stdout else '')
    if r.returncode:
        die('scripts/assemble.sh failed:\n' + r.stderr)
    print('patch-stack: wrote %d patches, %d entries%s' %
          (len(patches), len(entries),
           '; removed ' + ' '.join(gone) if gone else ''))


def sync():
    if git('status', '--porcelain').strip():
        die('build/stack has uncommitted changes')
    snap = STACK + '.snapshot'
    done = []
    for c in git('rev-list', '--reverse', 'base..HEAD').split():
        for f in git('diff', '--name-only', '--diff-filter=A', c + '~1', c).split():
            mine = os.path.join(REPO, f)
            if not os.path.exists(mine) or open(mine).read() == git('show', '%s:%s' % (c, f)):
                continue
            if git('log', '--format=%h', c + '..HEAD', '--', f).strip():
                print('patch-stack: not synced: %s changes after the commit that '
                      'adds it (edit it in build/stack)' % f)
                continue
            shutil.copy2(mine, os.path.join(STACK, f))
            git('add', f)
            git('commit', '-q', '--fixup', c)
            os.makedirs(os.path.dirname(os.path.join(snap, f)), exist_ok=True)
            shutil.copy2(mine, os.path.join(snap, f))
            done.append(f)
    if done:
        env = dict(ENV, GIT_SEQUENCE_EDITOR='true')
        r = subprocess.run(['git', 'rebase', '-q', '-i', '--autosquash', 'base'],
                           cwd=STACK, env=env, capture_output=True, text=True)
        if r.returncode:
            die('rebase --autosquash failed:\n' + r.stdout + r.stderr)
    print('patch-stack: synced %s' % (' '.join(done) if done else 'nothing'))


if __name__ == '__main__':
    if len(sys.argv) >= 2 and sys.argv[1] == 'init':
        init(sys.argv[2:])
    elif len(sys.argv) == 2 and sys.argv[1] == 'export':
        export()
    elif len(sys.argv) == 2 and sys.argv[1] == 'sync':
        sync()
    else:
        sys.stdout.write(__doc__)
        sys.exit(2)
