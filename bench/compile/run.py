#!/usr/bin/env python3
"""Compile time of the PERF.md suite, per (kernel, variant, target), with
and without ptxas; runs anywhere `kiln` runs (no GPU needed).

    bench/compile/run.py [--repeats 3] [--only softmax,matmul] [--max-variants N]

What is timed (wall clock of the `kiln` process, and its CPU time — user +
system of kiln and the ptxas it waits for — beside it):

  per variant   `kiln compile examples/F.tile --kernel K -D P=V ... --targets=T
                -o tmp.kpack` with every const param of the variant pinned, so
                the process compiles exactly one variant; for T = sm_90a with
                ptxas (KILN_PTXAS=path: PTX, then ptxas checks it and writes a
                cubin), sm_90a without (KILN_PTXAS= empty: PTX only), gfx942
                and host.
                The median of --repeats runs. Each run also pays the process
                start and the front end; "front end" is the same command with
                --emit=tile (parse, check, specialize the one variant, no
                backend), and "backend" is the difference.
  suite total   `kiln compile F --kernel K --targets=sm_90a,gfx942,host` per
                kernel, every variant in one process (its workers share
                the builds of equal code), with ptxas and without: what
                building the suite costs. Kernels that do not compile for
                every target are listed apart (their host-only time is
                given).

Never -o /dev/null: kiln writes a bundle to a temporary file beside the
output and renames it over the output, which as root would replace
/dev/null itself. Outputs go to a private temporary folder.

Prints markdown tables and writes them to
bench/results/compile-<date>-<commit>.md (and .json with every sample).
PERF.md's target: the whole suite, every variant, for sm_90a + gfx942 +
host under a minute on a 2-core machine.
"""

import argparse
import datetime
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "bench", "gpu"))
import build_bundles as bb  # noqa: E402  (list_variants, snapshot, commit info)
import suite  # noqa: E402


# The suite total's targets: PERF.md's.
SUITE_TARGETS = "sm_90a,gfx942,host"

