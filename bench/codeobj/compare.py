#!/usr/bin/env python3
"""Kiln against Triton on code objects, with no GPU: AMD (gfx*) or NVIDIA (sm_*).

Compiles the PERF.md suite's kernels at the same tile sizes with Kiln
(`kiln compile --targets=ARCH`) and with Triton (`triton.compile` for
GPUTarget("hip", ARCH, 64) or GPUTarget("cuda", CC, 32), the kernels of
bench/gpu/triton_kernels.py), and prints, side by side, what each code
object uses. Both sides get the same promises: pointers 16-byte aligned and
integer arguments multiples of 16 (Triton's launch-time specialization;
Kiln's fast-path `_a16` image).

- AMD: VGPRs, AGPRs, SGPRs, LDS and scratch (the code objects' metadata
  notes), the MFMA count and the global/buffer load widths (`llvm-objdump`).
- NVIDIA: registers, local memory (spills), shared memory (`cuobjdump
  --dump-resource-usage`; shared counts both sides' dynamic shared memory),
  and from the SASS (`nvdisasm`): matrix instructions (HGMMA/HMMA), tensor
  copies (UTMALDG), asynchronous copies (LDGSTS), global loads by width,
  block barriers, warpgroup arrives and waits, and the instruction count.
  cuobjdump and nvdisasm come with Triton's wheel (its CUDA tools), as
  Triton's own ptxas does.

Usage (Triton from PyPI in a virtual environment, never a dependency):
  python3 -m venv /tmp/tvenv && /tmp/tvenv/bin/pip install triton
  /tmp/tvenv/bin/python bench/codeobj/compare.py [--arch gfx942|sm_90a] [--kiln build/bin/kiln] [--out FILE.md]
      [--only NAME] [--keep DIR]
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench", "gpu"))

# name, Kiln (file, kernel, -D), Triton (kernel attribute, signature, constexprs, warps, stages)
F32, BF16, F16 = "*fp32", "*bf16", "*fp16"
SUITE = [
    ("vector_add f32", ("vector_add", "vector_add", {"BLOCK": 1024, "warps": 4}),
     ("_vector_add_kernel", {"X": F32, "Y": F32, "Z": F32, "n": "i32"}, {"BLOCK": 1024}, 4, 2)),
    ("softmax f32", ("softmax", "softmax", {"BLOCK": 1024, "warps": 4}),
     ("_softmax_kernel", {"X": F32, "Y": F32, "rows": "i32", "cols": "i32", "stride": "i32"},
      {"BLOCK": 1024}, 4, 2)),
    ("softmax bf16", ("softmax", "softmax_bf16", {"BLOCK": 1024, "warps": 4}),
     ("_softmax_kernel", {"X": BF16, "Y": BF16, "rows": "i32", "cols": "i32", "stride": "i32"},
      {"BLOCK": 1024}, 4, 2)),
    ("layer_norm bf16", ("layer_norm", "layer_norm", {"BLOCK": 1024, "warps": 4}),
     ("_layer_norm_kernel", {"X": BF16, "Y": BF16, "W": BF16, "B": BF16, "Mean": F32, "Rstd": F32,
                             "rows": "i32", "cols": "i32", "stride": "i32", "eps": "fp32"},
      {"BLOCK": 1024}, 4, 2)),
    ("row_sum f32", ("row_reduce", "row_sum", {"BLOCK": 1024, "warps": 4}),
     ("_row_sum_kernel", {"X": F32, "Out": F32, "rows": "i32", "cols": "i32", "stride": "i32"},
      {"BLOCK": 1024}, 4, 2)),
    ("matmul f16 128x128x64", ("matmul", "matmul", {"BM": 128, "BN": 128, "BK": 64, "warps": 4, "stages": 3}),
     ("_matmul_kernel", {"A": F16, "B": F16, "C": F16, "M": "i32", "N": "i32", "K": "i32",
                         "lda": "i32", "ldb": "i32", "ldc": "i32"},
      {"BM": 128, "BN": 128, "BK": 64, "GROUP": 8}, 4, 2)),
    ("matmul bf16 128x128x64", ("matmul", "matmul_bf16", {"BM": 128, "BN": 128, "BK": 64, "warps": 4, "stages": 3}),
     ("_matmul_kernel", {"A": BF16, "B": BF16, "C": BF16, "M": "i32", "N": "i32", "K": "i32",
                         "lda": "i32", "ldb": "i32", "ldc": "i32"},
      {"BM": 128, "BN": 128, "BK": 64, "GROUP": 8}, 4, 2)),
    ("matmul f16 16x64x64 (decode)", ("matmul", "matmul", {"BM": 16, "BN": 64, "BK": 64, "warps": 4, "stages": 3}),
     ("_matmul_kernel", {"A": F16, "B": F16, "C": F16, "M": "i32", "N": "i32", "K": "i32",
                         "lda": "i32", "ldb": "i32", "ldc": "i32"},
      {"BM": 16, "BN": 64, "BK": 64, "GROUP": 8}, 4, 2)),
    # Not in PERF.md's suite: fp8. On gfx942 Kiln re-encodes OCP E4M3 for
    # the FNUZ MFMA and Triton is given FNUZ data (fp8e4b8); NVIDIA reads
    # OCP E4M3 (fp8e4nv) on both sides (FP8 below).
    ("matmul fp8 128x128x64 (extra)", ("bench/codeobj/matmul_fp8.tile", "matmul_fp8",
                                        {"BM": 128, "BN": 128, "BK": 64, "warps": 4, "stages": 2}),
     ("_matmul_kernel", {"A": "FP8", "B": "FP8", "C": F16, "M": "i32", "N": "i32",
                         "K": "i32", "lda": "i32", "ldb": "i32", "ldc": "i32"},
      {"BM": 128, "BN": 128, "BK": 64, "GROUP": 8}, 4, 2)),
    ("attention bf16 D64 128x64", ("attention", "attention_fwd",
                                   {"BLOCK_M": 128, "BLOCK_N": 64, "HEAD_DIM": 64, "CAUSAL": 0,
                                    "warps": 4, "stages": 2}),
     ("_attention_kernel", {"Q": BF16, "K": BF16, "V": BF16, "O": BF16, "sm_scale": "fp32",
                            "seq": "i32", "stride_bh": "i32", "stride_m": "i32"},
      {"HEAD_DIM": 64, "CAUSAL": 0, "BLOCK_M": 128, "BLOCK_N": 64}, 4, 2)),
    ("attention bf16 D128 causal 128x128 8 warps",
     ("attention", "attention_fwd",
      {"BLOCK_M": 128, "BLOCK_N": 128, "HEAD_DIM": 128, "CAUSAL": 1, "warps": 8, "stages": 2}),
     ("_attention_kernel", {"Q": BF16, "K": BF16, "V": BF16, "O": BF16, "sm_scale": "fp32",
                            "seq": "i32", "stride_bh": "i32", "stride_m": "i32"},
      {"HEAD_DIM": 128, "CAUSAL": 1, "BLOCK_M": 128, "BLOCK_N": 128}, 8, 2)),
]

def llvm_tool(name):
    for cand in (name + "-22", name, "/usr/lib/llvm-22/bin/" + name):
        p = shutil.which(cand) or (cand if os.path.exists(cand) else None)
        if p:
            return p
    sys.exit("compare.py: %s not found (Debian package llvm-22)" % name)


def by_width(counter, order):
    """'w:n w:n ...' in `order`, the rest summed as 'narrow:n'."""
    text = " ".join("%s:%d" % (w, counter[w]) for w in order if counter[w])
    rest = sum(c for w, c in counter.items() if w not in order)
    if rest:
        text += " narrow:%d" % rest
    return text or "-"


class Amd:
    """gfx* code objects: metadata notes and llvm-objdump's assembly."""
    image_kind = "object"
    NOTE_KEYS = {".vgpr_count": "vgprs", ".agpr_count": "agprs", ".sgpr_count": "sgprs",
                 ".group_segment_fixed_size": "shared", ".private_segment_fixed_size": "scratch"}
    columns = [("VGPRs", "vgprs"), ("AGPRs", "agprs"), ("SGPRs", "sgprs"), ("LDS", "shared"),
               ("scratch", "scratch"), ("MFMA", "mma")]
    legend = ("LDS in bytes (Kiln: its dynamic LDS), scratch in bytes, MFMA: v_mfma instructions "
              "in the code; loads: global/buffer load instructions by width.")

    def __init__(self, arch):
        self.arch = arch
        self.fp8 = "*fp8e4b8"

    def target(self):
        from triton.backends.compiler import GPUTarget
        return GPUTarget("hip", self.arch, 64)

    def triton_binary(self, compiled):
        return compiled.asm["hsaco"]

    def read(self, path):
        out = subprocess.run([llvm_tool("llvm-readobj"), "--notes", path],
                             capture_output=True, text=True, check=True).stdout
        res = {}
        for key, name in self.NOTE_KEYS.items():
            m = re.search(re.escape(key) + r":\s+(\d+)", out)
            res[name] = int(m.group(1)) if m else 0
        asm = subprocess.run([llvm_tool("llvm-objdump"), "-d", "--mcpu=" + self.arch, path],
                             capture_output=True, text=True, check=True).stdout
        res["mma"] = len(re.findall(r"\bv_(?:mfma|wmma)_\S+", asm))
        widths = collections.Counter(
            m.group(2) for m in re.finditer(
                r"\b(global|buffer)_load_(dword(?:x[234])?|b(?:32|64|96|128)|(?:u|s)?(?:byte|short)\S*)",
                asm))
        res["loads"] = by_width(widths, ["dwordx4", "b128", "dwordx3", "b96", "dwordx2", "b64",
                                         "dword", "b32"])
        return res


