#!/usr/bin/env python3
"""Runs lit tests of a device pack (scripts/gpu-pack.sh) where lit is not
installed: the GPU tests of test/e2e/gpu, which need only kiln-run, python3
and FileCheck (the pack's tools/FileCheck). Python 3 standard library only.

  run-lit.py [--keep-going] [-v] [--timeout SECONDS] [--out DIR] TEST...

Per test, like lit's ShTest: `REQUIRES:` features (all must be there, else
UNSUPPORTED with the missing ones), then every `RUN:` line (a trailing `\\`
continues it) with lit's substitutions, each run by `bash -e -o pipefail`;
the first failing line fails the test (--keep-going: report it and go on
with the next lines, so that one failing kernel does not hide the others).

Features: `gpu` and `cuda-device` when `kiln-run --list-devices` lists a
CUDA device; `compute-sanitizer` when it is found ($KILN_COMPUTE_SANITIZER,
PATH, /usr/local/cuda/bin); the backends the pack's bundles were built with
(`nvptx-backend`, `host-backend`: the file `features`). Substitutions: %s,
%S, %t, %python, %e2e_bundles (the pack's bundles), %compute_sanitizer, %%.
PATH starts with the pack's tools/ and bin/; LD_LIBRARY_PATH with its lib/.

Exit code: 0 when no test failed (UNSUPPORTED is not a failure), 1 when one
did, 2 for a usage error.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

PACK = os.path.dirname(os.path.abspath(__file__))


def pack_env():
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([os.path.join(PACK, "tools"), os.path.join(PACK, "bin"),
                                   env.get("PATH", "/usr/bin:/bin")])
    lib = os.path.join(PACK, "lib")
    env["LD_LIBRARY_PATH"] = lib + (os.pathsep + env["LD_LIBRARY_PATH"]
                                    if env.get("LD_LIBRARY_PATH") else "")
    return env


def find_sanitizer():
    s = os.environ.get("KILN_COMPUTE_SANITIZER") or shutil.which("compute-sanitizer")
    if s:
        return s
    p = "/usr/local/cuda/bin/compute-sanitizer"
    return p if os.access(p, os.X_OK) else None


def probe_features(env):
    """(features, notes)."""
    features, notes = set(), []
    path = os.path.join(PACK, "features")
    if os.path.exists(path):
        with open(path) as f:
            features.update(f.read().split())
    try:
        p = subprocess.run([os.path.join(PACK, "bin", "kiln-run"), "--list-devices"], env=env,
                           capture_output=True, text=True, timeout=120)
        cuda = [l for l in p.stdout.splitlines() if l.startswith("cuda:")]
        if cuda:
            features.update(["gpu", "cuda-device"])
            # sm_90a images (wgmma, TMA) run on sm_90 exactly.
            if ", sm_90," in cuda[0]:
                features.add("cuda-sm90")
            notes.append("CUDA device: " + cuda[0])
        else:
            notes.append("GPU tests (REQUIRES: gpu) are unsupported: " +
                         (" ".join(p.stderr.split()) or "exit code %d" % p.returncode))
    except (OSError, subprocess.SubprocessError) as e:
        notes.append("kiln-run --list-devices failed: %s" % e)
    sanitizer = find_sanitizer()
    if sanitizer:
        features.add("compute-sanitizer")
        notes.append("compute-sanitizer: " + sanitizer)
    else:
        notes.append("compute-sanitizer not found (PATH, /usr/local/cuda/bin, "
                     "$KILN_COMPUTE_SANITIZER)")
    return features, sanitizer, notes


def parse_test(path):
    runs, requires, pending = [], [], None
    with open(path) as f:
        for number, line in enumerate(f, 1):
            m = re.search(r"\bRUN:(.*)$", line.rstrip("\n"))
            if m:
                text = m.group(1).strip()
                if pending is not None:
                    pending = (pending[0], pending[1] + " " + text)
                else:
                    pending = (number, text)
                if pending[1].endswith("\\"):
                    pending = (pending[0], pending[1][:-1].rstrip())
                else:
                    runs.append(pending)
                    pending = None
                continue
            m = re.search(r"\bREQUIRES:(.*)$", line)
            if m:
                requires += [r.strip() for r in m.group(1).split(",") if r.strip()]
            for directive in ("XFAIL:", "UNSUPPORTED:", "ALLOW_RETRIES:", "DEFINE:", "REDEFINE:"):
                if re.search(r"\b" + directive, line):
                    raise SystemExit("%s:%d: %s is not supported by run-lit.py" % (path, number, directive))
    if pending is not None:
        raise SystemExit("%s: the last RUN line ends in a continuation" % path)
    return runs, requires


def substitute(command, subs):
    # Longest first, so that %s does not eat %S... (lit does the same with
    # config substitutions before its own).
    pattern = re.compile("|".join(re.escape(k) for k in sorted(subs, key=len, reverse=True)))
    return pattern.sub(lambda m: subs[m.group(0)], command)


def run_test(path, args, features, sanitizer, env):
    runs, requires = parse_test(path)
    name = os.path.relpath(path, PACK)
    if name.startswith(".."):
        name = os.path.basename(path)
    missing = [r for r in requires if r not in features]
    if missing:
        print("UNSUPPORTED: %s (missing features: %s)" % (name, ", ".join(missing)), flush=True)
        return "UNSUPPORTED"
    tmp = os.path.join(args.out, name + ".tmp")
    os.makedirs(os.path.dirname(tmp), exist_ok=True)
    subs = {"%%": "%", "%s": path, "%S": os.path.dirname(path), "%t": tmp,
            "%python": sys.executable,
            "%e2e_bundles": os.path.join(PACK, "bundles")}
    if sanitizer:
        subs["%compute_sanitizer"] = sanitizer
    failures, log = 0, []
    start = time.time()
    for number, command in runs:
        cmd = substitute(command, subs)
        t0 = time.time()
        try:
            p = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", cmd], env=env,
                               cwd=os.path.dirname(tmp), capture_output=True, text=True,
                               errors="replace", timeout=args.timeout)
            rc, out = p.returncode, p.stdout + p.stderr
        except subprocess.TimeoutExpired as e:
            rc = "timeout after %ds" % args.timeout
            out = ((e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")) + \
                  ((e.stderr or b"").decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or ""))
        entry = "$ %s   # %s:%d (%.1f s)\n%s" % (cmd, os.path.basename(path), number, time.time() - t0, out)
        log.append(entry)
        if args.verbose:
            print(entry, flush=True)
        if rc != 0:
            failures += 1
            print("FAILED: %s:%d (exit %s):\n$ %s\n%s" % (name, number, rc, cmd, out.rstrip()), flush=True)
            if not args.keep_going:
                break
    with open(tmp + ".log", "w") as f:
        f.write("\n".join(log))
    verdict = "FAIL" if failures else "PASS"
    print("%s: %s (%d RUN lines, %d failed, %.1f s; log %s.log)"
          % (verdict, name, len(runs), failures, time.time() - start, tmp), flush=True)
    return verdict


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tests", nargs="+")
    ap.add_argument("--keep-going", action="store_true",
                    help="after a failing RUN line, go on with the next ones")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every command and its output")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per RUN line (600)")
    ap.add_argument("--out", default=os.path.join(PACK, "results", "lit"),
                    help="where %%t lies (default: the pack's results/lit)")
    args = ap.parse_args()
    args.out = os.path.abspath(args.out)
    env = pack_env()
    features, sanitizer, notes = probe_features(env)
    for n in notes:
        print("run-lit.py: note: " + n, flush=True)
    print("run-lit.py: features: " + ", ".join(sorted(features)), flush=True)
    results = {}
    for t in args.tests:
        path = os.path.abspath(t)
        if not os.path.isfile(path):
            print("run-lit.py: error: no test %s" % t, file=sys.stderr)
            return 2
        results[t] = run_test(path, args, features, sanitizer, env)
    counts = {}
    for v in results.values():
        counts[v] = counts.get(v, 0) + 1
    print("run-lit.py: " + ", ".join("%s %d" % (k, counts[k]) for k in sorted(counts)), flush=True)
    return 1 if counts.get("FAIL") else 0


if __name__ == "__main__":
    sys.exit(main())
