#!/usr/bin/env python3
"""Step 2 of the GPU benchmark (runs on the GPU machine): the PERF.md suite,
Kiln vs Triton vs torch, in one process on one card.

    python3 bench/gpu/run_suite.py --bundles OUT [--only softmax,matmul] [--quick]
    python3 bench/gpu/run_suite.py --bundles OUT --dry-run      # anywhere, no torch
    python3 bench/gpu/run_suite.py --self-check                  # the ctypes ABI check

OUT is build_bundles.py's folder (bundles, manifest.json,
libkiln_runtime.so). For each suite entry at the PERF.md shapes it draws
fresh random inputs with torch (the seed is printed), computes a float64
reference, runs

  Kiln    through libkiln_runtime's C API (ctypes): every variant whose
          launch conditions hold is launched once and checked, the passing
          ones are screened, the fastest is timed (or the one --config names);
  Triton  the kernels of triton_kernels.py (autotuned);
  torch   torch.add / softmax / F.layer_norm / sum / amax / matmul (cuBLAS) /
          F.scaled_dot_product_attention,

checks every result against the reference (NaN never passes; a failed check
stays in the table), times each with warm-up, an L2 flush before every
repeat and the median of many repeats, measures the device-to-device copy
bandwidth and a bf16 8192^3 matmul as ceilings in the same run, prints one
table last and writes it to bench/results/<card>-<date>-<commit>.md (and
.json beside it).

Timing. Kiln runs on its own (non-blocking) stream, torch and Triton on
torch's current stream. Each side is timed with its own CUDA events, in the
same pattern: [flush, start event, kernel, end event] x repeats, enqueued
back to back and synchronized once, so the flush (a memset of >= 2x L2 on
the same stream) covers the launch overhead and each event pair brackets
the kernel alone. Kiln's flush is kiln_fill on a Kiln buffer, torch's is
zero_() on a torch tensor. Between the two sides everything is synchronized
(torch.cuda.synchronize(), kiln_stream_synchronize), so no work overlaps.

--device host --triton-interpret runs the same code on the CPU (Kiln's
host device, torch on CPU, Triton's interpreter) at tiny shapes: a smoke
test of this script and of the bindings, not a benchmark.
"""

import argparse
import datetime
import json
import math
import os
import re
import statistics
import sys
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kiln_c  # noqa: E402
import suite  # noqa: E402
from kiln_c import KilnError  # noqa: E402

DASH = "—"
IMPLS = ("Kiln", "Triton", "torch")


class Fatal(Exception):
    """The CUDA context cannot be used any more: stop all GPU work."""


# --- formatting -------------------------------------------------------------

def fmt_ms(x):
    if x is None:
        return DASH
    if isinstance(x, str):
        return x
    return "%.4f" % x if x < 10 else "%.2f" % x


def fmt_ratio(a, b):
    """Speed of Kiln relative to another: t_other / t_kiln."""
    if not isinstance(a, float) or not isinstance(b, float) or a <= 0:
        return DASH
    return "%.2f" % (b / a)


def fmt_err(x):
    if x is None:
        return DASH
    if x != x:
        return "NaN"
    return "%.1e" % x