class Nvidia:
    """sm_* cubins: cuobjdump's resource usage and nvdisasm's SASS (the tools
    of Triton's wheel)."""
    image_kind = "cubin"
    columns = [("registers", "regs"), ("local", "local"), ("shared", "shared"),
               ("MMA", "mma"), ("TMA", "tma"), ("cp.async", "cpasync"), ("bar.sync", "bars"),
               ("wg arrive", "arrive"), ("wg wait", "depbar"), ("SASS", "sass")]
    legend = ("local: local-memory bytes (spills); shared in bytes (both sides' dynamic shared "
              "memory); MMA: HGMMA/QGMMA (wgmma) or HMMA/QMMA/IMMA (mma.sync) instructions; TMA, "
              "cp.async: UTMALDG, LDGSTS instructions; bar.sync: block barriers; wg arrive, "
              "wg wait: WARPGROUP.ARRIVE, WARPGROUP.DEPBAR; SASS: instructions in the kernel "
              "(NOPs not counted); loads: LDG instructions by width.")

    def __init__(self, arch):
        self.arch = arch
        self.cc = int(re.match(r"sm_(\d+)", arch).group(1))
        self.fp8 = "*fp8e4nv"
        import triton
        self.bin = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")

    def target(self):
        from triton.backends.compiler import GPUTarget
        return GPUTarget("cuda", self.cc, 32)

    def triton_binary(self, compiled):
        return compiled.asm["cubin"]

    def read(self, path):
        usage = subprocess.run([os.path.join(self.bin, "cuobjdump"), "--dump-resource-usage", path],
                               capture_output=True, text=True, check=True).stdout
        res = {}
        for key, name in (("REG", "regs"), ("LOCAL", "local"), ("SHARED", "shared")):
            m = re.search(r"\b%s:(\d+)" % key, usage)
            res[name] = int(m.group(1)) if m else 0
        sass = subprocess.run([os.path.join(self.bin, "nvdisasm"), "-c", path],
                              capture_output=True, text=True, check=True).stdout
        ops = collections.Counter()
        loads = collections.Counter()
        for m in re.finditer(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)((?:\.[A-Z0-9_]+)*)",
                             sass):
            op, mods = m.group(1), m.group(2)
            # WARPGROUP.ARRIVE and WARPGROUP.DEPBAR counted apart.
            ops[op + mods[:7] if op == "WARPGROUP" else op] += 1
            if op == "LDG":
                w = re.search(r"\.(128|64|U16|S16|U8|S8)\b", mods)
                loads[w.group(1) if w else "32"] += 1
        res["mma"] = sum(ops[o] for o in ("HGMMA", "QGMMA", "IGMMA", "HMMA", "QMMA", "IMMA"))
        res["tma"], res["cpasync"], res["bars"] = ops["UTMALDG"], ops["LDGSTS"], ops["BAR"]
        res["arrive"], res["depbar"] = ops["WARPGROUP.ARRIVE"], ops["WARPGROUP.DEPBAR"]
        res["sass"] = sum(c for op, c in ops.items() if op != "NOP")
        res["loads"] = by_width(loads, ["128", "64", "32"])
        return res


