#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Mutation testing: do the suites catch realistic bugs planted in the code?

Each mutant in tests/mutation/mutants.txt (its header says the format) is
one bug a maintainer could write in kernel/*.c or lib/*.c: a wrong errno,
a dropped check, an off-by-one, a missing release or zeroing, a sync of the
wrong memory, a reverted fix.  For each mutant, one at a time:

  1. the repository without build/ and .git/ is copied to
     build/mutation/<id>/tree (never the working tree: it may be edited
     while this runs), and the mutant's substitutions are made there; a text
     that does not occur exactly once is a STALE mutant, a failure of the
     tool: the catalogue must follow the code;
  2. a kernel mutant: the module is built for one kernel (the mutant's
     "kernel:", else -k, else the newest bootable) as the top Makefile's
     build/kmod rule does
     (NPU_MEM_TEST_ENGINE=y), and the MAIN tree's test programs run against
     it (tests/vm/vm-run -m); a lib mutant: the copy builds its libaclmem
     and the test programs named, and they run from the copy (its
     run-suites.sh puts the copy's build/lib first in LD_LIBRARY_PATH, and
     the programs' RUNPATH names it too), with the main tree's module;
  3. each of its run lines: a guest (vm-run with that configuration) or,
     for "host", this machine, runs the programs through run-suites.sh.
     KILLED: a program failed, timed out or died, the kernel reported a
     problem, the module did not load or unload, or the guest died.
     SURVIVED: everything passed; the suites missed the bug.
     ERROR: the mutant did not build (a catalogue mistake), or a guest
     could not be judged (vm-run's host-side error, no boot).

Before the mutants, the unmutated tree goes through the same steps for every
distinct (configuration, kernel, program) once (the baseline): a program that
fails or skips without any mutant cannot kill one.  Mutants whose programs
did not pass the baseline are BASELINE-FAIL, not counted as killed.

  tests/mutation/run.py [options] [ID...]
    ID...           only these mutants (default: all)
    --baseline      only the baseline, no mutant
    --no-baseline   skip the baseline (e.g. re-running one mutant)
    --check         only check that every mutant applies (no build, no run)
    --list          list the mutants
    -t SECS         time limit per mutant, builds and guests (default 600)
    -k KVER         kernel for the guests (default: the newest bootable;
                    a mutant's "kernel:" chooses its own)
    --threshold P   exit 1 below P % killed (default 95)
    --keep          keep each mutant's copy of the tree (default: removed
                    once judged; logs stay in build/mutation/<id>/)

Results: build/mutation/results.txt, one line per mutant, then the score
line "mutation: K of N killed (P %); survivors: ...".  Known equivalents
(mutants the catalogue marks "equivalent:", with the reason) are not held
against the threshold.  Exit 1 below the threshold, or on any STALE, ERROR
or BASELINE-FAIL.  The environment passes through to the guests as vm-run
says (NPU_MEM_TEST_TIMEOUT: the limit per program, default 300 s here).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CATALOGUE = os.path.join(TOP, "tests/mutation/mutants.txt")
OUT = os.path.join(TOP, "build/mutation")
VMRUN = os.path.join(TOP, "tests/vm/vm-run")
SUITES = "tests/guest/run-suites.sh"

# vm-run's exit codes for a guest that could not be judged: a host-side
# error or a guest that never booted says nothing about the mutant.
VM_TOOL_ERRORS = {240: "vm-run host-side error", 241: "guest did not boot"}


# ---- the catalogue ----------------------------------------------------------

class Mutant:
    def __init__(self, mid, line):
        self.id, self.line = mid, line
        self.edits = []		# [file, from, to]
        self.runs = []		# (config, [programs])
        self.bug = self.equivalent = self.kernel = ""
        self.kver = None	# resolved from kernel: and -k

    @property
    def kind(self):
        kinds = {e[0].split("/")[0] for e in self.edits}
        return kinds.pop() if len(kinds) == 1 else "mixed"


def parse_catalogue(path):
    """Records start at "id:"; "from: <<" ... ">>" is verbatim text."""
    mutants, m, cur_file = [], None, None
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0

    def value(key, rest):
        nonlocal i
        if rest != "<<":
            return rest
        block = []
        while True:
            i += 1
            if i >= len(lines):
                sys.exit(f"{path}: unterminated {key}: << block")
            if lines[i] == ">>":
                return "\n".join(block)
            block.append(lines[i])

    while i < len(lines):
        line = lines[i]
        if not line.strip() or line.startswith("#"):
            i += 1
            continue
        key, sep, rest = line.partition(":")
        rest = rest[1:] if rest.startswith(" ") else rest
        if not sep:
            sys.exit(f"{path}:{i + 1}: not 'key: value': {line!r}")
        if key == "id":
            m = Mutant(rest.strip(), i + 1)
            mutants.append(m)
            cur_file = None
        elif m is None:
            sys.exit(f"{path}:{i + 1}: {key}: before the first id:")
        elif key == "file":
            cur_file = rest.strip()
        elif key == "from":
            if not cur_file:
                sys.exit(f"{path}:{i + 1}: from: without file:")
            m.edits.append([cur_file, value(key, rest), None])
        elif key == "to":
            if not m.edits or m.edits[-1][2] is not None:
                sys.exit(f"{path}:{i + 1}: to: without from:")
            m.edits[-1][2] = value(key, rest)
        elif key == "bug":
            m.bug = rest
        elif key == "run":
            words = rest.split()
            if len(words) < 2:
                sys.exit(f"{path}:{i + 1}: run: CONFIG PROGRAM...")
            m.runs.append((words[0], words[1:]))
        elif key == "equivalent":
            m.equivalent = rest
        elif key == "kernel":
            m.kernel = rest.strip()
        else:
            sys.exit(f"{path}:{i + 1}: unknown key {key}:")
        i += 1
    ids = set()
    for m in mutants:
        problem = None
        if m.id in ids or not re.fullmatch(r"[a-z0-9][a-z0-9-]*", m.id):
            problem = "duplicate or malformed id"
        elif not m.edits or any(e[2] is None for e in m.edits):
            problem = "needs file:, from: and to:"
        elif m.kind not in ("kernel", "lib"):
            problem = "edits must all be in kernel/ or all in lib/"
        elif not m.bug or not m.runs:
            problem = "needs bug: and run:"
        else:
            for config, progs in m.runs:
                for p in progs:
                    suite = p.split("/")[0]
                    if "/" not in p or suite not in ("kernel", "lib", "host"):
                        problem = f"program {p}: kernel/, lib/ or host/ NAME"
                    elif (config == "host") != (suite == "host"):
                        problem = f"{p}: host programs run on config host only"
                    elif suite == "host" and m.kind == "kernel":
                        problem = f"{p}: host programs never load the module"
        if problem:
            sys.exit(f"{path}:{m.line}: mutant {m.id}: {problem}")
        ids.add(m.id)
    return mutants


# ---- trees, builds and runs -------------------------------------------------

def clean_env():
    """The top Makefile exports TOP and VERSION: a copy's make must not see
    them (lib/ and tests/ would build into the main tree)."""
    env = dict(os.environ)
    for v in ("TOP", "VERSION", "MAKEFLAGS", "MFLAGS", "MAKELEVEL",
              "MAKEOVERRIDES"):
        env.pop(v, None)
    env.setdefault("NPU_MEM_TEST_TIMEOUT", "300")
    return env


def copy_tree(dest):
    if os.path.exists(dest):
        shutil.rmtree(dest)
    shutil.copytree(TOP, dest, symlinks=True,
                    ignore=lambda d, names: [n for n in names if d == TOP and n in ("build", ".git")])


def mutated(root, m):
    """(texts, None): each file the mutant edits, as the mutant makes it
    from root's copy; (None, why) when the mutant is stale.  Edits apply in
    order, so two edits of one file see each other."""
    texts = {}
    for path, old, new in m.edits:
        if path not in texts:
            try:
                with open(os.path.join(root, path), encoding="utf-8") as f:
                    texts[path] = f.read()
            except OSError as e:
                return None, f"{path}: {e.strerror}"
        n = texts[path].count(old)
        if n != 1:
            first = old.strip().split("\n")[0][:60]
            return None, f"{path}: text found {n} times, not once: {first!r}"
        texts[path] = texts[path].replace(old, new)
    return texts, None


def apply_edits(tree, m):
    """None, or why the mutant is stale."""
    texts, why = mutated(tree, m)
    if why:
        return why
    for path, text in texts.items():
        with open(os.path.join(tree, path), "w", encoding="utf-8") as f:
            f.write(text)
    return None


def sh(cmd, log, timeout, cwd=TOP):
    """Run cmd with output appended to log; returns (rc, timed_out)."""
    with open(log, "a") as lf:
        lf.write(f"$ {' '.join(cmd)}\n")
        lf.flush()
        try:
            rc = subprocess.run(cmd, stdout=lf, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, cwd=cwd,
                                env=clean_env(), timeout=max(timeout, 1)).returncode
            return rc, False
        except subprocess.TimeoutExpired:
            lf.write("(time limit reached)\n")
            return 124, True


def build(tree, kind, runs, kver, log, timeout):
    """Build what the runs need in the copy; None or why it failed."""
    t_end = time.time() + timeout
    if kind == "kernel":
        target = f"build/kmod/{kver}/npu_mem.ko"
        rc, to = sh(["make", "-C", tree, target], log, t_end - time.time())
        if rc:
            return "module build " + ("timed out" if to else f"failed (see {log})")
        return None
    rc, to = sh(["make", "-C", tree, "lib"], log, t_end - time.time())
    if rc:
        return "lib build " + ("timed out" if to else f"failed (see {log})")
    progs = sorted({f"{tree}/build/tests/{p}" for _, ps in runs for p in ps})
    rc, to = sh(["make", "-C", f"{tree}/tests"] + progs, log, t_end - time.time())
    if rc:
        return "test build " + ("timed out" if to else f"failed (see {log})")
    return None


def tally(results):
    """Per program: (passed, failed, skipped, note) from run-suites' file."""
    out = {}
    try:
        with open(results) as f:
            for line in f:
                w = line.split(None, 4)
                if len(w) >= 4 and all(x.isdigit() for x in w[:3]):
                    out[w[3]] = (int(w[0]), int(w[1]), int(w[2]),
                                 w[4].strip() if len(w) > 4 else "")
    except OSError:
        pass
    return out


def run_set(config, progs, kind, tree, kver, outdir, timeout):
    """Run one (config, programs) set.  Returns (verdict, detail, per-program)
    with verdict "pass", "fail" (something failed: a kill) or "error"."""
    # The guest writes only to vm-run's results share (-o): results and
    # per-program logs go there.
    vmout = os.path.join(outdir, "vm")
    os.makedirs(vmout, exist_ok=True)
    results = os.path.join(vmout, "results.txt")
    if os.path.exists(results):
        os.remove(results)
    log = os.path.join(outdir, "run.log")
    # Kernel mutants run the main tree's programs; lib mutants the copy's.
    src = tree if (kind == "lib" or config == "host") else TOP
    for p in progs:
        if not os.access(os.path.join(src, "build/tests", p), os.X_OK):
            return "error", f"no program build/tests/{p} (make tests)", {}
    suites = [os.path.join(src, SUITES), "-r", results] + progs
    if config == "host":
        rc, to = sh(suites, log, timeout)
        vm_note = "time limit reached" if to else ""
    else:
        cmd = [VMRUN, "-q", "-c", config, "-k", kver, "-t", str(max(int(timeout), 60)),
               "-o", vmout]
        if kind == "kernel":
            cmd += ["-m", os.path.join(tree, f"build/kmod/{kver}/npu_mem.ko")]
        rc, to = sh(cmd + ["--"] + suites, log, timeout + 30)
        if rc in VM_TOOL_ERRORS:
            return "error", f"{VM_TOOL_ERRORS[rc]} (see {log})", {}
        vm_note = {242: "guest timed out", 243: "insmod failed",
                   244: "rmmod failed", 245: "kernel reported problems",
                   246: "guest died"}.get(rc, "time limit reached" if to else "")
    per = tally(results)
    failed = [f"{p}: {per[p][1]} failed" for p in progs if p in per and per[p][1]]
    missing = [p for p in progs if p not in per]
    if vm_note or failed or rc:
        parts = failed + ([vm_note] if vm_note else []) + \
                ([f"not run: {' '.join(missing)}"] if missing and vm_note else [])
        return "fail", "; ".join(parts) or f"exit {rc} (see {log})", per
    return "pass", "", per


# ---- the two phases ------------------------------------------------------------

def set_key(m, config, prog):
    """What a program's baseline is keyed by: a host program sees no kernel."""
    if config == "host":
        return (config, prog, "lib", "")
    return (config, prog, m.kind, m.kver)


def baseline(mutants, limit, keep):
    """Every distinct set, unmutated: one guest per configuration, kind and
    kernel with all of its programs.  Returns {set_key: None or why the
    program cannot judge a mutant}."""
    t0 = time.time()
    tree = os.path.join(OUT, "baseline/tree")
    copy_tree(tree)
    groups = {}		# (kind, kver, config) -> programs
    for m in mutants:
        for config, progs in m.runs:
            for p in progs:
                _, _, kind, kver = set_key(m, config, p)
                groups.setdefault((kind, kver or m.kver, config), set()).add(p)
    status, built = {}, {}
    for (kind, kver, config), progs in sorted(groups.items()):
        progs = sorted(progs)
        # Kernel sets need the module for their kernel; lib sets use the
        # main tree's module, and need the copy's library and programs.
        bkey = (kind, kver if kind == "kernel" else "")
        if bkey not in built:
            runs = [(c, sorted(p)) for (k, v, c), p in groups.items()
                    if k == kind and (kind == "lib" or v == kver)]
            log = os.path.join(OUT, f"baseline/build-{kind}-{bkey[1]}.log".replace("-.log", ".log"))
            built[bkey] = build(tree, kind, runs, kver, log, limit)
        why = built[bkey]
        if why:
            per, err = {}, why
        else:
            outdir = os.path.join(OUT, f"baseline/{kind}-{config}-{kver}")
            verdict, detail, per = run_set(config, progs, kind, tree, kver,
                                           outdir, limit)
            err = detail if verdict == "error" else None
        for p in progs:
            r = per.get(p)
            if err:
                v = err
            elif r is None:
                v = "did not run"
            elif r[1]:
                v = f"failed: {r[3]}"
            elif not r[0]:		# some skipped checks are fine
                v = f"skipped: {r[3]}"
            else:
                v = None
            status[(config, p, kind, "" if config == "host" else kver)] = v
            where = "host" if config == "host" else f"{config} {kver}"
            print(f"baseline {where:40} {p:28} {v or 'ok'}", flush=True)
    if not keep:
        shutil.rmtree(tree, ignore_errors=True)
    bad = sum(1 for v in status.values() if v)
    print(f"baseline: {len(status) - bad} of {len(status)} programs usable "
          f"({time.time() - t0:.0f} s)", flush=True)
    return status


def run_mutant(m, limit, keep):
    """Returns (status, detail)."""
    t_end = time.time() + limit
    base = os.path.join(OUT, m.id)
    tree = os.path.join(base, "tree")
    os.makedirs(base, exist_ok=True)
    copy_tree(tree)
    try:
        stale = apply_edits(tree, m)
        if stale:
            return "STALE", stale
        why = build(tree, m.kind, m.runs, m.kver, os.path.join(base, "build.log"),
                    t_end - time.time())
        if why:
            return "ERROR", why
        for n, (config, progs) in enumerate(m.runs):
            left = t_end - time.time()
            if left < 30:
                return "KILLED", "time limit reached before every run line ran"
            verdict, detail, _ = run_set(config, progs, m.kind, tree, m.kver,
                                         os.path.join(base, f"run{n}-{config}"), left)
            if verdict == "error":
                return "ERROR", detail
            if verdict == "fail":
                return "KILLED", f"{config}: {detail}"
        return "SURVIVED", ""
    finally:
        if not keep:
            shutil.rmtree(tree, ignore_errors=True)


def pick_kernel(prefix):
    """The newest bootable kernel with headers whose release is prefix or
    starts with prefix followed by "." or "-" (6.1 is not 6.12)."""
    vers = [v for v in os.listdir("/lib/modules")
            if os.path.exists(f"/boot/vmlinuz-{v}") and os.path.isdir(f"/lib/modules/{v}/build")
            and (not prefix or v == prefix or v.startswith(prefix + ".")
                 or v.startswith(prefix + "-"))]
    if not vers:
        sys.exit(f"mutation: no kernel {prefix} with /boot/vmlinuz-* and /lib/modules/*/build")

    def key(v):
        return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", v)]
    return sorted(vers, key=key)[-1]


