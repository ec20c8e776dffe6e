#!/usr/bin/env python3
"""Checks every AMD code object (hsaco) of a Kiln bundle without an AMD GPU.

Usage: hsaco_check.py BUNDLE --kiln KILN [--matrix KERNEL,...]
                       [--code-object 4|5] [--no-scratch]

For each image whose triple is amdgcn-amd-amdhsa (found with
`kiln inspect --json`, sliced out of the bundle at its offset):
  - llvm-readobj reads it as an AMDGPU ELF shared object (a valid code
    object) of code object version 5 (or --code-object's), and the
    manifest's `requires` says the same;
  - llvm-nm lists no undefined symbol (self-contained: no ockl, ocml or
    other device library);
  - llvm-objdump disassembles it for its arch; for the kernels named in
    --matrix (those with a `dot`), the disassembly has v_mfma (CDNA) or
    v_wmma (RDNA) instructions;
  - at variant 0 (the default variant) it uses no scratch memory; with
    --no-scratch, no image of any variant does (PERF.md: no kernel of the
    suite spills on gfx942).
Prints one line per image, `<entry> <arch> ok vgprs=.. agprs=.. sgprs=..
lds=.. scratch=.. matrix=N` or `<entry> <arch> FAILED: why`, then
`images: N` and `failed: N`. Exits 1 when any image fails.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile


def tool(name):
    for n in (name + "-22", name):
        p = shutil.which(n) or (os.path.join("/usr/lib/llvm-22/bin", name)
                                if os.path.exists(os.path.join("/usr/lib/llvm-22/bin", name)) else None)
        if p:
            return p
    sys.exit("hsaco_check.py: %s not found" % name)


def run(argv):
    r = subprocess.run(argv, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bundle")
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--matrix", default="", help="kernels that must use MFMA/WMMA")
    ap.add_argument("--code-object", type=int, default=5, choices=[4, 5])
    ap.add_argument("--no-scratch", action="store_true",
                    help="every image, not only the default variant's, without scratch")
    args = ap.parse_args()
    matrix = set(k for k in args.matrix.split(",") if k)
    readobj, nm, objdump = tool("llvm-readobj"), tool("llvm-nm"), tool("llvm-objdump")
    rc, out = run([args.kiln, "inspect", args.bundle, "--json"])
    if rc:
        sys.exit("kiln inspect failed: " + out)
    manifest = json.loads(out)
    resources = {}
    for k in manifest["kernels"]:
        for v in k.get("variants", []):
            for img in v.get("images", []):
                resources[(img.get("entry"), img.get("arch"))] = (
                    v.get("index"), img.get("resources", {}), img.get("requires", {}))
    data = open(args.bundle, "rb").read()
    images = [i for i in manifest["images"] if i["triple"] == "amdgcn-amd-amdhsa"]
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for img in images:
            entry, arch = img["entry"], img["arch"]
            path = os.path.join(tmp, entry + "-" + arch + ".hsaco")
            with open(path, "wb") as f:
                f.write(data[img["offset"]:img["offset"] + img["size"]])
            why = []
            rc, hdr = run([readobj, "--file-headers", "--notes", path])
            if rc or "EM_AMDGPU" not in hdr or "SharedObject" not in hdr:
                why.append("not an AMDGPU shared object")
            else:
                # ELFABIVERSION_AMDGPU_HSA_V4/V5 are 2/3; their metadata 1.1/1.2.
                abi, minor = {4: (2, 1), 5: (3, 2)}[args.code_object]
                if not re.search(r"ABIVersion: %d\b" % abi, hdr) or not re.search(
                        r"amdhsa\.version:\s*\n\s*-\s*1\s*\n\s*-\s*%d\b" % minor, hdr):
                    why.append("not code object version %d" % args.code_object)
            rc, undef = run([nm, "--undefined-only", path])
            if rc or undef.strip():
                why.append("undefined symbols: " + " ".join(undef.split()))
            rc, dis = run([objdump, "-d", "--mcpu=" + arch, path])
            if rc:
                why.append("llvm-objdump failed: " + dis[:200])
            count = len(re.findall(r"\bv_(?:mfma|wmma)_", dis))
            if img["kernel"] in matrix and count == 0:
                why.append("no v_mfma/v_wmma in a dot kernel")
            vi, res, req = resources.get((entry, arch), (None, {}, {}))
            if req.get("code_object") != args.code_object:
                why.append("the manifest requires code object %s" % req.get("code_object"))
            if isinstance(res, str):
                res = json.loads(res)
            if (vi == 0 or args.no_scratch) and res.get("scratch_bytes", 0) != 0:
                why.append("%s uses %d bytes of scratch" % (
                    "default variant" if vi == 0 else "variant %s" % vi, res["scratch_bytes"]))
            if why:
                failed += 1
                print("%s %s FAILED: %s" % (entry, arch, "; ".join(why)))
            else:
                print("%s %s ok vgprs=%s agprs=%s sgprs=%s lds=%s scratch=%s matrix=%d" % (
                    entry, arch, res.get("vgprs"), res.get("agprs"), res.get("sgprs"),
                    res.get("lds_bytes"), res.get("scratch_bytes"), count))
    print("images: %d" % len(images))
    print("failed: %d" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