def vendor_for(arch):
    return Nvidia(arch) if arch.startswith("sm_") else Amd(arch)


def kiln_side(kiln, vendor, spec, tmp):
    file, kernel, consts = spec
    # A bare name is an examples/ file; a path is relative to the repository.
    src = os.path.join(ROOT, file) if "/" in file else os.path.join(ROOT, "examples", file + ".tile")
    defs = sum((["-D", "%s=%s" % kv] for kv in consts.items()), [])
    bundle = os.path.join(tmp, "k.kpack")
    subprocess.run([kiln, "compile", src, "--kernel", kernel, *defs, "--targets=" + vendor.arch,
                    "-o", bundle], check=True, capture_output=True, text=True)
    manifest = json.loads(subprocess.run([kiln, "inspect", bundle, "--json"], check=True,
                                         capture_output=True, text=True).stdout)
    images = [i for i in manifest["images"]
              if i["arch"] == vendor.arch and i["image_kind"] == vendor.image_kind]
    image = next((i for i in images if i["entry"].endswith("_a16")), images[0])
    data = open(bundle, "rb").read()
    path = os.path.join(tmp, "k.bin")
    with open(path, "wb") as f:
        f.write(data[image["offset"]:image["offset"] + image["size"]])
    res = vendor.read(path)
    # Kiln's shared memory is dynamic: the image's metadata has it.
    for k in manifest["kernels"]:
        for v in k["variants"]:
            for img in v["images"]:
                if img["entry"] == image["entry"] and img["arch"] == vendor.arch:
                    r = img["resources"]
                    res["shared"] = max(res["shared"], r.get("lds_bytes", r.get("shared_bytes", 0)))
    res["image"] = image["entry"]
    return res


