#!/usr/bin/env python3
"""Inputs and float64 references for test/e2e/kiln-run.test, with the
standard library only (.npy files written and read by hand, no numpy).

  npy_ref.py gen CASE DIR     write the inputs of CASE into DIR (random,
                              seeded from the OS; outputs poisoned with NaN)
  npy_ref.py check CASE DIR   compare DIR/out/*.npy with the float64
                              reference computed from DIR/*.npy
CASE: vector_add, softmax, matmul, axpy_bf16.
"""
import array
import ast
import math
import os
import random
import struct
import sys

DTYPES = {"<f4": "f", "<f2": "e", "<i4": "i", "<u2": "H"}


def write_npy(path, descr, shape, values):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d, " % d for d in shape) if len(shape) != 1 else "%d," % shape[0])
    total = 10 + len(header) + 1
    header += " " * ((64 - total % 64) % 64) + "\n"
    fmt = "<" + DTYPES[descr][-1] * len(values)
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode("latin1"))
        f.write(struct.pack(fmt, *values))


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:6] == b"\x93NUMPY", path
    major = data[6]
    if major == 1:
        hlen = struct.unpack("<H", data[8:10])[0]
        start = 10
    else:
        hlen = struct.unpack("<I", data[8:12])[0]
        start = 12
    header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
    assert not header["fortran_order"]
    count = 1
    for d in header["shape"]:
        count *= d
    code = DTYPES[header["descr"]]
    body = data[start + hlen:]
    return header["descr"], header["shape"], list(
        struct.unpack("<" + code * count, body[:count * struct.calcsize(code)]))


def f16(x):
    return struct.unpack("<e", struct.pack("<e", x))[0]


def bf16(x):
    """float -> the nearest bf16 value (nearest even), as a float."""
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def rand_f32(rng, n, lo=-1.0, hi=1.0):
    return [struct.unpack("<f", struct.pack("<f", rng.uniform(lo, hi)))[0] for _ in range(n)]


# Each case: (sizes, gen(rng, dir), check(dir) -> list of (what, got, ref, tol, floor)).
N_VEC = 1025
ROWS, COLS = 3, 200
M, N, K = 40, 70, 50
LDA, LDB, LDC = 56, 72, 72


def gen(case, d):
    rng = random.Random(int.from_bytes(os.urandom(8), "little"))
    nan = float("nan")
    if case == "vector_add":
        write_npy(os.path.join(d, "x.npy"), "<f4", (N_VEC,), rand_f32(rng, N_VEC, -100, 100))
        write_npy(os.path.join(d, "y.npy"), "<f4", (N_VEC,), rand_f32(rng, N_VEC, -100, 100))
        write_npy(os.path.join(d, "z.npy"), "<f4", (N_VEC,), [nan] * N_VEC)
    elif case == "axpy_bf16":
        write_npy(os.path.join(d, "x.npy"), "<f4", (N_VEC,), [bf16(v) for v in rand_f32(rng, N_VEC, -4, 4)])
        write_npy(os.path.join(d, "y.npy"), "<f4", (N_VEC,), [bf16(v) for v in rand_f32(rng, N_VEC, -4, 4)])
    elif case == "softmax":
        write_npy(os.path.join(d, "x.npy"), "<f4", (ROWS, COLS), rand_f32(rng, ROWS * COLS, -5, 5))
        write_npy(os.path.join(d, "y.npy"), "<f4", (ROWS, COLS), [nan] * (ROWS * COLS))
    elif case == "matmul":
        write_npy(os.path.join(d, "a.npy"), "<f2", (M, LDA), [f16(v) for v in rand_f32(rng, M * LDA)])
        write_npy(os.path.join(d, "b.npy"), "<f2", (K, LDB), [f16(v) for v in rand_f32(rng, K * LDB)])
        write_npy(os.path.join(d, "c.npy"), "<f2", (M, LDC), [nan] * (M * LDC))
    else:
        sys.exit("unknown case " + case)


def check(case, d):
    inp = lambda name: read_npy(os.path.join(d, name + ".npy"))[2]
    out = lambda name: read_npy(os.path.join(d, "out", name + ".npy"))[2]
    results = []  # (what, got, ref, tol, floor)
    if case == "vector_add":
        x, y, z = inp("x"), inp("y"), out("z")
        results = [("z[%d]" % i, z[i], x[i] + y[i], 1e-5, 1.0) for i in range(N_VEC)]
    elif case == "axpy_bf16":
        x, y, got = inp("x"), inp("y"), out("y")
        results = [("y[%d]" % i, got[i], 0.5 * x[i] + y[i], 1e-2, 0.1) for i in range(N_VEC)]
    elif case == "softmax":
        x, y = inp("x"), out("y")
        for r in range(ROWS):
            row = x[r * COLS:(r + 1) * COLS]
            m = max(row)
            s = sum(math.exp(v - m) for v in row)
            for c in range(COLS):
                results.append(("y[%d,%d]" % (r, c), y[r * COLS + c], math.exp(row[c] - m) / s, 1e-5, 1e-30))
    elif case == "matmul":
        a, b, c = inp("a"), inp("b"), out("c")
        for i in range(M):
            for j in range(LDC):
                if j >= N:
                    if not math.isnan(c[i * LDC + j]):
                        results.append(("c[%d,%d] (past N, must stay NaN)" % (i, j), c[i * LDC + j], float("nan"), 0, 1))
                    continue
                ref = sum(a[i * LDA + k] * b[k * LDB + j] for k in range(K))
                results.append(("c[%d,%d]" % (i, j), c[i * LDC + j], ref, 1e-2, 1.0))
    bad = 0
    for what, got, ref, tol, floor in results:
        ok = (not math.isnan(got)) and not math.isnan(ref) and \
            abs(got - ref) <= tol * max(abs(ref), floor)
        if not ok:
            bad += 1
            if bad <= 5:
                print("MISMATCH %s: got %r, expected %r" % (what, got, ref))
    print("%s: %d values, %d mismatches" % (case, len(results), bad))
    return bad == 0


if __name__ == "__main__":
    mode, case, d = sys.argv[1:4]
    if mode == "gen":
        gen(case, d)
    elif not check(case, d):
        sys.exit(1)
