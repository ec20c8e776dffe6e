#!/usr/bin/env python3
"""Checks every variant of a multi-variant AMDGPU assembly file (`kiln
compile --emit=amdgcn` without --kernel/-D): splits it at the `// kernel
<entry> (...) for <arch>` lines that precede each variant and reads each
kernel's resources from its own directives and metadata. Given the LLVM IR
of `--emit=llvm` instead (`; kernel ...` lines), it checks each variant's
IR: an amdgpu_kernel, no declaration but LLVM intrinsics, and the MFMA/WMMA
intrinsics in the --matrix kernels (resources print as `-`).

Usage: amdgcn_variants.py FILE.s|FILE.ll [--matrix K1,K2,...]

Prints one line per variant,
`<entry> <arch> ok vgprs=N agprs=N sgprs=N scratch=N matrix=N` or the same
with FAILED and why, then `variants: N`, `with scratch: N` and
`failed: N`. A variant fails when its assembly lacks the kernel descriptor
or metadata, references a symbol it does not define (a call into a device
library; the dynamic LDS symbol kiln_shared is the one allowed external),
or, for the kernels named by --matrix (prefixes of the entry before
`_v<N>`), has no MFMA (CDNA) / WMMA (RDNA) instruction. Exits 1 when any
variant fails.
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "Inputs"))
from multivariant import split  # noqa: E402

IR_DECLARE = re.compile(r"^declare .*@([\w.$]+)\(")
IR_KERNEL = re.compile(r"^define amdgpu_kernel ")
IR_MATRIX = re.compile(r"@llvm\.amdgcn\.(mfma|wmma|smfmac)")
LABEL = re.compile(r"^([A-Za-z_.$][\w.$]*):")
REFERENCE = re.compile(r"\b([A-Za-z_][\w.$]*)@(?:rel32|gotpcrel32|gotpcrel|abs32|rel64)")
DIRECTIVES = {
    "scratch": re.compile(r"\.amdhsa_private_segment_fixed_size\s+(\d+)"),
    "vgprs": re.compile(r"^\s*\.vgpr_count:\s+(\d+)"),
    "agprs": re.compile(r"^\s*-?\s*\.agpr_count:\s+(\d+)"),
    "sgprs": re.compile(r"^\s*\.sgpr_count:\s+(\d+)"),
}
MATRIX = re.compile(r"^\s*(v_mfma|v_wmma|v_smfmac)")
ALLOWED_EXTERNAL = ("kiln_shared",)




def check_ir(variant, matrix_kernels):
    kernels, matrix, undefined = 0, 0, []
    for line in variant["lines"]:
        if IR_KERNEL.match(line):
            kernels += 1
        m = IR_DECLARE.match(line)
        if m and not m.group(1).startswith("llvm."):
            undefined.append(m.group(1))
        matrix += len(IR_MATRIX.findall(line)) if not line.startswith(
            "declare") else 0
    problems = []
    if kernels != 1:
        problems.append("%d amdgpu_kernel definitions" % kernels)
    if undefined:
        problems.append("undefined: " + ", ".join(sorted(undefined)))
    kernel = re.sub(r"_v\d+(_a16)?$", "", variant["entry"])
    if kernel in matrix_kernels and matrix == 0:
        problems.append("no MFMA/WMMA intrinsic")
    status = "FAILED (" + "; ".join(problems) + ")" if problems else "ok"
    return status, "vgprs=- agprs=- sgprs=- scratch=- matrix=%d" % matrix, 0


def check(variant, matrix_kernels):
    if variant["lines"] and variant["lines"][0].startswith(";"):
        return check_ir(variant, matrix_kernels)
    found, defined, referenced, matrix = {}, set(), set(), 0
    for line in variant["lines"]:
        if line.lstrip().startswith(("//", ";")):
            continue
        m = LABEL.match(line)
        if m:
            defined.add(m.group(1))
        for name in REFERENCE.findall(line):
            referenced.add(name)
        if MATRIX.match(line):
            matrix += 1
        for key, pattern in DIRECTIVES.items():
            m = pattern.search(line)
            if m and key not in found:
                found[key] = int(m.group(1))
    problems = []
    missing = [k for k in ("scratch", "vgprs", "sgprs") if k not in found]
    if missing:
        problems.append("no " + ", ".join(missing))
    undefined = sorted(n for n in referenced - defined
                       if not n.startswith(ALLOWED_EXTERNAL))
    if undefined:
        problems.append("undefined: " + ", ".join(undefined))
    kernel = re.sub(r"_v\d+(_a16)?$", "", variant["entry"])
    if kernel in matrix_kernels and matrix == 0:
        problems.append("no MFMA/WMMA instruction")
    found.setdefault("agprs", 0)
    text = "vgprs={vgprs} agprs={agprs} sgprs={sgprs} scratch={scratch}".format(
        **{k: found.get(k, "?") for k in ("vgprs", "agprs", "sgprs", "scratch")})
    status = "FAILED (" + "; ".join(problems) + ")" if problems else "ok"
    return status, text + " matrix=%d" % matrix, found.get("scratch", 0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("asm")
    parser.add_argument("--matrix", default="",
                        help="kernels whose variants must use MFMA/WMMA")
    args = parser.parse_args()
    matrix_kernels = {k for k in args.matrix.split(",") if k}
    variants = split(args.asm)
    failed = scratch = 0
    for v in variants:
        status, text, bytes_ = check(v, matrix_kernels)
        print("%s %s %s %s" % (v["entry"], v["arch"], status, text))
        failed += status != "ok"
        scratch += bytes_ > 0
    print("variants: %d" % len(variants))
    print("with scratch: %d" % scratch)
    print("failed: %d" % failed)
    return 1 if failed or not variants else 0


if __name__ == "__main__":
    sys.exit(main())