def triton_side(vendor, spec, tmp):
    import triton
    from triton.compiler import ASTSource
    import triton_kernels as tk
    name, sig, consts, warps, stages = spec
    sig = {k: (vendor.fp8 if t == "FP8" else t) for k, t in sig.items()}
    signature = dict(sig)
    for k in consts:
        signature[k] = "constexpr"
    # Pointers 16-byte aligned, integers multiples of 16 (Triton's launch
    # specialization for such arguments).
    attrs = {}
    for i, (arg, ty) in enumerate(sig.items()):
        if ty.startswith("*") or ty == "i32":
            attrs[(i,)] = [["tt.divisibility", 16]]
    src = ASTSource(fn=getattr(tk, name), signature=signature, constexprs=consts, attrs=attrs)
    compiled = triton.compile(src, target=vendor.target(),
                              options={"num_warps": warps, "num_stages": stages})
    path = os.path.join(tmp, "t.bin")
    with open(path, "wb") as f:
        f.write(vendor.triton_binary(compiled))
    res = vendor.read(path)
    # Triton's shared memory is dynamic too: the launch gives metadata.shared bytes.
    res["shared"] = max(res["shared"], int(getattr(compiled.metadata, "shared", 0) or 0))
    return res


def keep(vendor, tmp, folder, name):
    """Copies the row's code objects (k.bin, t.bin) into `folder` under the
    row's name, with their SASS next to them on NVIDIA."""
    os.makedirs(folder, exist_ok=True)
    stem = re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_")
    for side in ("k", "t"):
        src = os.path.join(tmp, side + ".bin")
        if not os.path.exists(src):
            continue
        dst = os.path.join(folder, "%s.%s.bin" % (stem, "kiln" if side == "k" else "triton"))
        shutil.copyfile(src, dst)
        if isinstance(vendor, Nvidia):
            sass = subprocess.run([os.path.join(vendor.bin, "nvdisasm"), "-c", "-g", dst],
                                  capture_output=True, text=True).stdout
            with open(dst[:-4] + ".sass", "w") as f:
                f.write(sass)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--arch", default="gfx942", help="gfx942, gfx90a, ... or sm_90a, sm_80, ...")
    ap.add_argument("--kiln", default=os.path.join(ROOT, "build", "bin", "kiln"))
    ap.add_argument("--out", default=None, help="also write the table to this Markdown file")
    ap.add_argument("--only", default=None, help="only the rows whose name contains this")
    ap.add_argument("--keep", default=None, metavar="DIR",
                    help="keep both code objects of each row in DIR (and, for NVIDIA, their SASS)")
    args = ap.parse_args()
    import triton
    vendor = vendor_for(args.arch)
    rows = []
    for name, kspec, tspec in SUITE:
        if args.only and args.only not in name:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            try:
                k = kiln_side(args.kiln, vendor, kspec, tmp)
            except subprocess.CalledProcessError as e:
                k = {"error": (e.stderr or str(e)).strip().splitlines()[-1]}
            try:
                t = triton_side(vendor, tspec, tmp)
            except Exception as e:  # a Triton failure is reported, not fatal
                t = {"error": str(e).splitlines()[0] if str(e) else type(e).__name__}
            if args.keep:
                keep(vendor, tmp, args.keep, name)
        rows.append((name, k, t))
        print("%-30s done" % name, file=sys.stderr)

    def cell(r, key):
        return "error" if "error" in r else str(r.get(key, "-"))

    heads = [h for h, _ in vendor.columns]
    lines = ["# Kiln vs Triton %s on %s: code objects (no GPU)" % (triton.__version__, args.arch), "",
             "Each cell: Kiln / Triton. Same tile sizes; pointers 16-byte aligned and integers",
             "multiples of 16 on both sides. " + vendor.legend, "",
             "| kernel | " + " | ".join(heads) + " | Kiln loads | Triton loads |",
             "|---" * (len(heads) + 3) + "|"]
    for name, k, t in rows:
        cells = ["%s / %s" % (cell(k, c), cell(t, c)) for _, c in vendor.columns]
        lines.append("| %s | %s | %s | %s |" % (name, " | ".join(cells), cell(k, "loads"),
                                                cell(t, "loads")))
    errors = [(n, s, r["error"]) for n, k, t in rows for s, r in (("Kiln", k), ("Triton", t)) if "error" in r]
    if errors:
        lines += [""] + ["- %s (%s): %s" % e for e in errors]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