def main():
    ap = argparse.ArgumentParser(description="mutation testing of kernel/ and lib/")
    ap.add_argument("ids", nargs="*")
    ap.add_argument("--baseline", action="store_true")
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("-t", type=int, default=600, dest="limit")
    ap.add_argument("-k", dest="kver")
    ap.add_argument("--threshold", type=float, default=95.0)
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()

    mutants = parse_catalogue(CATALOGUE)
    if a.ids:
        unknown = set(a.ids) - {m.id for m in mutants}
        if unknown:
            sys.exit(f"mutation: no mutant {' '.join(sorted(unknown))}")
        mutants = [m for m in mutants if m.id in a.ids]
    if a.list:
        for m in mutants:
            runs = "; ".join(f"{c} {' '.join(p)}" for c, p in m.runs)
            print(f"{m.id:28} {m.edits[0][0]:18} {runs}\n{'':28} {m.bug}")
        return 0
    os.makedirs(OUT, exist_ok=True)
    if a.check:
        # In memory: a copy of the tree per mutant costs a minute of
        # make check for no information.
        bad = 0
        for m in mutants:
            _, why = mutated(TOP, m)
            if why:
                bad += 1
                print(f"STALE    {m.id}: {why}")
        print(f"mutation: {len(mutants) - bad} of {len(mutants)} mutants apply")
        return 1 if bad else 0

    default_kver = pick_kernel(a.kver or "")
    for m in mutants:
        m.kver = pick_kernel(m.kernel) if m.kernel else default_kver
    t0 = time.time()
    base = {}
    if not a.no_baseline:
        base = baseline(mutants, a.limit, a.keep)
        if a.baseline:
            return 1 if any(base.values()) else 0

    lines, survivors, killed, counted, bad = [], [], 0, 0, 0
    for m in mutants:
        t1 = time.time()
        unusable = [f"{p}: {base[set_key(m, c, p)]}"
                    for c, ps in m.runs for p in ps if base.get(set_key(m, c, p))]
        if unusable:
            status, detail = "BASELINE-FAIL", "; ".join(unusable)
        else:
            status, detail = run_mutant(m, a.limit, a.keep)
        secs = time.time() - t1
        if status == "KILLED":
            killed += 1
        elif status == "SURVIVED":
            survivors.append(m)
        else:
            bad += 1
        if status in ("KILLED", "SURVIVED") and not (status == "SURVIVED" and m.equivalent):
            counted += 1
        if status == "SURVIVED" and m.equivalent:
            detail = f"known equivalent: {m.equivalent}"
        line = f"{status:13} {m.id:30} {secs:5.0f} s  {detail}".rstrip()
        print(line, flush=True)
        lines.append(line)

    n = len(mutants)
    total = time.time() - t0
    pct = 100.0 * killed / n if n else 100.0
    surv = ", ".join(m.id + (f" (equivalent because {m.equivalent})" if m.equivalent else "")
                     for m in survivors) or "none"
    score = f"mutation: {killed} of {n} killed ({pct:.1f} %); survivors: {surv}"
    eff = 100.0 * killed / counted if counted else 100.0
    neq = sum(1 for m in survivors if m.equivalent)
    tail = [score,
            f"mutation: {eff:.1f} % of the {counted} non-equivalent mutants judged "
            f"(threshold {a.threshold:g} %); {bad} stale, error or baseline-fail; "
            f"{neq} known equivalent",
            f"mutation: {total:.0f} s in all, {total / n if n else 0:.0f} s per mutant "
            f"(kernel {default_kver} unless the mutant names another)"]
    for t in tail:
        print(t)
    with open(os.path.join(OUT, "results.txt"), "w") as f:
        f.write("\n".join(lines + tail) + "\n")
    return 1 if bad or eff < a.threshold else 0


if __name__ == "__main__":
    sys.exit(main())
