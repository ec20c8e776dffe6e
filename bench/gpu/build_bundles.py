#!/usr/bin/env python3
"""Step 1 of the GPU benchmark (runs where `kiln` is): compiles every kernel
of the PERF.md suite for the GPU and writes a folder to carry to the GPU
machine.

    bench/gpu/build_bundles.py [-o OUT] [--targets sm_90a,sm_80]

OUT (default build/bench-gpu) receives:
  X.kpack.gz               examples/X.tile compiled for the targets, or, when
                           the whole file fails, X.K.kpack.gz per kernel K that
                           compiles on its own (gzip'ed unless --no-gzip)
  manifest.json            commit, kiln version, per kernel: status (ok /
                           failed and why), bundle, variants, launch
                           conditions, signature, registers/spills per variant;
                           the C ABI of runtime_c.h as a C compiler sees it
  libkiln_runtime.so       the runtime (no LLVM inside), loaded by ctypes
  runtime_c.h              the header, for run_suite.py's ABI self-check
  run_suite.py, suite.py, kiln_c.py, triton_kernels.py, README.md
                           step 2, so that OUT alone is enough over there

A kernel that does not compile is recorded (with the compiler's message) and
the build goes on: the NVIDIA backend does not compile every kernel yet.
Exit code 0 when the manifest was written (even with failed kernels), 1 when
the ABI self-check failed, 2 when kiln itself is unusable.

Standard library only. `kiln` and the runtime are copied to a private
folder first (--no-snapshot turns that off), so that a concurrent rebuild
of build/ cannot swap the binary in the middle of the run.
"""

import argparse
import concurrent.futures
import datetime
import gzip
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import kiln_c  # noqa: E402
import suite  # noqa: E402

CARRIED_SCRIPTS = ["run_suite.py", "suite.py", "kiln_c.py", "triton_kernels.py", "README.md"]