def markdown_table(headers, rows):
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h))
              for i, h in enumerate(headers)]
    def line(cells):
        return "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"
    out = [line(headers), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [line(r) for r in rows]
    return "\n".join(out)


# --- the manifest ------------------------------------------------------------

def load_manifest(bundles):
    path = os.path.join(bundles, "manifest.json") if bundles else None
    if path and os.path.exists(path):
        with open(path) as fh:
            return json.load(fh)
    return None


_UNZIPPED = {}


def bundle_file(path):
    """The bundle at `path`, or `path`.gz decompressed into a private
    temporary folder (once); None if neither exists."""
    if os.path.exists(path):
        return path
    if not os.path.exists(path + ".gz"):
        return None
    if path not in _UNZIPPED:
        import atexit
        import gzip
        import shutil
        import tempfile
        tmp = tempfile.mkdtemp(prefix="kiln-bundles-")
        atexit.register(shutil.rmtree, tmp, True)
        out = os.path.join(tmp, os.path.basename(path))
        with gzip.open(path + ".gz", "rb") as src, open(out, "wb") as dst:
            shutil.copyfileobj(src, dst)
        _UNZIPPED[path] = out
    return _UNZIPPED[path]


def kernel_record(manifest, bundles, kernel, unzip=True):
    """(bundle path or None, manifest record or {}, reason when no bundle)."""
    if manifest is not None:
        rec = manifest.get("kernels", {}).get(kernel)
        if rec is None:
            return None, {}, "not in manifest.json (build_bundles.py --only?)"
        if rec.get("status") != "ok" or not rec.get("bundle"):
            err = (rec.get("error") or "failed").splitlines()
            return None, rec, "not compiled: " + (err[0] if err else "failed")
        p = os.path.join(bundles, rec["bundle"])
        if not (os.path.exists(p) or os.path.exists(p + ".gz")):
            return None, rec, "%s is missing" % rec["bundle"]
        return (bundle_file(p) if unzip else p), rec, None
    if bundles:
        f = suite.KERNEL_FILES[kernel]
        for cand in ("%s.kpack" % f, "%s.%s.kpack" % (f, kernel)):
            p = os.path.join(bundles, cand)
            if os.path.exists(p) or os.path.exists(p + ".gz"):
                return (bundle_file(p) if unzip else p), {}, None
    return None, {}, "no bundle"


def check_signature(entry, params):
    """Compares the entry's argument list with the kernel's parameters
    ([{name, type, ...}] with type "*f32"/"i32"/...). Returns problems."""
    want = entry.kiln_params()
    got = [(p["name"], p["type"]) for p in params]
    if [w[0] for w in want] != [g[0] for g in got]:
        return ["%s takes (%s); run_suite passes (%s)" % (
            entry.kernel, ", ".join(g[0] for g in got), ", ".join(w[0] for w in want))]
    problems = []
    for (wn, wt), (gn, gt) in zip(want, got):
        if wt != gt:
            problems.append("%s: parameter %s is %s; run_suite passes %s" % (entry.kernel, gn, gt, wt))
    return problems


def params_from_runtime(kernel):
    out = []
    for p in kernel.params():
        out.append({"name": p["name"], "type": ("*" if p["is_pointer"] else "") + p["type"]})
    return out


# --- per-entry result ----------------------------------------------------------

class Result:
    def __init__(self, entry):
        self.entry = entry
        self.ms = {i: None for i in IMPLS}          # float, or a short string
        self.checks = {i: None for i in IMPLS}      # (ok, worst error, output name, text)
        self.kiln_variant = None
        self.kiln_variants_total = 0
        self.kiln_candidates = 0
        self.kiln_refusal = None
        self.kiln_failed = []                        # (config, text) of variants that failed
        self.kiln_resources = None
        self.triton_config = None
        self.notes = []
        self.reps = {}

    def to_json(self):
        e = self.entry
        return {"kernel": e.kernel, "family": e.family, "dtype": e.dtype, "shape": e.shape,
                "shape_str": e.shape_str, "bytes": e.bytes, "flops": e.flops,
                "ms": self.ms, "reps": self.reps,
                "checks": {k: (list(v) if v else None) for k, v in self.checks.items()},
                "kiln_variant": self.kiln_variant, "kiln_candidates": self.kiln_candidates,
                "kiln_variants_total": self.kiln_variants_total,
                "kiln_refusal": self.kiln_refusal, "kiln_failed": self.kiln_failed,
                "kiln_resources": self.kiln_resources, "triton_config": self.triton_config,
                "notes": self.notes}


def check_text(r):
    parts, all_ok = [], True
    for impl in IMPLS:
        c = r.checks[impl]
        if c is None:
            continue
        ok, err, name, text = c
        if not ok:
            all_ok = False
            parts.append("%s %s" % (impl, text))
    if r.kiln_failed:
        all_ok = False
        parts.append("%d Kiln variant%s FAIL" % (len(r.kiln_failed), "s" if len(r.kiln_failed) > 1 else ""))
    ran = [i for i in IMPLS if r.checks[i] is not None]
    if not ran:
        return DASH
    if all_ok:
        k = r.checks["Kiln"]
        return "ok" + (" (Kiln %s)" % fmt_err(k[1]) if k else "")
    return "; ".join(parts)


def ceiling_ms(entry, ceilings):
    if not ceilings:
        return None
    if entry.bound == "memory" and ceilings.get("copy_Bps"):
        return entry.bytes / ceilings["copy_Bps"] * 1e3
    if entry.bound == "compute" and ceilings.get("mm_flops"):
        return entry.flops / ceilings["mm_flops"] * 1e3
    return None


def throughput(entry, ms):
    if not isinstance(ms, float) or ms <= 0:
        return DASH
    if entry.bound == "memory":
        return "%.0f GB/s" % (entry.bytes / ms / 1e6)
    return "%.1f TFLOP/s" % (entry.flops / ms / 1e9)


MAIN_HEADERS = ["kernel", "shape", "dtype", "Kiln ms", "Triton ms", "torch ms", "ceiling ms",
                "Kiln/Triton", "Kiln/torch", "% of ceiling", "check"]


def main_rows(results, ceilings):
    rows = []
    for r in results:
        e = r.entry
        k, t, p = r.ms["Kiln"], r.ms["Triton"], r.ms["torch"]
        c = ceiling_ms(e, ceilings)
        pct = "%.0f%%" % (100 * c / k) if c and isinstance(k, float) and k > 0 else DASH
        rows.append([e.kernel, e.shape_str, e.dtype, fmt_ms(k), fmt_ms(t), fmt_ms(p),
                     fmt_ms(c) if c else DASH, fmt_ratio(k, t), fmt_ratio(k, p), pct,
                     check_text(r)])
    return rows


DETAIL_HEADERS = ["kernel", "shape", "dtype", "Kiln variant", "candidates", "regs / spills",
                  "Kiln", "Triton", "torch", "Triton config", "error K / T / t"]


def detail_rows(results):
    rows = []
    for r in results:
        e = r.entry
        errs = " / ".join(fmt_err(r.checks[i][1]) if r.checks[i] else DASH for i in IMPLS)
        cand = "%d of %d" % (r.kiln_candidates, r.kiln_variants_total) if r.kiln_variants_total else DASH
        rows.append([e.kernel, e.shape_str, e.dtype, r.kiln_variant or (r.kiln_refusal or DASH)[:60],
                     cand, r.kiln_resources or DASH, throughput(e, r.ms["Kiln"]),
                     throughput(e, r.ms["Triton"]), throughput(e, r.ms["torch"]),
                     r.triton_config or DASH, errs])
    return rows


def resources_text(rec, variant_index, target="sm_90a"):
    """'96 regs; fast path 90 regs' for a variant, from the manifest (what
    ptxas said of the target's generic and fast-path images)."""
    res = rec.get("resources")
    if not res or variant_index is None or variant_index >= len(res):
        return None
    parts = []
    for key, label in ((target, ""), (target + " a16", "fast path ")):
        x = res[variant_index].get(key)
        if x and "registers" in x:
            spills = x.get("spill_store_bytes", 0) + x.get("spill_load_bytes", 0)
            parts.append("%s%d regs%s" % (label, x["registers"],
                                          ", %d B spilled" % spills if spills else ""))
    return "; ".join(parts) or None


# --- the dry run ---------------------------------------------------------------

def dry_run(plan, manifest, args):
    print("dry run: no GPU work, no torch")
    problems, checked = kiln_c.abi_self_check(args.header, (manifest or {}).get("abi"))
    print("ABI self-check: %s (%s)" % ("ok" if not problems else "FAILED", "; ".join(checked[-2:])))
    for p in problems:
        print("  MISMATCH:", p)
    lib = args.lib
    if lib and os.path.exists(lib):
        try:
            kiln_c.Runtime(lib)
            print("runtime: %s loads, all %d functions bound" % (lib, len(kiln_c.FUNCTIONS)))
        except (OSError, AttributeError) as e:
            print("runtime: %s does not load here: %s" % (lib, e))
            problems.append(str(e))
    else:
        print("runtime: %s not found" % lib)
    if manifest:
        c = manifest.get("commit", {})
        print("manifest: commit %s, %s, targets %s, created %s" % (
            c.get("label"), manifest.get("kiln_version"), manifest.get("targets"),
            manifest.get("created")))
    else:
        print("manifest: none (--bundles %s)" % args.bundles)
    print("\nplan: %d entries (%s)" % (len(plan), "quick" if args.quick else args.device))
    rows = []
    for e in plan:
        bundle, rec, why = kernel_record(manifest, args.bundles, e.kernel, unzip=False)
        sig_problems = []
        sig = rec.get("bundle_params") or rec.get("signature")
        if sig:
            sig_problems = check_signature(e, sig)
            problems += sig_problems
        variants = rec.get("variants") or []
        conds = rec.get("conditions") or []
        cands = 0
        for _, cfg in variants:
            names = dict(e.scalar_args())
            names.update(suite.parse_config(cfg))
            try:
                if all(suite.eval_condition(c, names) for c in conds):
                    cands += 1
            except Exception:
                cands = -1
                break
        if e.bound == "memory":
            size = ("%.3g GB" % (e.bytes / 1e9)) if e.bytes >= 1e9 else ("%.3g MB" % (e.bytes / 1e6))
        else:
            size = ("%.3g TFLOP" % (e.flops / 1e12)) if e.flops >= 1e12 else ("%.3g GFLOP" % (e.flops / 1e9))
        kiln = os.path.basename(bundle) if bundle else why
        rows.append([e.kernel, e.shape_str, e.dtype, e.bound, size,
                     "%s of %d" % (cands if cands >= 0 else "?", len(variants)) if variants else DASH,
                     kiln[:70] + ("" if not sig_problems else " SIGNATURE MISMATCH"),
                     e.triton_name, e.torch_name])
    print(markdown_table(["kernel", "shape", "dtype", "bound", "moves / computes",
                          "Kiln candidates", "Kiln bundle", "Triton", "torch"], rows))
    for p in problems:
        print("PROBLEM:", p)
    print("\nthe table the run prints last (skeleton):\n")
    skeleton = [Result(e) for e in plan]
    print(markdown_table(MAIN_HEADERS, main_rows(skeleton, None)))
    return 1 if problems else 0


# --- torch side: inputs, references, implementations ----------------------------

class Case:
    """Inputs, float64 references and the three implementations of one entry.
    Each implementation is fn(out) -> {output name: tensor}; alloc() gives a
    fresh `out`; reset(out) restores in-place outputs before a check."""

    def __init__(self, e, T, device, tk, seed, triton_configs):
        import torch.nn.functional as F
        self.e = e
        self.T = T
        dtypes = {"f32": T.float32, "bf16": T.bfloat16, "f16": T.float16}
        dt = dtypes[e.dtype]
        g = T.Generator(device=device)
        g.manual_seed(seed)
        s = e.shape

        def randn(*shape, dtype=dt):
            return T.randn(*shape, generator=g, device=device, dtype=dtype)

        def empty(*shape, dtype=dt):
            return T.empty(*shape, device=device, dtype=dtype)

        cfg = (lambda name: triton_configs.get(name)) if triton_configs else (lambda name: None)
        self.reset = lambda out: None
        self.tol = {}

        if e.kernel == "vector_add":
            n = s["n"]
            x, y = randn(n), randn(n)
            self.alloc = lambda: {"z": empty(n)}
            self.kiln_values = lambda o: {"x": x, "y": y, "z": o["z"], "n": n}
            self.reference = lambda: {"z": x.double() + y.double()}
            self.torch_fn = lambda o: {"z": T.add(x, y, out=o["z"])}
            self.triton_fn = lambda o: (tk.vector_add(x, y, o["z"], cfg("vector_add")), o)[1]
        elif e.kernel in ("axpy", "axpy_bf16"):
            n, a = s["n"], 0.5
            x, y0 = randn(n), randn(n)
            self.alloc = lambda: {"y": y0.clone()}
            self.reset = lambda o: o["y"].copy_(y0)
            self.kiln_values = lambda o: {"a": a, "x": x, "y": o["y"], "n": n}
            self.reference = lambda: {"y": a * x.double() + y0.double()}
            self.torch_fn = lambda o: {"y": o["y"].add_(x, alpha=a)}
            self.triton_fn = lambda o: (tk.axpy(a, x, o["y"], cfg("axpy")), o)[1]
        elif e.family == "softmax":
            rows, cols = s["rows"], s["cols"]
            x = randn(rows, cols)
            self.alloc = lambda: {"y": empty(rows, cols)}
            self.kiln_values = lambda o: {"x": x, "y": o["y"], "rows": rows, "cols": cols,
                                          "stride": cols}
            self.reference = lambda: {"y": T.softmax(x.double(), dim=-1)}
            self.torch_fn = lambda o: {"y": T.softmax(x, dim=-1)}
            self.triton_fn = lambda o: (tk.softmax(x, o["y"], cfg("softmax")), o)[1]
        elif e.kernel == "layer_norm":
            rows, cols, eps = s["rows"], s["cols"], 1e-5
            x = randn(rows, cols)
            w = T.rand(cols, generator=g, device=device, dtype=dt)
            b = T.rand(cols, generator=g, device=device, dtype=dt)
            self.alloc = lambda: {"y": empty(rows, cols), "mean": empty(rows, dtype=T.float32),
                                  "rstd": empty(rows, dtype=T.float32)}
            self.kiln_values = lambda o: {"x": x, "y": o["y"], "w": w, "b": b,
                                          "mean_out": o["mean"], "rstd_out": o["rstd"],
                                          "rows": rows, "cols": cols, "stride": cols, "eps": eps}

            def ref():
                xd = x.double()
                mean = xd.mean(dim=1)
                var = ((xd - mean[:, None]) ** 2).mean(dim=1)
                rstd = 1.0 / T.sqrt(var + eps)
                y = (xd - mean[:, None]) * rstd[:, None] * w.double() + b.double()
                return {"y": y, "mean": mean, "rstd": rstd}
            self.reference = ref
            # torch's F.layer_norm returns y only: its mean/rstd are not checked.
            self.torch_fn = lambda o: {"y": F.layer_norm(x, (cols,), w, b, eps)}
            self.triton_fn = lambda o: (tk.layer_norm(x, w, b, eps, o["y"], o["mean"], o["rstd"],
                                                      cfg("layer_norm")), o)[1]
        elif e.family == "row_reduce":
            rows, cols = s["rows"], s["cols"]
            x = randn(rows, cols)
            is_sum = e.kernel == "row_sum"
            self.alloc = lambda: {"out": empty(rows)}
            self.kiln_values = lambda o: {"x": x, "out": o["out"], "rows": rows, "cols": cols,
                                          "stride": cols}
            self.reference = lambda: {"out": x.double().sum(dim=1) if is_sum
                                      else x.double().amax(dim=1)}
            self.torch_fn = (lambda o: {"out": T.sum(x, dim=1)}) if is_sum else \
                (lambda o: {"out": T.amax(x, dim=1)})
            fn = tk.row_sum if (tk and is_sum) else (tk.row_max if tk else None)
            self.triton_fn = lambda o: (fn(x, o["out"], cfg(e.kernel)), o)[1]
        elif e.family == "matmul":
            M, N, K = s["M"], s["N"], s["K"]
            a, b = randn(M, K), randn(K, N)
            self.alloc = lambda: {"c": empty(M, N)}
            self.kiln_values = lambda o: {"a": a, "b": b, "c": o["c"], "M": M, "N": N, "K": K,
                                          "lda": K, "ldb": N, "ldc": N}
            self.reference = lambda: {"c": a.double() @ b.double()}
            self.torch_fn = lambda o: {"c": T.matmul(a, b)}
            mcfg = cfg("matmul_decode" if M <= 32 else "matmul")
            self.triton_fn = lambda o: (tk.matmul(a, b, o["c"], mcfg), o)[1]
        elif e.family == "attention":
            B, H, S, D, causal = s["batch"], s["heads"], s["seq"], s["head_dim"], s["causal"]
            q, k, v = randn(B, H, S, D), randn(B, H, S, D), randn(B, H, S, D)
            scale = 1.0 / math.sqrt(D)
            self.alloc = lambda: {"o": empty(B, H, S, D)}
            self.kiln_values = lambda o: {"q": q, "k": k, "v": v, "o": o["o"], "sm_scale": scale,
                                          "batch_heads": B * H, "seq": S, "head_dim": D,
                                          "stride_row": D, "causal": int(causal)}

            def ref():
                out = T.empty(B * H, S, D, device=device, dtype=T.float64)
                qf, kf, vf = (t.reshape(B * H, S, D) for t in (q, k, v))
                mask = T.ones(S, S, dtype=T.bool, device=device).triu(1) if causal else None
                chunk = max(1, (1 << 27) // (S * S))   # <= 1 GiB of f64 scores at a time
                for i in range(0, B * H, chunk):
                    sc = qf[i:i + chunk].double() @ kf[i:i + chunk].double().transpose(1, 2) * scale
                    if mask is not None:
                        sc.masked_fill_(mask, float("-inf"))
                    out[i:i + chunk] = T.softmax(sc, dim=-1) @ vf[i:i + chunk].double()
                    del sc
                return {"o": out.reshape(B, H, S, D)}
            self.reference = ref
            self.torch_fn = lambda o: {"o": F.scaled_dot_product_attention(
                q, k, v, is_causal=bool(causal), scale=scale)}
            self.triton_fn = lambda o: (tk.attention(q, k, v, o["o"], scale, causal,
                                                     cfg("attention")), o)[1]
        else:
            raise KeyError(e.kernel)

    def compare(self, outs, refs, require_all=True):
        """(ok, worst error, output, text) over every reference output:
        the normwise relative error ||got - ref|| / ||ref|| (METHOD.md's
        measure; a maximum over tens of millions of elements of the
        elementwise error exceeds any fixed bound by chance alone, for
        torch and Triton as much as for Kiln); NaN never passes.
        require_all=False: only the outputs `outs` has (torch's layer_norm
        returns y, not mean and rstd)."""
        T = self.T
        worst_ratio, worst = -1.0, (True, 0.0, None, "ok")
        for name, ref in refs.items():
            got = outs.get(name)
            if got is None:
                if not require_all:
                    continue
                return (False, None, name, "no output %s" % name)
            g = got.reshape(-1)
            r = ref.reshape(-1)
            if g.numel() != r.numel():
                return (False, None, name, "%s has %d elements, expected %d" % (name, g.numel(), r.numel()))
            tol = suite.TOLERANCE["f32" if got.dtype == T.float32 else
                                  ("bf16" if got.dtype == T.bfloat16 else "f16")]
            chunk = 1 << 24
            sq, sd, nan = 0.0, 0.0, False
            for i in range(0, r.numel(), chunk):
                gc = g[i:i + chunk].double()
                rc = r[i:i + chunk]
                if bool(T.isnan(gc).any()):
                    nan = True
                    break
                sq += float((rc ** 2).sum())
                sd += float(((gc - rc) ** 2).sum())
            err = math.sqrt(sd / sq) if sq > 0 else math.sqrt(sd)
            if nan:
                return (False, float("nan"), name, "NaN (%s)" % name)
            ratio = err / tol if err == err else float("inf")
            if ratio > worst_ratio:
                worst_ratio = ratio
                ok = err <= tol
                worst = (ok, err, name, ("ok %s" % fmt_err(err)) if ok else
                         "FAIL %s > %.0e (%s)" % (fmt_err(err), tol, name))
        return worst


# --- timing -------------------------------------------------------------------

def choose_reps(est_ms, args):
    if args.reps:
        return args.reps, max(1, args.warmup)
    est = max(est_ms, 1e-3)
    reps = int(min(args.max_reps, max(args.min_reps, args.rep_ms / est)))
    warm = int(min(50, max(args.warmup, 25.0 / est)))
    return reps, warm


class TorchTimer:
    """CUDA events on torch's current stream, a flush before every repeat."""

    def __init__(self, T, flush_bytes, cuda):
        self.T = T
        self.cuda = cuda
        self.flush = T.empty(flush_bytes, dtype=T.uint8, device="cuda") if cuda else None

    def sync(self):
        if self.cuda:
            self.T.cuda.synchronize()

    def run(self, fn, reps, warmup):
        T = self.T
        for _ in range(warmup):
            fn()
        self.sync()
        if not self.cuda:
            times = []
            for _ in range(reps):
                t0 = time.perf_counter()
                fn()
                times.append((time.perf_counter() - t0) * 1e3)
            return times
        starts = [T.cuda.Event(enable_timing=True) for _ in range(reps)]
        ends = [T.cuda.Event(enable_timing=True) for _ in range(reps)]
        for i in range(reps):
            self.flush.zero_()
            starts[i].record()
            fn()
            ends[i].record()
        T.cuda.synchronize()
        return [s.elapsed_time(e) for s, e in zip(starts, ends)]


class KilnTimer:
    """Kiln events on Kiln's stream, a kiln_fill flush before every repeat."""
    BATCH = 128

    def __init__(self, dev, stream, flush_bytes, flush):
        self.stream = stream
        self.flush_bytes = flush_bytes
        self.flush = dev.alloc(flush_bytes) if flush else None
        self.events = [(dev.create_event(), dev.create_event()) for _ in range(self.BATCH)]

    def sync(self):
        self.stream.synchronize()

    def run(self, fn, reps, warmup):
        for _ in range(warmup):
            fn()
        self.stream.synchronize()
        times = []
        while len(times) < reps:
            n = min(self.BATCH, reps - len(times))
            for i in range(n):
                if self.flush is not None:
                    self.stream.fill(self.flush, 0, self.flush_bytes)
                self.stream.record(self.events[i][0])
                fn()
                self.stream.record(self.events[i][1])
            self.stream.synchronize()
            times += [self.events[i][0].elapsed_ms(self.events[i][1]) for i in range(n)]
        return times


def measure(timer, fn, args, reps=None):
    """(median ms, repeats) with warm-up; the repeat count from a short
    estimate unless given."""
    if reps is None:
        est = statistics.median(timer.run(fn, 3, 1))
        reps, warm = choose_reps(est, args)
    else:
        warm = 2
    times = timer.run(fn, reps, warm)
    return statistics.median(times), len(times)


# --- the run ---------------------------------------------------------------------

def is_fatal(exc):
    if isinstance(exc, KilnError):
        return exc.status == kiln_c.KILN_ERROR_KERNEL_TRAPPED or "cannot be used any more" in exc.message
    text = str(exc)
    return any(s in text for s in ("illegal memory access", "unspecified launch failure",
                                   "device-side assert", "CUDA error: misaligned address",
                                   "an illegal instruction"))


class Suite:
    def __init__(self, args, plan, manifest):
        self.args = args
        self.plan = plan
        self.manifest = manifest
        self.results = [Result(e) for e in plan]
        self.ceilings = {}
        self.info = {}
        self.fatal = None
        self.current = None
        self.progress = time.monotonic()
        self.modules = {}

    def log(self, msg):
        print(msg, flush=True)

    # -- setup --
    def setup(self):
        args = self.args
        self.cuda = args.device != "host"
        if args.triton_interpret:
            os.environ["TRITON_INTERPRET"] = "1"
        import torch as T
        self.T = T
        if self.cuda:
            if not T.cuda.is_available():
                raise SystemExit("run_suite: torch sees no CUDA device (use --dry-run or --device host)")
            T.cuda.init()
            T.empty(1, device="cuda")  # the primary context, before Kiln retains it
            props = T.cuda.get_device_properties(0)
            l2 = getattr(props, "L2_cache_size", 0) or 64 << 20
            self.flush_bytes = max(2 * l2, args.flush_mb << 20)
            self.info.update(card=T.cuda.get_device_name(0), l2_bytes=l2,
                             sms=props.multi_processor_count,
                             memory_gib=round(props.total_memory / 2**30, 1))
        else:
            self.flush_bytes = 0
            self.info.update(card="host", l2_bytes=0)
        self.tk = None
        if not args.no_triton and (self.cuda or args.triton_interpret):
            try:
                import triton
                import triton_kernels
                self.tk = triton_kernels
                self.info["triton"] = triton.__version__
            except Exception as e:  # Triton missing or broken: run without it
                self.info["triton"] = "unavailable: %s" % e
                self.log("Triton unavailable: %s" % e)
        self.info["torch"] = T.__version__
        self.triton_configs = None
        if args.triton_interpret and self.tk:
            self.triton_configs = self.tk.SMALL_CONFIGS

        problems, checked = kiln_c.abi_self_check(args.header, (self.manifest or {}).get("abi"))
        if problems:
            for p in problems:
                self.log("ABI MISMATCH: " + p)
            raise SystemExit("run_suite: the ctypes bindings do not match %s; refusing to launch" % args.header)
        self.log("ABI self-check: ok (%s)" % "; ".join(checked))
        self.rt = kiln_c.Runtime(args.lib)
        self.dev = self.rt.open_device(args.kiln_device or ("cuda" if self.cuda else "host"))
        self.stream = self.dev.create_stream()
        self.info["kiln_device"] = self.dev.description
        self.log("Kiln device: %s" % self.dev.description)
        self.torch_dev = "cuda" if self.cuda else "cpu"
        self.ttimer = TorchTimer(T, self.flush_bytes, self.cuda)
        self.ktimer = KilnTimer(self.dev, self.stream, self.flush_bytes, self.cuda)
        self.log("torch %s, Triton %s, %s; L2 flush %d MiB; seed %d" % (
            T.__version__, self.info.get("triton", "off"), self.info["card"],
            self.flush_bytes >> 20, args.seed))

    def measure_ceilings(self):
        if not self.cuda:
            return
        T = self.T
        n = 1 << 28  # 1 GiB of f32 each way
        src = T.randn(n, device="cuda")
        dst = T.empty_like(src)
        ms, reps = measure(self.ttimer, lambda: dst.copy_(src), self.args)
        self.ceilings["copy_Bps"] = 2 * n * 4 / (ms / 1e3)
        self.ceilings["copy_ms"] = ms
        del src, dst
        m = 8192
        a = T.randn(m, m, device="cuda", dtype=T.bfloat16)
        b = T.randn(m, m, device="cuda", dtype=T.bfloat16)
        c = T.empty(m, m, device="cuda", dtype=T.bfloat16)
        ms, reps = measure(self.ttimer, lambda: T.matmul(a, b, out=c), self.args)
        self.ceilings["mm_flops"] = 2 * m ** 3 / (ms / 1e3)
        self.ceilings["mm_ms"] = ms
        del a, b, c
        T.cuda.empty_cache()
        self.log("ceilings: device copy %.0f GB/s (read + write), bf16 8192^3 matmul %.0f TFLOP/s" % (
            self.ceilings["copy_Bps"] / 1e9, self.ceilings["mm_flops"] / 1e12))

    # -- Kiln --
    def kiln_module(self, path):
        if path not in self.modules:
            self.modules[path] = self.dev.load_module(path)
        return self.modules[path]

    def config_for(self, kernel):
        chosen = None
        for c in self.args.config or []:
            m = re.match(r"(\w+):(.*)", c)
            if m and "=" not in m.group(1):
                if m.group(1) == kernel:
                    chosen = m.group(2)
            elif chosen is None:
                chosen = c
        return chosen

    def bind(self, entry, values):
        T = self.T
        elem = {"f32": kiln_c.KILN_TYPE_F32, "bf16": kiln_c.KILN_TYPE_BF16,
                "f16": kiln_c.KILN_TYPE_F16}
        tdt = {"f32": T.float32, "bf16": T.bfloat16, "f16": T.float16}
        out = []
        for name, kind in entry.kiln_params():
            v = values[name]
            if kind.startswith("*"):
                if v.dtype != tdt[kind[1:]] or not v.is_contiguous() or v.device.type != self.torch_dev:
                    raise RuntimeError("argument %s: expected a contiguous %s tensor on %s, got %s %s" % (
                        name, kind[1:], self.torch_dev, v.dtype, v.device))
                out.append(kiln_c.arg_pointer(v.data_ptr(), elem[kind[1:]]))
            elif kind == "i32":
                out.append(kiln_c.arg_i32(int(v)))
            elif kind == "f32":
                out.append(kiln_c.arg_f32(float(v)))
            else:
                raise RuntimeError("unsupported parameter kind %s" % kind)
        return kiln_c.make_args(out)

    def run_kiln(self, r, case, refs):
        e = r.entry
        bundle, rec, why = kernel_record(self.manifest, self.args.bundles, e.kernel)
        if bundle is None:
            r.ms["Kiln"] = "n/a"
            r.kiln_refusal = why
            r.notes.append("Kiln: " + why)
            return
        kernel = self.kiln_module(bundle).kernel(e.kernel)
        problems = check_signature(e, params_from_runtime(kernel))
        if problems:
            r.ms["Kiln"] = "signature"
            r.notes += problems
            return
        out = case.alloc()
        argv, nargs = self.bind(e, case.kiln_values(out))
        variants = kernel.variants()
        r.kiln_variants_total = len(variants)
        config = self.config_for(e.kernel)
        if config:
            tries = [(None, kiln_c.Kernel.options(config=config))]
        else:
            tries = [(i, kiln_c.Kernel.options(variant=i)) for i, _, _ in variants]
        candidates = []
        for i, opt in tries:
            try:
                info = kernel.plan(argv, nargs, opt)
                candidates.append((info.variant, opt))
            except KilnError as err:
                if r.kiln_refusal is None or config:
                    r.kiln_refusal = err.message
        r.kiln_candidates = len(candidates)
        if not candidates:
            r.ms["Kiln"] = "no variant"
            r.notes.append("Kiln: no variant can run: %s" % r.kiln_refusal)
            return
        names = {i: (n, c) for i, n, c in variants}
        checked = []
        for vi, opt in candidates:
            launch = (lambda o=opt: kernel.launch(self.stream, argv, nargs, o))
            cfg = names[vi][1]
            try:
                self.ttimer.sync()
                case.reset(out)
                self.ttimer.sync()
                launch()  # loads the code object (and JIT-compiles PTX)
                self.stream.synchronize()
                case.reset(out)
                self.ttimer.sync()
                # the checked launch, timed once (no flush) to rank variants
                ev0, ev1 = self.ktimer.events[0]
                self.stream.record(ev0)
                launch()
                self.stream.record(ev1)
                self.stream.synchronize()
                once = ev0.elapsed_ms(ev1)
            except KilnError as err:
                if is_fatal(err):
                    raise Fatal("Kiln %s (%s): %s" % (e.kernel, cfg, err))
                r.kiln_failed.append((cfg, "launch: " + err.message[:200]))
                continue
            c = case.compare(out, refs)
            if not c[0]:
                r.kiln_failed.append((cfg, c[3]))
            checked.append((vi, opt, launch, c, once))
            self.progress = time.monotonic()
        if not checked:
            r.ms["Kiln"] = "error"
            r.notes.append("Kiln: every candidate failed to launch: %s" % r.kiln_failed[0][1])
            return
        pool = [x for x in checked if x[3][0]] or checked
        # Screen only the variants whose single launch was within 2x of the
        # fastest single launch (a slow variant is not worth 10 repeats).
        fastest = min(x[4] for x in pool)
        pool = [x for x in pool if x[4] <= 2 * fastest + 0.005]
        best = pool[0]
        if len(pool) > 1:
            screened = []
            for x in pool:
                ms, _ = measure(self.ktimer, x[2], self.args, reps=self.args.screen_reps)
                screened.append((ms, x))
                self.progress = time.monotonic()
            screened.sort(key=lambda t: t[0])
            best = screened[0][1]
        vi, opt, launch, c, _ = best
        # the reported check is the chosen variant's; failures of others are listed
        r.checks["Kiln"] = c
        r.kiln_failed = [f for f in r.kiln_failed if f[0] != names[vi][1]]
        r.kiln_variant = "%s (%s)" % (names[vi][0], names[vi][1])
        r.kiln_resources = resources_text(rec, vi)
        ms, reps = measure(self.ktimer, launch, self.args)
        r.ms["Kiln"] = ms
        r.reps["Kiln"] = reps

    # -- torch and Triton --
    def run_torch_side(self, r, case, refs, impl):
        fn = case.triton_fn if impl == "Triton" else case.torch_fn
        out = case.alloc()
        self.ttimer.sync()
        fn(out)              # Triton: autotunes and compiles here
        self.ttimer.sync()
        case.reset(out)
        self.ttimer.sync()
        got = fn(out)
        self.ttimer.sync()
        r.checks[impl] = case.compare(got, refs, require_all=impl != "torch")
        if impl == "Triton":
            r.triton_config = self.tk.best_config(
                {"vector": "vector_add" if r.entry.kernel == "vector_add" else "axpy",
                 "softmax": "softmax", "layer_norm": "layer_norm",
                 "row_reduce": r.entry.kernel, "matmul": "matmul",
                 "attention": "attention"}[r.entry.family])
            if self.triton_configs:
                r.triton_config = "fixed (interpreter)"
        ms, reps = measure(self.ttimer, lambda: fn(out), self.args)
        r.ms[impl] = ms
        r.reps[impl] = reps

    def run_entry(self, r):
        e = r.entry
        T = self.T
        seed = e.seed(self.args.seed)
        case = Case(e, T, self.torch_dev, self.tk, seed, self.triton_configs)
        self.ttimer.sync()
        refs = case.reference()
        self.ttimer.sync()
        impls = [("Kiln", self.run_kiln)]
        if self.tk is not None:
            impls.append(("Triton", lambda r_, c_, f_: self.run_torch_side(r_, c_, f_, "Triton")))
        else:
            r.ms["Triton"] = "off"
        if not self.args.no_torch:
            impls.append(("torch", lambda r_, c_, f_: self.run_torch_side(r_, c_, f_, "torch")))
        for name, fn in impls:
            if name != "Kiln" and self.args.kiln_only:
                continue
            try:
                fn(r, case, refs)
            except Fatal:
                raise
            except Exception as exc:
                if is_fatal(exc):
                    raise Fatal("%s %s: %s" % (name, e.kernel, exc))
                r.ms[name] = "error"
                r.notes.append("%s: %s" % (name, str(exc).splitlines()[0][:300] if str(exc) else repr(exc)))
                if self.args.verbose:
                    traceback.print_exc()
            self.progress = time.monotonic()
        del case, refs
        if self.cuda:
            T.cuda.empty_cache()

    def run(self):
        self.setup()
        self.measure_ceilings()
        for idx, r in enumerate(self.results):
            e = r.entry
            self.current = e
            self.progress = time.monotonic()
            if self.fatal:
                r.ms = {i: "not run" for i in IMPLS}
                continue
            t0 = time.monotonic()
            try:
                self.run_entry(r)
            except Fatal as f:
                self.fatal = "%s (at %s %s)" % (f, e.kernel, e.shape_str)
                r.notes.append("FATAL: %s" % f)
                self.log("FATAL: %s; the CUDA context is lost, the remaining entries are not run" % f)
            self.log("[%d/%d] %-13s %-22s %-4s Kiln %s (%s) | Triton %s | torch %s | %s  [%.1f s]" % (
                idx + 1, len(self.results), e.kernel, e.shape_str, e.dtype, fmt_ms(r.ms["Kiln"]),
                r.kiln_variant or r.kiln_refusal or DASH, fmt_ms(r.ms["Triton"]),
                fmt_ms(r.ms["torch"]), check_text(r), time.monotonic() - t0))
        self.current = None


# --- output ------------------------------------------------------------------------

def slug(text):
    text = text.lower().replace("nvidia", "")
    return re.sub(r"[^a-z0-9]+", "-", text).strip("-") or "gpu"


def report(s, args, manifest):
    """The markdown report; returns its text."""
    commit = (manifest or {}).get("commit", {})
    c = s.ceilings
    lines = ["# Kiln vs Triton vs torch: %s, %s" % (s.info.get("card"), datetime.date.today().isoformat()),
             "",
             "- Kiln device: %s" % s.info.get("kiln_device"),
             "- commit: %s (%s); bundles built %s for %s" % (
                 commit.get("label", "unknown"), (manifest or {}).get("kiln_version", "?"),
                 (manifest or {}).get("created", "?"), (manifest or {}).get("targets", "?")),
             "- torch %s, Triton %s, Python %s" % (s.info.get("torch"), s.info.get("triton", "off"),
                                                    sys.version.split()[0]),
             "- seed %d; %s shapes; L2 flush %d MiB before every repeat; the median of %s; "
             "Kiln variants screened with %d repeats each" % (
                 args.seed, "quick" if args.quick else ("host" if args.device == "host" else "PERF.md"),
                 s.flush_bytes >> 20,
                 ("%d repeats" % args.reps) if args.reps else
                 "enough repeats for about %d ms of kernel time (%d to %d)" % (
                     args.rep_ms, args.min_reps, args.max_reps), args.screen_reps),
             ]
    if c:
        lines.append("- ceilings (this run): device-to-device copy %.0f GB/s counting read + write "
                     "(1 GiB, %.3f ms); bf16 8192^3 torch.matmul %.0f TFLOP/s (%.3f ms)" % (
                         c["copy_Bps"] / 1e9, c["copy_ms"], c["mm_flops"] / 1e12, c["mm_ms"]))
    if s.fatal:
        lines.append("- **stopped early**: %s" % s.fatal)
    lines += ["", "Ratios are speeds: Kiln/Triton = t_Triton / t_Kiln (> 1: Kiln is faster). "
              "ceiling ms: the bytes at the copy bandwidth (memory-bound rows) or the FLOPs at the "
              "bf16 matmul rate (matrix rows); % of ceiling = ceiling ms / Kiln ms. check: every "
              "result against float64, ||got - ref|| / ||ref|| (normwise), f32 outputs 1e-4, "
              "bf16/f16 outputs 1e-2; NaN never passes.", "",
              "## Details", "", markdown_table(DETAIL_HEADERS, detail_rows(s.results)), ""]
    notes = []
    for r in s.results:
        for n in r.notes:
            notes.append("- %s %s %s: %s" % (r.entry.kernel, r.entry.shape_str, r.entry.dtype, n))
        for cfg, text in r.kiln_failed:
            notes.append("- %s %s %s: Kiln variant %s: %s" % (r.entry.kernel, r.entry.shape_str,
                                                             r.entry.dtype, cfg, text))
    if manifest:
        ptx_only = sorted(k for k, rec in manifest.get("kernels", {}).items()
                          if rec.get("status") == "ok" and not rec.get("ptxas", True))
        refused = next((rec.get("refused_by_runtime") for rec in manifest.get("kernels", {}).values()
                        if rec.get("refused_by_runtime")), None)
        if ptx_only:
            notes.append("- bundles: %s carry PTX only (no cubin), JIT-compiled by the driver at the first "
                         "launch%s" % (", ".join(ptx_only), "; the runtime refused the PTX + cubin "
                                       "bundles: %s" % refused if refused else ""))
        for k, rec in manifest.get("kernels", {}).items():
            if rec.get("status") != "ok":
                err = (rec.get("error") or "").splitlines()
                notes.append("- bundle: %s did not compile: %s" % (k, err[0] if err else "?"))
    if notes:
        lines += ["## Notes", ""] + notes + [""]
    lines += ["## Results", "", markdown_table(MAIN_HEADERS, main_rows(s.results, s.ceilings)), ""]
    return "\n".join(lines)


def results_path(s, args, manifest):
    if args.out:
        return args.out
    d = args.results_dir
    if not d:
        parent = os.path.dirname(HERE)
        d = os.path.join(parent, "results") if os.path.basename(parent) == "bench" else \
            os.path.join(os.getcwd(), "results")
    commit = (manifest or {}).get("commit", {}).get("label", "unknown")
    base = "%s-%s-%s%s%s" % (slug(s.info.get("card", "gpu")), datetime.date.today().isoformat(),
                             commit, "-quick" if args.quick else "",
                             ("-" + slug(args.only)[:40]) if args.only else "")
    path = os.path.join(d, base + ".md")
    n = 2
    while os.path.exists(path):
        path = os.path.join(d, "%s-%d.md" % (base, n))
        n += 1
    return path


def write_outputs(s, args, manifest):
    text = report(s, args, manifest)
    if args.device == "host" and not args.out and not args.results_dir:
        return text, None
    if args.no_write:
        return text, None
    path = results_path(s, args, manifest)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as fh:
        fh.write(text)
    with open(os.path.splitext(path)[0] + ".json", "w") as fh:
        json.dump({"info": s.info, "ceilings": s.ceilings, "fatal": s.fatal,
                   "commit": (manifest or {}).get("commit"), "seed": args.seed,
                   "args": vars(args), "results": [r.to_json() for r in s.results]},
                  fh, indent=1, default=str)
    return text, path


def watchdog(s, args):
    while True:
        time.sleep(5)
        if s.current is not None and time.monotonic() - s.progress > args.entry_timeout:
            s.fatal = "no progress for %d s in %s %s (hung kernel?)" % (
                args.entry_timeout, s.current.kernel, s.current.shape_str)
            print("WATCHDOG: %s; writing what was measured and exiting" % s.fatal, flush=True)
            try:
                text, path = write_outputs(s, args, s.manifest)
                print(text)
                if path:
                    print("written: %s" % path, flush=True)
            finally:
                os._exit(3)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--bundles", default=None,
                    help="build_bundles.py's folder (default: this script's folder if it holds "
                         "manifest.json, else build/bench-gpu)")
    ap.add_argument("--lib", default=None, help="libkiln_runtime.so (default: BUNDLES/libkiln_runtime.so)")
    ap.add_argument("--header", default=None, help="runtime_c.h for the ABI check "
                    "(default: BUNDLES/runtime_c.h, else the repository's)")
    ap.add_argument("--only", default="", help="comma-separated kernels or families "
                    "(vector_add, axpy, softmax, layer_norm, row_reduce, row_sum, matmul, matmul_ptr, attention, ...)")
    ap.add_argument("--quick", action="store_true", help="one small shape per kernel (a smoke run)")
    ap.add_argument("--config", action="append", metavar="[KERNEL:]P=V,...",
                    help="launch this Kiln variant instead of timing every candidate "
                         "(repeatable; KERNEL: limits it to one kernel)")
    ap.add_argument("--dry-run", action="store_true", help="plan, checks and the table skeleton; no torch, no GPU")
    ap.add_argument("--self-check", action="store_true", help="the ctypes/ABI self-check only")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cuda", choices=["cuda", "host"],
                    help="host: the CPU smoke test (Kiln host device, torch on CPU, tiny shapes)")
    ap.add_argument("--kiln-device", default=None, help="Kiln device spec (default: cuda, or host)")
    ap.add_argument("--triton-interpret", action="store_true",
                    help="TRITON_INTERPRET=1 with fixed small configs (for --device host)")
    ap.add_argument("--no-triton", action="store_true")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--kiln-only", action="store_true", help="only Kiln (checks and times)")
    ap.add_argument("--rep-ms", type=float, default=300.0,
                    help="target kernel time per measurement (default 300 ms)")
    ap.add_argument("--min-reps", type=int, default=25)
    ap.add_argument("--max-reps", type=int, default=500)
    ap.add_argument("--reps", type=int, default=0, help="fixed repeat count (overrides the three above)")
    ap.add_argument("--warmup", type=int, default=3, help="minimum warm-up launches")
    ap.add_argument("--screen-reps", type=int, default=10,
                    help="repeats per Kiln variant when choosing the fastest (default 10)")
    ap.add_argument("--flush-mb", type=int, default=256, help="minimum L2 flush size (default 256 MiB; "
                    "at least 2x the L2 is used)")
    ap.add_argument("--entry-timeout", type=int, default=900,
                    help="seconds without progress before the run is stopped (a hung kernel)")
    ap.add_argument("--results-dir", default=None, help="default: bench/results beside this script")
    ap.add_argument("--out", default=None, help="the report's path (overrides --results-dir)")
    ap.add_argument("--no-write", action="store_true", help="print only")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()

    if args.bundles is None:
        args.bundles = HERE if os.path.exists(os.path.join(HERE, "manifest.json")) else \
            os.path.join(os.path.dirname(os.path.dirname(HERE)), "build", "bench-gpu")
    if args.lib is None:
        args.lib = os.path.join(args.bundles, "libkiln_runtime.so")
    if args.header is None:
        cand = os.path.join(args.bundles, "runtime_c.h")
        repo_header = os.path.join(HERE, "..", "..", "runtime", "include", "kiln", "runtime_c.h")
        args.header = cand if os.path.exists(cand) else os.path.normpath(repo_header)
    manifest = load_manifest(args.bundles)

    if args.self_check:
        problems, checked = kiln_c.abi_self_check(args.header, (manifest or {}).get("abi"))
        for line in checked:
            print("checked:", line)
        for p in problems:
            print("MISMATCH:", p)
        print("ABI self-check:", "FAILED" if problems else "ok")
        return 1 if problems else 0

    mode = "host" if args.device == "host" else ("quick" if args.quick else "full")
    plan = suite.filter_plan(suite.build_plan(mode), args.only)
    if args.dry_run:
        return dry_run(plan, manifest, args)

    if manifest is None:
        print("warning: no manifest.json in %s: bundles found by file name, commit unknown" % args.bundles)
    s = Suite(args, plan, manifest)
    threading.Thread(target=watchdog, args=(s, args), daemon=True).start()
    try:
        s.run()
    except KeyboardInterrupt:
        s.fatal = "interrupted"
    text, path = write_outputs(s, args, manifest)
    print()
    print(text)
    if path:
        print("written: %s (and .json)" % path)
    failed = any(r.checks[i] is not None and not r.checks[i][0] for r in s.results for i in IMPLS) or \
        any(r.kiln_failed for r in s.results)
    return 3 if s.fatal else (1 if failed else 0)


if __name__ == "__main__":
    sys.exit(main())