def timed(cmd, env, timeout):
    """(rc, wall ms, cpu ms, stderr) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True, timeout=timeout)
        rc, err = p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        rc, err = 124, "timed out after %d s" % timeout
    wall = (time.perf_counter() - t0) * 1e3
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1e3
    return rc, wall, cpu, err


def pins(config):
    out = []
    for k, v in suite.parse_config(config).items():
        out += ["-D", "%s=%d" % (k, v)]
    return out


def med(xs):
    return statistics.median(xs) if xs else None


def fmt(x, digits=0):
    if x is None:
        return "—"
    return ("%%.%df" % digits) % x


def markdown_table(headers, rows):
    widths = [max([len(str(h))] + [len(str(r[i])) for r in rows]) for i, h in enumerate(headers)]
    line = lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"
    return "\n".join([line(headers), "|" + "|".join("-" * (w + 2) for w in widths) + "|"] +
                     [line(r) for r in rows])


def subsample(variants, n):
    if not n or len(variants) <= n:
        return variants
    step = (len(variants) - 1) / (n - 1) if n > 1 else 0
    idx = sorted({round(i * step) for i in range(n)})
    return [variants[i] for i in idx]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--kiln", default=os.environ.get("KILN", os.path.join(REPO, "build", "bin", "kiln")))
    ap.add_argument("--runtime", default=os.path.join(REPO, "build", "lib", "libkiln_runtime.so"),
                    help="the runtime kiln links (copied beside the kiln snapshot)")
    ap.add_argument("--ptxas", default=shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas")
    ap.add_argument("--repeats", type=int, default=3, help="runs per (kernel, variant, target) (default 3)")
    ap.add_argument("--total-repeats", type=int, default=1, help="runs of each whole-kernel compile")
    ap.add_argument("--only", default="", help="suite files (vector_add,softmax,layer_norm,row_reduce,matmul,attention)")
    ap.add_argument("--max-variants", type=int, default=0,
                    help="time at most N variants per kernel, evenly spread (default: all)")
    ap.add_argument("--no-per-variant", action="store_true")
    ap.add_argument("--no-total", action="store_true")
    ap.add_argument("--timeout", type=int, default=1800)
    ap.add_argument("--results-dir", default=os.path.join(REPO, "bench", "results"))
    ap.add_argument("--out", default=None)
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--no-snapshot", action="store_true")
    args = ap.parse_args()

    files = suite.SUITE_FILES
    if args.only:
        files = [f.strip() for f in args.only.split(",") if f.strip()]
        bad = [f for f in files if f not in suite.SUITE_FILES]
        if bad:
            sys.exit("--only: unknown suite files %s" % ", ".join(bad))
    if not os.path.exists(args.kiln):
        sys.exit("kiln not found at %s (scripts/build.sh kiln)" % args.kiln)
    has_ptxas = bool(args.ptxas) and os.access(args.ptxas, os.X_OK)

    snap = None
    if args.no_snapshot:
        kiln, env = args.kiln, dict(os.environ)
    else:
        kiln, _, env, snap = bb.snapshot_tools(args.kiln, args.runtime)
    work = tempfile.mkdtemp(prefix="kiln-compile-bench-")
    configs = []
    if has_ptxas:
        configs.append(("sm_90a", "ptxas", dict(env, KILN_PTXAS=args.ptxas)))
    configs.append(("sm_90a", "no ptxas", dict(env, KILN_PTXAS="")))
    configs.append(("gfx942", "", dict(env, KILN_PTXAS="")))
    configs.append(("host", "", dict(env, KILN_PTXAS="")))

    commit = bb.commit_info()
    version = subprocess.run([kiln, "--version"], env=env, capture_output=True, text=True).stdout.strip()
    load0 = os.getloadavg()
    started = time.monotonic()
    print("kiln: %s; commit %s; ptxas: %s; %d repeats; %d CPUs; load %.2f" % (
        version, commit["label"], args.ptxas if has_ptxas else "not found", args.repeats,
        os.cpu_count(), load0[0]), flush=True)

    kernels = []  # (file, kernel, [(variant name, config)])
    for f in files:
        listing = bb.list_variants(kiln, env, os.path.join(REPO, "examples", f + ".tile"))
        for k, info in listing.items():
            kernels.append((f, k, [tuple(v) for v in info["variants"]]))

    samples = {}   # (kernel, variant, target, mode) -> {"wall": [], "cpu": [], "error": str}
    front = {}     # kernel -> {"wall": [], "cpu": []}
    try:
        if not args.no_per_variant:
            out = os.path.join(work, "v.kpack")
            text_out = os.path.join(work, "v.mlir")
            for rep in range(args.repeats):
                for f, k, variants in kernels:
                    src = os.path.join(REPO, "examples", f + ".tile")
                    chosen = subsample(variants, args.max_variants)
                    rc, wall, cpu, err = timed([kiln, "compile", src, "--kernel", k] + pins(chosen[0][1]) +
                                               ["--emit=tile", "-o", text_out], env, args.timeout)
                    fr = front.setdefault(k, {"wall": [], "cpu": []})
                    if rc == 0:
                        fr["wall"].append(wall)
                        fr["cpu"].append(cpu)
                    for target, mode, cenv in configs:
                        t0 = time.monotonic()
                        ok = bad = 0
                        for vname, cfg in chosen:
                            key = (k, vname, target, mode)
                            s = samples.setdefault(key, {"wall": [], "cpu": [], "error": None,
                                                         "config": cfg, "file": f})
                            if s["error"]:
                                continue  # a failure is not timed again
                            rc, wall, cpu, err = timed(
                                [kiln, "compile", src, "--kernel", k] + pins(cfg) +
                                ["--targets=" + target, "-o", out], cenv, args.timeout)
                            if rc == 0:
                                s["wall"].append(wall)
                                s["cpu"].append(cpu)
                                ok += 1
                            else:
                                s["error"] = bb.first_error(err, 3)
                                bad += 1
                        print("  [%d/%d] %-14s %-7s %-8s %3d variants ok, %3d failed  %6.1f s" % (
                            rep + 1, args.repeats, k, target, mode or "-", ok, bad,
                            time.monotonic() - t0), flush=True)

        totals = []  # (file, kernel, variants, status, {mode: (wall, cpu)}, detail)
        if not args.no_total:
            modes = [(m, e) for t, m, e in configs if t == "sm_90a"]
            out = os.path.join(work, "t.kpack")
            for f, k, variants in kernels:
                src = os.path.join(REPO, "examples", f + ".tile")
                times, error = {}, None
                for mode, tenv in modes:
                    walls, cpus = [], []
                    for _ in range(max(1, args.total_repeats)):
                        rc, wall, cpu, err = timed([kiln, "compile", src, "--kernel", k,
                                                    "--targets=" + SUITE_TARGETS, "-o", out],
                                                   tenv, args.timeout)
                        if rc != 0:
                            error = bb.first_error(err, 3)
                            break
                        walls.append(wall)
                        cpus.append(cpu)
                    if error is not None:
                        break
                    times[mode] = (med(walls), med(cpus))
                if error is None:
                    totals.append((f, k, len(variants), "ok", times, ""))
                else:
                    rc, wall, cpu, err = timed([kiln, "compile", src, "--kernel", k,
                                                "--targets=host", "-o", out], modes[-1][1],
                                               args.timeout)
                    totals.append((f, k, len(variants), "failed",
                                   {"host only": (wall, cpu)} if rc == 0 else {},
                                   error.splitlines()[0]))
                print("  total %-14s %s" % (k, totals[-1][3]), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if snap:
            shutil.rmtree(snap, ignore_errors=True)
    load1 = os.getloadavg()
    elapsed = time.monotonic() - started

    # --- tables ---
    lines = ["# Compile time of the suite, %s" % datetime.date.today().isoformat(), "",
             "- %s; commit %s; ptxas: %s" % (version, commit["label"], args.ptxas if has_ptxas else "not found"),
             "- machine: %d CPUs; load average %.2f at the start, %.2f at the end (other work on the "
             "machine inflates wall times; the CPU column is less sensitive to it)" % (
                 os.cpu_count(), load0[0], load1[0]),
             "- per variant: the median of %d runs of one `kiln compile --kernel K -D ...` process "
             "(%s variants per kernel); suite total: one process per kernel, every variant, "
             "--targets=%s with and without ptxas, median of %d" % (
                 args.repeats, "all" if not args.max_variants else "at most %d" % args.max_variants,
                 SUITE_TARGETS, args.total_repeats),
             "- front end = the same process with --emit=tile (start, parse, check, specialize one "
             "variant); backend = per-variant median minus front end", ""]

    if samples:
        lines += ["## Per (kernel, variant, target): medians over the variants", ""]
        rows = []
        by_cfg = {}
        for f, k, variants in kernels:
            fr = front.get(k, {})
            fw, fc = med(fr.get("wall", [])), med(fr.get("cpu", []))
            for target, mode, _ in configs:
                ss = [v for (kk, _, t, m), v in samples.items() if kk == k and t == target and m == mode]
                okm = [med(s["wall"]) for s in ss if s["wall"] and not s["error"]]
                okc = [med(s["cpu"]) for s in ss if s["cpu"] and not s["error"]]
                fails = [s for s in ss if s["error"]]
                by_cfg.setdefault((target, mode), []).extend(okm)
                m = med(okm)
                rows.append([k, target, mode or "—", "%d / %d" % (len(okm), len(ss)), fmt(m),
                             fmt(min(okm)) if okm else "—", fmt(max(okm)) if okm else "—",
                             fmt(fw), fmt(m - fw) if (m is not None and fw is not None) else "—",
                             fmt(med(okc)), fmt(sum(okm) / 1e3, 1) if okm else "—",
                             (fails[0]["error"].splitlines()[0][:90] if fails else "")])
        lines.append(markdown_table(["kernel", "target", "ptxas", "variants ok", "median ms",
                                     "min", "max", "front end ms", "backend ms", "CPU ms",
                                     "sum s", "failure"], rows))
        lines += ["", "## Per target: all (kernel, variant) pairs that compile", ""]
        rows = []
        for (target, mode), xs in by_cfg.items():
            xs = sorted(xs)
            p90 = xs[min(len(xs) - 1, int(0.9 * len(xs)))] if xs else None
            rows.append([target, mode or "—", len(xs), fmt(med(xs)), fmt(p90),
                         fmt(sum(xs) / 1e3, 1) if xs else "—"])
        lines.append(markdown_table(["target", "ptxas", "variants", "median ms", "p90 ms",
                                     "sum of medians s"], rows))
        lines.append("")
    if totals:
        modes = [m for t, m, _ in configs if t == "sm_90a"]
        lines += ["## Suite total: %s, one process per kernel" % SUITE_TARGETS.replace(",", " + "),
                  ""]
        rows = []
        for f, k, n, status, times, detail in totals:
            row = [k, f + ".tile", n, status]
            for m in modes:
                w, c = times.get(m, (None, None))
                row += [fmt(w / 1e3 if w else None, 1), fmt(c / 1e3 if c else None, 1)]
            rows.append(row + [detail[:100]])
        header = ["kernel", "file", "variants", "status"]
        for m in modes:
            header += ["wall s (%s)" % m, "CPU s (%s)" % m]
        lines.append(markdown_table(header + ["failure"], rows))
        failed = [t for t in totals if t[3] != "ok"]
        for m in modes:
            total = sum(t[4][m][0] for t in totals if t[3] == "ok")
            lines += ["", "**Total (%s, %s, every variant of the %d kernels that compile for "
                      "each target): %.1f s wall**%s." % (
                          SUITE_TARGETS.replace(",", " + "), m, len(totals) - len(failed),
                          total / 1e3,
                          "; not included: %s" % ", ".join(t[1] for t in failed)
                          if failed else "")]
        lines += ["", "PERF.md's target: the whole suite for sm_90a + gfx942 + host under 60 s "
                  "on a 2-core machine.", ""]

    if samples:
        lines += ["## Appendix: every variant (median wall ms)", ""]
        rows = []
        for f, k, variants in kernels:
            for vname, cfg in subsample(variants, args.max_variants):
                cells = [vname, cfg]
                for target, mode, _ in configs:
                    s = samples.get((k, vname, target, mode))
                    cells.append("fail" if s and s["error"] else fmt(med(s["wall"]) if s else None))
                rows.append(cells)
        lines.append(markdown_table(["variant", "config"] + ["%s %s" % (t, m) if m else t
                                                             for t, m, _ in configs], rows))
        lines.append("")
    lines.append("(%.0f s to measure)" % elapsed)
    text = "\n".join(lines)
    cut = text.find("## Appendix")
    print()
    print(text[:cut] if cut > 0 else text)

    if not args.no_write:
        path = args.out or os.path.join(args.results_dir, "compile-%s-%s.md" % (
            datetime.date.today().isoformat(), commit["label"]))
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w") as fh:
            fh.write(text + "\n")
        with open(os.path.splitext(path)[0] + ".json", "w") as fh:
            json.dump({"kiln": version, "commit": commit, "ptxas": args.ptxas if has_ptxas else None,
                       "repeats": args.repeats, "load": [load0, load1],
                       "front_end": front,
                       "samples": [{"kernel": k, "variant": v, "target": t, "ptxas": m, **s}
                                   for (k, v, t, m), s in samples.items()],
                       "totals": totals}, fh, separators=(",", ":"))
        print("written: %s (and .json)" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