def git(*args):
    try:
        return subprocess.run(["git", "-C", REPO] + list(args), capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def commit_info():
    full = git("rev-parse", "HEAD")
    status = git("status", "--porcelain")
    dirty = bool(status)
    return {"hash": full, "short": full[:10] if full else "unknown",
            "dirty": dirty,
            "label": (full[:10] if full else "unknown") + ("-dirty" if dirty else ""),
            "modified": [l[3:] for l in status.splitlines()][:200]}


def snapshot_tools(kiln, runtime):
    """Copies kiln and the runtime it links into a private folder; returns
    (kiln path, runtime path, env)."""
    tmp = tempfile.mkdtemp(prefix="kiln-bench-")
    k = os.path.join(tmp, "kiln")
    shutil.copy2(kiln, k)
    rt_real = os.path.realpath(runtime)
    # kiln's RUNPATH names build/lib; LD_LIBRARY_PATH comes first for RUNPATH.
    for name in ("libkiln_runtime.so.0", "libkiln_runtime.so"):
        shutil.copy2(rt_real, os.path.join(tmp, name))
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = tmp + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    return k, os.path.join(tmp, "libkiln_runtime.so"), env, tmp


def run(cmd, env, timeout=3600):
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
        return p.returncode, p.stdout, p.stderr, time.monotonic() - t0
    except subprocess.TimeoutExpired as e:
        return 124, e.stdout or "", "timed out after %d s" % timeout, time.monotonic() - t0


def list_variants(kiln, env, path):
    """{kernel: {"variants": [(name, config)], "conditions": [...], "key": ...}}."""
    rc, out, err, _ = run([kiln, "compile", path, "--list-variants"], env)
    if rc != 0:
        raise RuntimeError("kiln compile %s --list-variants failed: %s" % (path, err.strip()))
    kernels, cur = {}, None
    for line in out.splitlines():
        m = re.match(r"kernel (\w+): (\d+) variants?(?:, key \((.*)\))?", line)
        if m:
            cur = kernels.setdefault(m.group(1), {"count": int(m.group(2)), "key": m.group(3) or "",
                                                  "conditions": [], "variants": []})
            continue
        m = re.match(r"\s+at launch: (.*)", line)
        if m and cur is not None:
            cur["conditions"].append(m.group(1).strip())
            continue
        m = re.match(r"\s+(\w+_v\d+)\s+(.*)", line)
        if m and cur is not None:
            cur["variants"].append([m.group(1), m.group(2).strip()])
    return kernels


def parse_signatures(path):
    """kernel name -> [{name, type, align, div}] from the .tile source."""
    text = open(path).read()
    text = re.sub(r"//[^\n]*", "", text)
    sigs = {}
    for m in re.finditer(r"\bkernel\s+(\w+)\s*(<[^>]*>)?\s*\(", text):
        depth, j = 1, m.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            j += 1
        params = []
        for p in text[m.end():j - 1].split(","):
            p = " ".join(p.split())
            if not p:
                continue
            pm = re.match(r"(\w+)\s*:\s*(\*?\w+)(.*)", p)
            if not pm:
                continue
            entry = {"name": pm.group(1), "type": pm.group(2)}
            for attr, val in re.findall(r"@(align|div)\((\d+)\)", pm.group(3)):
                entry[attr] = int(val)
            params.append(entry)
        sigs[m.group(1)] = params
    return sigs


def first_error(stderr, limit=12):
    lines = [l for l in stderr.splitlines() if l.strip()]
    for i, l in enumerate(lines):
        if "error" in l:
            return "\n".join(lines[i:i + limit])
    return "\n".join(lines[:limit])


def inspect_bundle(kiln, env, bundle):
    rc, out, err, _ = run([kiln, "inspect", bundle, "--json"], env)
    if rc != 0:
        return None
    return json.loads(out)


def summarize_bundle(doc, targets):
    """Per kernel: params, launch conditions (prefix form), and per variant
    the resources of each target's preferred image (cubin, generic entry)."""
    out = {}
    for k in doc.get("kernels", []):
        variants = []
        for v in k.get("variants", []):
            res = {}
            for img in v.get("images", []):
                t = img.get("target")
                r = img.get("resources", {})
                fast = "assumes" in img
                key = t + (" a16" if fast else "")
                # prefer the cubin's numbers (ptxas) when both are there
                if key not in res or r.get("source") == "ptxas":
                    res[key] = {x: r[x] for x in ("registers", "spill_store_bytes",
                                                  "spill_load_bytes", "shared_bytes",
                                                  "threads", "stack_bytes") if x in r}
            variants.append({"const": v.get("const", {}), "resources": res,
                             "images": len(v.get("images", []))})
        out[k["name"]] = {"params": k.get("params", []),
                          "launch_conditions": k.get("launch_conditions", []),
                          "grid": k.get("grid", []), "variants": variants}
    return out


class BundleChecker:
    """Loads each bundle with the runtime that goes to the GPU machine (on
    its host device: the bundle and its manifest are read and validated
    before any device question), so that a bundle this runtime refuses is
    caught here, not over there."""

    def __init__(self, runtime):
        self.rt = kiln_c.Runtime(runtime)
        self.dev = self.rt.open_device("host")

    def problem(self, path):
        try:
            m = self.dev.load_module(path)
            m.close()
            return None
        except kiln_c.KilnError as e:
            if e.status in (kiln_c.KILN_ERROR_NO_IMAGE,):
                return None  # valid bundle, just nothing for the host
            return "%s: %s" % (e.status_name, e.message)


class PtxasPolicy:
    """--ptxas: "on" (cubins; a bundle the runtime refuses is a failure),
    "off" (PTX only), "both" (with ptxas, and when the runtime refuses that
    bundle, again without: the refused one is kept in OUT/refused/ for its
    register counts), "auto" (as "both" until the runtime refuses a bundle,
    then PTX only for the rest: one compile per bundle)."""

    def __init__(self, mode):
        self.mode = mode
        self.refusal = None  # the runtime's first refusal (auto)

    def current(self):
        if self.mode == "auto":
            return "off" if self.refusal else "both"
        return self.mode


def compile_one(kiln, env, src, out, targets, kernel, timeout, checker, policy, label):
    """One `kiln compile` into `out`, validated by loading it with the
    runtime (see PtxasPolicy). Returns a record."""
    ptxas_mode = policy.current()
    cmd = [kiln, "compile", src, "--targets=" + targets, "-o", out]
    if kernel:
        cmd[3:3] = ["--kernel", kernel]
    env_ptx = dict(env)
    if ptxas_mode == "off":
        env_ptx["KILN_PTXAS"] = ""
    rc, _, err, secs = run(cmd, env_ptx, timeout)
    rec = {"command": " ".join(cmd[1:]), "rc": rc, "seconds": round(secs, 2),
           "ptxas": ptxas_mode != "off"}
    if ptxas_mode == "off" and policy.refusal:
        rec["refused_by_runtime"] = policy.refusal
    if rc != 0:
        rec["error"] = first_error(err)
        return rec
    refused = checker.problem(out)
    if refused is None:
        return rec
    rec["refused_by_runtime"] = refused
    if policy.refusal is None:
        policy.refusal = refused
    if ptxas_mode != "both":
        rec["rc"] = -1
        rec["error"] = "the runtime refuses the bundle: " + refused
        return rec
    keep = os.path.join(os.path.dirname(out), "refused", os.path.basename(out))
    os.makedirs(os.path.dirname(keep), exist_ok=True)
    os.replace(out, keep)
    rec["refused_bundle"] = os.path.relpath(keep, os.path.dirname(out))
    print("  %-12s %s: the runtime refuses it (%s); again without ptxas (PTX only)" % (
        label, os.path.basename(out), refused[:120]), flush=True)
    env_ptx["KILN_PTXAS"] = ""
    rc, _, err, secs2 = run(cmd, env_ptx, timeout)
    rec.update({"rc": rc, "seconds_ptx_only": round(secs2, 2), "ptxas": False})
    if rc != 0:
        rec["error"] = first_error(err)
        return rec
    refused = checker.problem(out)
    if refused is not None:
        rec["rc"] = -1
        rec["error"] = "the runtime refuses the PTX-only bundle too: " + refused
        os.remove(out)
    return rec


def compile_file(kiln, env, out_dir, name, targets, timeout, checker, policy):
    """Compiles examples/NAME.tile; falls back to one bundle per kernel."""
    src = os.path.join(REPO, "examples", name + ".tile")
    rec = {"file": name + ".tile", "kernels": {}}
    listing = list_variants(kiln, env, src)
    sigs = parse_signatures(src)
    for folder in (out_dir, os.path.join(out_dir, "refused")):
        if not os.path.isdir(folder):
            continue
        for stale in os.listdir(folder):
            base = stale[:-3] if stale.endswith(".gz") else stale
            if base == name + ".kpack" or (base.startswith(name + ".") and base.endswith(".kpack")):
                os.remove(os.path.join(folder, stale))
    whole = os.path.join(out_dir, name + ".kpack")
    w = compile_one(kiln, env, src, whole, targets, None, timeout, checker, policy, name)
    rec["whole_file"] = w
    print("  %-12s whole file: %s (%.1f s)" % (name, "ok" if w["rc"] == 0 else "failed", w["seconds"]),
          flush=True)
    per_kernel = {}
    if w["rc"] == 0:
        for k in listing:
            per_kernel[k] = {"status": "ok", "bundle": os.path.basename(whole), "ptxas": w["ptxas"],
                             "refused_bundle": w.get("refused_bundle"),
                             "refused_by_runtime": w.get("refused_by_runtime")}
    else:
        for k in listing:
            b = os.path.join(out_dir, "%s.%s.kpack" % (name, k))
            kr = compile_one(kiln, env, src, b, targets, k, timeout, checker, policy, name)
            print("  %-12s   kernel %-14s %s (%.1f s)" % (
                name, k, "ok" if kr["rc"] == 0 else "FAILED: %s" % (
                    kr.get("error", "").splitlines() or ["?"])[0][:150], kr["seconds"]), flush=True)
            per_kernel[k] = {"status": "ok" if kr["rc"] == 0 else "failed",
                             "bundle": os.path.basename(b) if kr["rc"] == 0 else None,
                             "seconds": kr["seconds"], "ptxas": kr["ptxas"],
                             "refused_bundle": kr.get("refused_bundle"),
                             "refused_by_runtime": kr.get("refused_by_runtime")}
            if kr["rc"] != 0:
                per_kernel[k]["error"] = kr.get("error", "failed")
    # Resources per variant: from the bundle that goes over, then from the
    # refused ptxas build if any (it has the register and spill counts).
    details, seen = {}, set()
    for info in per_kernel.values():
        for bundle in (info.get("bundle"), info.get("refused_bundle")):
            if bundle and bundle not in seen:
                seen.add(bundle)
                doc = inspect_bundle(kiln, env, os.path.join(out_dir, bundle))
                if doc:
                    details.update(summarize_bundle(doc, targets))
    for k, info in listing.items():
        entry = per_kernel[k]
        entry.update({"file": name + ".tile", "variant_count": info["count"], "key": info["key"],
                      "conditions": info["conditions"], "variants": info["variants"],
                      "signature": sigs.get(k, [])})
        if k in details:
            entry["bundle_params"] = details[k]["params"]
            entry["launch_conditions"] = details[k]["launch_conditions"]
            entry["resources"] = [v["resources"] for v in details[k]["variants"]]
        rec["kernels"][k] = entry
    return rec


def abi_probe(out_dir):
    """Compiles and runs kiln_c.ABI_PROBE_C with a C compiler, if any."""
    cc = next((c for c in (os.environ.get("CC"), "cc", "clang", "gcc", "clang-22")
               if c and shutil.which(c)), None)
    if not cc:
        return None, "no C compiler found"
    tmp = tempfile.mkdtemp(prefix="kiln-abi-")
    try:
        src = os.path.join(tmp, "probe.c")
        exe = os.path.join(tmp, "probe")
        open(src, "w").write(kiln_c.ABI_PROBE_C)
        p = subprocess.run([cc, "-std=c11", "-I", os.path.join(REPO, "runtime", "include"),
                            src, "-o", exe], capture_output=True, text=True)
        if p.returncode != 0:
            return None, "the ABI probe did not compile: " + p.stderr.strip()
        p = subprocess.run([exe], capture_output=True, text=True)
        abi = json.loads(p.stdout)
        ver = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout
        abi["compiler"] = cc + " (" + (ver.splitlines()[0] if ver else "?") + ")"
        return abi, None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def library_requirements(path):
    data = open(path, "rb").read()
    glibc = sorted(set(re.findall(rb"GLIBC_(\d+\.\d+(?:\.\d+)?)", data)),
                   key=lambda v: [int(x) for x in v.split(b".")])
    glibcxx = sorted(set(re.findall(rb"GLIBCXX_(\d+\.\d+(?:\.\d+)?)", data)),
                     key=lambda v: [int(x) for x in v.split(b".")])
    return {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data),
            "max_glibc": glibc[-1].decode() if glibc else None,
            "max_glibcxx": glibcxx[-1].decode() if glibcxx else None}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--out", default=os.path.join(REPO, "build", "bench-gpu"),
                    help="output folder (default: build/bench-gpu)")
    ap.add_argument("--kiln", default=os.environ.get("KILN", os.path.join(REPO, "build", "bin", "kiln")))
    ap.add_argument("--runtime", default=os.path.join(REPO, "build", "lib", "libkiln_runtime.so"))
    ap.add_argument("--targets", default="sm_90a,sm_80",
                    help="kiln --targets (default sm_90a,sm_80; add 'host' for the host smoke test)")
    ap.add_argument("--only", default="", help="comma-separated suite files (vector_add,softmax,...)")
    ap.add_argument("--jobs", type=int, default=1, help="files compiled at once (default 1)")
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per kiln invocation")
    ap.add_argument("--ptxas", choices=["auto", "both", "on", "off"], default="auto",
                    help="auto (default): with ptxas (cubins beside the PTX, register counts) until "
                         "the runtime refuses such a bundle, then PTX only; both: keep compiling "
                         "with ptxas too (register counts for every kernel, twice the time); "
                         "on; off (PTX only)")
    ap.add_argument("--no-gzip", action="store_true",
                    help="leave the bundles uncompressed (default: X.kpack.gz; run_suite.py "
                         "decompresses them)")
    ap.add_argument("--no-snapshot", action="store_true",
                    help="run build/bin/kiln in place instead of a private copy")
    args = ap.parse_args()

    for path, what in ((args.kiln, "kiln"), (args.runtime, "libkiln_runtime.so")):
        if not os.path.exists(path):
            sys.exit("build_bundles: %s not found at %s (scripts/build.sh kiln kiln_runtime)" % (what, path))
    files = suite.SUITE_FILES
    if args.only:
        files = [f.strip() for f in args.only.split(",") if f.strip()]
        bad = [f for f in files if f not in suite.SUITE_FILES]
        if bad:
            sys.exit("build_bundles: --only: unknown suite files %s (known: %s)" % (
                ", ".join(bad), ", ".join(suite.SUITE_FILES)))

    os.makedirs(args.out, exist_ok=True)
    tmp = None
    if args.no_snapshot:
        kiln, runtime, env = args.kiln, args.runtime, dict(os.environ)
    else:
        kiln, runtime, env, tmp = snapshot_tools(args.kiln, args.runtime)
    try:
        rc, version, err, _ = run([kiln, "--version"], env)
        if rc != 0:
            sys.exit("build_bundles: %s --version failed: %s" % (kiln, err.strip()))
        version = version.strip()
        print("kiln: %s (%s)" % (version, args.kiln))

        shutil.copy2(os.path.realpath(runtime), os.path.join(args.out, "libkiln_runtime.so"))
        shutil.copy2(os.path.join(REPO, "runtime", "include", "kiln", "runtime_c.h"),
                     os.path.join(args.out, "runtime_c.h"))
        for f in CARRIED_SCRIPTS:
            shutil.copy2(os.path.join(HERE, f), os.path.join(args.out, f))

        abi, abi_note = abi_probe(args.out)
        problems, checked = kiln_c.abi_self_check(
            os.path.join(REPO, "runtime", "include", "kiln", "runtime_c.h"), abi)
        print("ABI self-check (header%s vs ctypes): %s" % (
            " and " + abi["compiler"] if abi else "", "ok" if not problems else "FAILED"))
        for p in problems:
            print("  MISMATCH:", p)
        if abi_note:
            print("  note:", abi_note)

        manifest = {
            "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "commit": commit_info(), "kiln_version": version, "targets": args.targets,
            "host": {"machine": platform.machine(), "system": platform.platform(),
                     "cpus": os.cpu_count()},
            "ptxas": os.environ.get("KILN_PTXAS", shutil.which("ptxas") or
                                    ("/usr/local/cuda/bin/ptxas"
                                     if os.access("/usr/local/cuda/bin/ptxas", os.X_OK) else None)),
            "runtime": dict(library_requirements(os.path.join(args.out, "libkiln_runtime.so")),
                            file="libkiln_runtime.so"),
            "abi": abi, "abi_check": {"ok": not problems, "problems": problems, "checked": checked},
            "files": {}, "kernels": {},
        }
        checker = BundleChecker(runtime)
        policy = PtxasPolicy(args.ptxas)
        print("compiling %d files for %s into %s (ptxas: %s)" % (
            len(files), args.targets, args.out, args.ptxas), flush=True)
        t0 = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
            futures = {f: pool.submit(compile_file, kiln, env, args.out, f, args.targets, args.timeout,
                                      checker, policy)
                       for f in files}
            for f in files:
                try:
                    rec = futures[f].result()
                except Exception as e:  # kiln unusable on this file
                    rec = {"file": f + ".tile", "error": str(e), "kernels": {}}
                    print("  %-12s ERROR: %s" % (f, e))
                manifest["kernels"].update(rec.pop("kernels"))
                manifest["files"][f] = rec
        manifest["total_seconds"] = round(time.monotonic() - t0, 1)
        manifest["gzip"] = not args.no_gzip
        if not args.no_gzip:
            # PTX compresses about 6x: OUT/ stays small enough to carry.
            for folder in (args.out, os.path.join(args.out, "refused")):
                if not os.path.isdir(folder):
                    continue
                for name in os.listdir(folder):
                    if name.endswith(".kpack"):
                        path = os.path.join(folder, name)
                        with open(path, "rb") as src, gzip.open(path + ".gz", "wb", compresslevel=6) as dst:
                            shutil.copyfileobj(src, dst)
                        os.remove(path)
        with open(os.path.join(args.out, "manifest.json"), "w") as fh:
            json.dump(manifest, fh, indent=1, sort_keys=True)
            fh.write("\n")
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)

    print()
    print("| kernel | status | variants | bundle | code | note |")
    print("|---|---|---|---|---|---|")
    refusal = None
    for k, info in manifest["kernels"].items():
        note = ""
        if info.get("error"):
            note = info["error"].splitlines()[0][:110]
        refusal = refusal or info.get("refused_by_runtime")
        code = "-" if info["status"] != "ok" else ("PTX + cubin" if info.get("ptxas") else "PTX")
        print("| %s | %s | %d | %s | %s | %s |" % (k, info["status"], info["variant_count"],
                                                    info.get("bundle") or "-", code, note))
    if refusal:
        print("\nnote: the runtime refused PTX + cubin bundles (%s); PTX-only bundles were built "
              "instead (the driver JIT-compiles them at the first launch)" % refusal)
    print("\nmanifest: %s (commit %s, %.0f s)" % (os.path.join(args.out, "manifest.json"),
                                                  manifest["commit"]["label"],
                                                  manifest["total_seconds"]))
    print("next: copy %s to the GPU machine and run  python3 run_suite.py --bundles <it>" % args.out)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
