#!/usr/bin/env python3
"""Checks every variant of a multi-variant PTX file (`kiln compile --emit=ptx`
without --kernel/-D): splits it at the `// kernel <entry> (...) for <arch>`
lines that precede each variant and assembles each one with ptxas.

Usage: ptx_variants.py FILE.ptx --ptxas PATH [--jobs N]

Prints one line per variant, `<entry> ok <registers> <spill bytes>` (plus
`wgmma advisories C75..` where ptxas serialized warpgroup instructions of a
variant that spills) or `<entry> FAILED`, followed by ptxas's messages, then
`variants: N`. A variant fails when ptxas rejects it, and when ptxas had to
serialize its warpgroup instructions (advisories C75xx naming wgmma or
warpgroup) although it does not spill. Exits 1 when any variant fails
(ptxas missing: exit 0 after printing the count only, the caller skips).
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "Inputs"))
from multivariant import split  # noqa: E402





def assemble(ptxas, variant, tmp):
    src = os.path.join(tmp, variant["entry"] + ".ptx")
    with open(src, "w") as f:
        f.writelines(variant["lines"])
    arch = variant["arch"]
    r = subprocess.run([ptxas, "-arch=" + arch, "-v", src, "-o", src + ".cubin"],
                       capture_output=True, text=True)
    out = r.stdout + r.stderr
    if r.returncode != 0:
        return variant["entry"], False, out
    regs = re.search(r"Used (\d+) registers", out)
    spills = sum(int(x) for x in re.findall(r"(\d+) bytes spill (?:stores|loads)", out))
    # ptxas's advisories about the warpgroup instructions: a wait or arrive
    # it had to inject, wgmma serialized. Forgiven where the variant spills
    # (it is out of registers anyway); anywhere else the code asks ptxas to
    # serialize what should overlap.
    advisories = sorted(set(re.findall(r"\((C75\d\d)\)[^\n]*(?:wgmma|warpgroup)", out)))
    text = "%s %d" % (regs.group(1) if regs else "?", spills)
    if advisories:
        text += " wgmma advisories " + ",".join(advisories)
        if spills == 0:
            return variant["entry"], False, text + "\n" + out
    return variant["entry"], True, text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ptx")
    ap.add_argument("--ptxas", default="")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    variants = split(args.ptx)
    bad = 0
    if args.ptxas and os.path.exists(args.ptxas):
        with tempfile.TemporaryDirectory() as tmp, \
                concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            for entry, ok, text in pool.map(lambda v: assemble(args.ptxas, v, tmp), variants):
                if ok:
                    print(entry, "ok", text)
                else:
                    bad += 1
                    print(entry, "FAILED")
                    print(text)
    print("variants:", len(variants))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
