#!/usr/bin/env python3
"""Checks that every host image of a .kpack bundle is self-contained: its
undefined symbols are only libc's allocation/memory functions and libm's
math functions, and it needs no library but libm (and libc).

Usage: check_host_images.py BUNDLE.kpack LLVM_NM LLVM_READOBJ
Prints one line per image: `entry: ok` or what is wrong."""
import os
import struct
import subprocess
import sys
import tempfile

LIBC = {"malloc", "free", "memcpy", "memset", "memmove"}
LIBM = {"expf", "exp2f", "logf", "log2f", "sinf", "cosf", "tanhf", "erff",
        "exp", "exp2", "log", "log2", "sin", "cos", "tanh", "erf", "fmaf",
        "fma", "sqrt", "sqrtf", "floorf", "ceilf", "floor", "ceil", "fmodf",
        "fmod"}


def images(data):
    off = 0
    while off < len(data):
        _, _, size, eoff, _ = struct.unpack_from("<4sIQQQ", data, off)
        kind, _, _, soff, nstr, ioff, isize = struct.unpack_from("<HHIQQQQ", data, off + eoff)
        strings = {}
        for i in range(nstr):
            k, v = struct.unpack_from("<QQ", data, off + soff + 16 * i)
            key = data[off + k:data.index(b"\0", off + k)].decode()
            strings[key] = data[off + v:data.index(b"\0", off + v)].decode()
        if strings.get("triple", "").startswith(("x86_64", "aarch64")):
            yield strings.get("kiln.entry", "?"), data[off + ioff:off + ioff + isize]
        off = (off + size + 7) // 8 * 8


def main():
    bundle, nm, readobj = sys.argv[1:4]
    data = open(bundle, "rb").read()
    bad = 0
    count = 0
    for entry, image in images(data):
        count += 1
        with tempfile.NamedTemporaryFile(suffix=".so", delete=False) as f:
            f.write(image)
            path = f.name
        try:
            out = subprocess.run([nm, "-D", "--undefined-only", "--format=just-symbols", path],
                                 capture_output=True, text=True, check=True).stdout
            needed = subprocess.run([readobj, "--needed-libs", path],
                                    capture_output=True, text=True, check=True).stdout
        finally:
            os.unlink(path)
        problems = []
        for sym in out.split():
            name = sym.split("@")[0]
            if name not in LIBC and name not in LIBM:
                problems.append("undefined " + sym)
        for line in needed.splitlines():
            line = line.strip()
            if line.startswith("lib") and line not in ("libm.so.6", "libc.so.6"):
                problems.append("needs " + line)
        print(entry + ": " + ("ok" if not problems else ", ".join(problems)))
        bad += bool(problems)
    print("%d images, %d with problems" % (count, bad))
    return 1 if bad or count == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
