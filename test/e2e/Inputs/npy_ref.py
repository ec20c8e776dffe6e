#!/usr/bin/env python3
"""Inputs and float64 references for test/e2e/kiln-run.test, with the
standard library only (.npy files written and read by hand, no numpy).

  npy_ref.py gen CASE DIR [--nonneg]
                              write the inputs of CASE into DIR (random,
                              seeded from the OS; outputs poisoned with NaN);
                              --nonneg: row_sum, row_max and row_cumsum
                              inputs in [0, 1), so that sums in another
                              order stay within f32 tolerance of each other
                              (no cancellation), as kiln-run --check between
                              a GPU and the host needs
  npy_ref.py check CASE DIR   compare DIR/out/*.npy with the float64
                              reference computed from DIR/*.npy
  npy_ref.py ints FILE DTYPE COUNT LO HI
                              COUNT random integers in [LO, HI] as f32,
                              f16, f64 or i32 (exact in any summation order)
CASE: int_to_fp8, f64_to_half, int_to_bf16, vector_add, axpy_bf16, softmax, softmax_bf16, matmul, matmul_ptr,
matmul_bf16, matmul_fp8, layer_norm, row_sum, row_max, attention, attention_causal,
gelu, gelu_exact, row_cumsum, row_argmax, transpose, quantize_i8,
histogram, embedding. The matmul cases take a suffix: "_a16" (sizes that
are multiples of 16: the fast path), "_big" (several tiles and K
iterations, multiples of 16) or "_rag" (as large, not multiples of 16).
matmul_fp8 (bench/codeobj/matmul_fp8.tile: E4M3 operands, f16 result)
takes "_big" or "_rag" and leading dimensions of A and B of LD_FP8 (its
@div(16)). fp8_mixed: test/codegen/Inputs/fp8.tile's dot45 (64x64, E4M3
times E5M2).
"""
import array
import ast
import math
import os
import random
import struct
import sys

DTYPES = {"<f4": "f", "<f2": "e", "<f8": "d", "|i1": "b", "<i1": "b", "<i2": "h", "<i4": "i",
          "<i8": "q", "|u1": "B", "<u1": "B", "<u2": "H", "<u4": "I", "<u8": "Q", "|b1": "?"}


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


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def rand_f32(rng, n, lo=-1.0, hi=1.0):
    return [f32(rng.uniform(lo, hi)) for _ in range(n)]


def rand_bf16(rng, n, lo=-1.0, hi=1.0):
    return [bf16(v) for v in rand_f32(rng, n, lo, hi)]


def stays_nan(what, v):
    """An element the kernel must not write (padding poisoned with NaN)."""
    return [] if math.isnan(v) else [(what + " (padding, must stay NaN)", v, float("nan"), 0, 1)]


# Each case: (sizes, gen(rng, dir), check(dir) -> list of (what, got, ref, tol, floor)).
N_VEC = 1025
ROWS, COLS = 3, 200
M, N, K = 40, 70, 50
# The "_a16" matmul cases use multiples of 16 (the GPU fast-path images,
# software-pipelined): same leading dimensions.
M16, N16, K16 = 48, 64, 48
LDA, LDB, LDC = 56, 72, 72
LN_ROWS, LN_COLS, LN_STRIDE, LN_EPS = 3, 200, 208, 1e-5   # layer_norm (eps=1e-5 on the RUN line)
RR_ROWS, RR_COLS, RR_STRIDE = 5, 1300, 1304              # row_sum, row_max
AT_BH, AT_SEQ, AT_D, AT_STRIDE, AT_SCALE = 2, 100, 64, 72, 0.125   # attention (batch 1, heads 2)
N_GELU = 3000
CS_ROWS, CS_COLS, CS_STRIDE = 3, 2500, 2510              # row_cumsum
AM_ROWS, AM_VOCAB, AM_STRIDE = 6, 2500, 2510             # row_argmax
TR_ROWS, TR_COLS, TR_SX, TR_SY = 45, 70, 75, 50          # transpose
N_Q, Q_GROUP = 1312, 32                                  # quantize_i8 (41 groups)
N_HIST, BINS = 5000, 37                                  # histogram
EM_VOCAB, EM_DIM, EM_LDT, EM_LDO = 20, 100, 104, 110     # embedding
EM_IDS = [3, -1, 19, 0, 3, 7, -1]


# "_big": several tiles along M and N and several iterations of the K loop
# (multiples of 16: the fast path), for the larger tiles of sm_90a's
# warpgroup instructions (test/e2e/emu/wgmma.test).
M_BIG, N_BIG, K_BIG, LD_BIG = 144, 160, 160, 168
# "_rag": as large, sizes not multiples of 16 (the generic images).
M_RAG, N_RAG, K_RAG = 150, 150, 150
# matmul_fp8's A and B rows (a multiple of 16 bytes, its @div(16)).
LD_FP8 = 176


def rand_e4m3(rng, n):
    """Values E4M3 holds exactly (k / 8, |k| <= 15: four significant
    bits): every product and every partial sum of up to 2^13 of them is
    then exact in f32, so the host's sums in another order agree."""
    return [rng.randint(-15, 15) / 8.0 for _ in range(n)]


def rand_e5m2(rng, n):
    """Values E5M2 holds exactly (k / 4, |k| <= 7: three significant bits)."""
    return [rng.randint(-7, 7) / 4.0 for _ in range(n)]


def e4m3(x):
    """x rounded to E4M3 (nearest even, saturating at +-448): the value."""
    if x == 0:
        return 0.0
    a = abs(x)
    e = max(math.frexp(a)[1] - 1, -6)   # 2^e <= a (subnormals below 2^-6)
    q = 2.0 ** (e - 3)                   # three fraction bits
    r = round(a / q) * q                 # Python rounds halves to even
    return math.copysign(min(r, 448.0), x)


INT_FP8 = 256  # int_to_fp8's elements


def round_to(x, bits, emin, emax):
    """The f64 x rounded once to nearest even with `bits` bits of precision,
    normal exponents from emin to emax, subnormals below (f16: 11, -14, 15;
    bf16: 8, -126, 127); past the largest finite value, infinity. Exact:
    x / 2^k and round() of a double are exact in Python."""
    if x != x or x in (math.inf, -math.inf) or x == 0:
        return x
    a = abs(x)
    e = max(math.frexp(a)[1] - 1, emin)   # 2^e <= a, or the subnormal range
    q = 2.0 ** (e - bits + 1)             # the unit in the last place
    r = round(a / q) * q
    if r >= 2.0 ** (emax + 1):
        r = math.inf
    return math.copysign(r, x)


HALF_N = 256  # f64_to_half's and int_to_bf16's elements


def round_int_to(i, bits):
    """The integer i rounded once to nearest even with `bits` bits of
    precision (no integer reaches bf16's subnormals or its overflow)."""
    a = abs(i)
    drop = max(a.bit_length() - bits, 0)
    q, r = a >> drop, a & ((1 << drop) - 1)
    half = 1 << drop >> 1
    if drop and (r > half or r == half and q & 1):
        q += 1
    return math.copysign(float(q << drop), i) if i else 0.0


def same_float(got, ref):
    """Equal as floats, NaN to NaN and the sign of zero included."""
    if got != got or ref != ref:
        return got != got and ref != ref
    return got == ref and math.copysign(1.0, got) == math.copysign(1.0, ref)


def matmul_dims(case):
    """The case without its "_a16"/"_big" suffix, its M, N, K and its
    leading dimensions (of A, B, C)."""
    if case.endswith("_a16"):
        return case[:-4], M16, N16, K16, LDA, LDB, LDC
    if case.endswith("_big"):
        return case[:-4], M_BIG, N_BIG, K_BIG, LD_BIG, LD_BIG, LD_BIG
    if case.endswith("_rag"):
        return case[:-4], M_RAG, N_RAG, K_RAG, LD_BIG, LD_BIG, LD_BIG
    return case, M, N, K, LDA, LDB, LDC


def fp8_dims(case):
    """matmul_dims with matmul_fp8's leading dimensions of A and B."""
    case, M, N, K, LDA, LDB, LDC = matmul_dims(case)
    if case == "matmul_fp8":
        LDA = LDB = LD_FP8
    return case, M, N, K, LDA, LDB, LDC


def gen(case, d, nonneg=False):
    rng = random.Random(int.from_bytes(os.urandom(8), "little"))
    nan = float("nan")
    case, M, N, K, LDA, LDB, LDC = fp8_dims(case)
    if case == "int_to_fp8":
        # ties (17 -> 16, 19 -> 20, 2^k + 2^(k-3) for k >= 4), saturation,
        # then random integers across E4M3's range and beyond it
        special = [0, 1, -1, 17, 19, -17, 36, 40, 44, 448, 449, 464, 500, -500, 100000, -2**31]
        vals = special + [rng.randint(-600, 600) for _ in range(INT_FP8 - len(special))]
        write_npy(os.path.join(d, "x.npy"), "<i4", (INT_FP8,), vals)
        write_npy(os.path.join(d, "y.npy"), "<f4", (INT_FP8,), [nan] * INT_FP8)
    elif case == "f64_to_half":
        # values just off the ties of f16 and bf16 (rounding through f32 to
        # nearest would land on the tie and round to even: the wrong way),
        # exact ties, the subnormal ranges, overflow, infinities, NaN, -0
        special = [1 + 2**-8 + 2**-30, 1 + 2**-8 - 2**-30, 1 + 2**-8, 1 + 3 * 2**-8,
                   -(1 + 2**-8 + 2**-30), 1 + 2**-11 + 2**-40, 1 + 2**-11, -(1 + 3 * 2**-11 - 2**-40),
                   2**-25 + 2**-60, 2**-25, 3 * 2**-25, 2**-134 + 2**-170, 2**-134, 2**-140,
                   65504.0, 65519.99, 65520.0, 1e300, -1e300, 3.3961e38, 3.3963e38, 3.5e38,
                   math.inf, -math.inf, nan, 0.0, -0.0, 1e-320]
        vals = list(special)
        while len(vals) < HALF_N:
            # a tie of either type, nudged by a relative 2^-30..2^-45
            bits = rng.choice([8, 11])
            e = rng.randint(-30, 14)
            m = rng.randrange(1 << (bits - 1), 1 << bits)
            tie = (m + 0.5) * 2.0 ** (e - bits + 1)
            vals.append(rng.choice([-1, 1]) * tie * (1 + rng.choice([-1, 1]) * 2.0 ** -rng.randint(30, 45)))
        write_npy(os.path.join(d, "x.npy"), "<f8", (HALF_N,), vals)
        write_npy(os.path.join(d, "h.npy"), "<f2", (HALF_N,), [nan] * HALF_N)
        write_npy(os.path.join(d, "b.npy"), "<f4", (HALF_N,), [nan] * HALF_N)
    elif case == "int_to_bf16":
        # i32, i64 and u64 just off bf16's ties (through f32 rounded to
        # nearest they land on the tie), ties, the extremes, random values
        def near_ties(width, signed):
            out = []
            while len(out) < HALF_N:
                e = rng.randint(9, width - 2 if signed else width - 1)
                tie = (2 * rng.randrange(1 << 7, 1 << 8) + 1) << (e - 8)  # (m + 1/2) ulps
                v = tie + rng.choice([-1, 0, 1]) * rng.choice([1, 1 << max(0, e - 30)])
                if v < (1 << (width - 1 if signed else width)):
                    out.append(-v if signed and rng.random() < 0.5 else v)
            return out
        x = [2**24 + 2**16 + 1, -(2**24 + 2**16 + 1), 2**31 - 1, -2**31, 0, 1, -1] + near_ties(32, True)
        y = [2**40 + 2**32 + 1, 2**63 - 1, -2**63, 2**62 + 2**54 + 1] + near_ties(64, True)
        u = [2**64 - 1, 2**63 + 2**55 + 1, 0] + near_ties(64, False)
        write_npy(os.path.join(d, "x.npy"), "<i4", (HALF_N,), x[:HALF_N])
        write_npy(os.path.join(d, "y.npy"), "<i8", (HALF_N,), y[:HALF_N])
        write_npy(os.path.join(d, "u.npy"), "<u8", (HALF_N,), u[:HALF_N])
        for name in ("bx", "by", "bu"):
            write_npy(os.path.join(d, name + ".npy"), "<f4", (HALF_N,), [nan] * HALF_N)
    elif case == "vector_add":
        write_npy(os.path.join(d, "x.npy"), "<f4", (N_VEC,), rand_f32(rng, N_VEC, -100, 100))
        write_npy(os.path.join(d, "y.npy"), "<f4", (N_VEC,), rand_f32(rng, N_VEC, -100, 100))
        write_npy(os.path.join(d, "z.npy"), "<f4", (N_VEC,), [nan] * N_VEC)
    elif case == "axpy_bf16":
        write_npy(os.path.join(d, "x.npy"), "<f4", (N_VEC,), [bf16(v) for v in rand_f32(rng, N_VEC, -4, 4)])
        write_npy(os.path.join(d, "y.npy"), "<f4", (N_VEC,), [bf16(v) for v in rand_f32(rng, N_VEC, -4, 4)])
    elif case == "softmax":
        write_npy(os.path.join(d, "x.npy"), "<f4", (ROWS, COLS), rand_f32(rng, ROWS * COLS, -5, 5))
        write_npy(os.path.join(d, "y.npy"), "<f4", (ROWS, COLS), [nan] * (ROWS * COLS))
    elif case in ("matmul", "matmul_ptr"):
        write_npy(os.path.join(d, "a.npy"), "<f2", (M, LDA), [f16(v) for v in rand_f32(rng, M * LDA)])
        write_npy(os.path.join(d, "b.npy"), "<f2", (K, LDB), [f16(v) for v in rand_f32(rng, K * LDB)])
        write_npy(os.path.join(d, "c.npy"), "<f2", (M, LDC), [nan] * (M * LDC))
    elif case == "fp8_mixed":
        write_npy(os.path.join(d, "a.npy"), "<f4", (64, 64), rand_e4m3(rng, 64 * 64))
        write_npy(os.path.join(d, "b.npy"), "<f4", (64, 64), rand_e5m2(rng, 64 * 64))
        write_npy(os.path.join(d, "c.npy"), "<f4", (64, 64), [nan] * (64 * 64))
        write_npy(os.path.join(d, "q.npy"), "<f4", (64, 64), [nan] * (64 * 64))
    elif case == "matmul_fp8":
        write_npy(os.path.join(d, "a.npy"), "<f4", (M, LDA), rand_e4m3(rng, M * LDA))
        write_npy(os.path.join(d, "b.npy"), "<f4", (K, LDB), rand_e4m3(rng, K * LDB))
        write_npy(os.path.join(d, "c.npy"), "<f2", (M, LDC), [nan] * (M * LDC))
    elif case == "matmul_bf16":
        write_npy(os.path.join(d, "a.npy"), "<f4", (M, LDA), rand_bf16(rng, M * LDA))
        write_npy(os.path.join(d, "b.npy"), "<f4", (K, LDB), rand_bf16(rng, K * LDB))
        write_npy(os.path.join(d, "c.npy"), "<f4", (M, LDC), [nan] * (M * LDC))
    elif case == "softmax_bf16":
        write_npy(os.path.join(d, "x.npy"), "<f4", (ROWS, COLS), rand_bf16(rng, ROWS * COLS, -5, 5))
        write_npy(os.path.join(d, "y.npy"), "<f4", (ROWS, COLS), [nan] * (ROWS * COLS))
    elif case == "layer_norm":
        n = LN_ROWS * LN_STRIDE
        write_npy(os.path.join(d, "x.npy"), "<f4", (LN_ROWS, LN_STRIDE), rand_bf16(rng, n, -3, 5))
        write_npy(os.path.join(d, "y.npy"), "<f4", (LN_ROWS, LN_STRIDE), [nan] * n)
        write_npy(os.path.join(d, "w.npy"), "<f4", (LN_COLS,), rand_bf16(rng, LN_COLS, 0.5, 1.5))
        write_npy(os.path.join(d, "b.npy"), "<f4", (LN_COLS,), rand_bf16(rng, LN_COLS, -0.5, 0.5))
        write_npy(os.path.join(d, "mean.npy"), "<f4", (LN_ROWS,), [nan] * LN_ROWS)
        write_npy(os.path.join(d, "rstd.npy"), "<f4", (LN_ROWS,), [nan] * LN_ROWS)
    elif case in ("row_sum", "row_max"):
        write_npy(os.path.join(d, "x.npy"), "<f4", (RR_ROWS, RR_STRIDE), rand_f32(rng, RR_ROWS * RR_STRIDE, 0 if nonneg else -10, 1 if nonneg else 10))
        write_npy(os.path.join(d, "out.npy"), "<f4", (RR_ROWS,), [nan] * RR_ROWS)
    elif case in ("attention", "attention_causal"):
        n = AT_BH * AT_SEQ * AT_STRIDE
        for name, lo, hi in (("q", -2, 2), ("k", -2, 2), ("v", -1, 1)):
            write_npy(os.path.join(d, name + ".npy"), "<f4", (AT_BH * AT_SEQ, AT_STRIDE), rand_bf16(rng, n, lo, hi))
        write_npy(os.path.join(d, "o.npy"), "<f4", (AT_BH * AT_SEQ, AT_STRIDE), [nan] * n)
    elif case in ("gelu", "gelu_exact"):
        write_npy(os.path.join(d, "x.npy"), "<f4", (N_GELU,), rand_f32(rng, N_GELU, -4, 4))
        write_npy(os.path.join(d, "y.npy"), "<f4", (N_GELU,), [nan] * N_GELU)
    elif case == "row_cumsum":
        n = CS_ROWS * CS_STRIDE
        write_npy(os.path.join(d, "x.npy"), "<f4", (CS_ROWS, CS_STRIDE), rand_f32(rng, n, 0 if nonneg else -1))
        write_npy(os.path.join(d, "y.npy"), "<f4", (CS_ROWS, CS_STRIDE), [nan] * n)
    elif case == "row_argmax":
        n = AM_ROWS * AM_STRIDE
        write_npy(os.path.join(d, "logits.npy"), "<f4", (AM_ROWS, AM_STRIDE), rand_f32(rng, n, -20, 20))
        write_npy(os.path.join(d, "idx.npy"), "<i4", (AM_ROWS,), [-7] * AM_ROWS)
        write_npy(os.path.join(d, "val.npy"), "<f4", (AM_ROWS,), [nan] * AM_ROWS)
    elif case == "transpose":
        write_npy(os.path.join(d, "x.npy"), "<f4", (TR_ROWS, TR_SX), rand_f32(rng, TR_ROWS * TR_SX, -100, 100))
        write_npy(os.path.join(d, "y.npy"), "<f4", (TR_COLS, TR_SY), [nan] * (TR_COLS * TR_SY))
    elif case == "quantize_i8":
        x = rand_f32(rng, N_Q, -3, 3)
        x[5 * Q_GROUP:6 * Q_GROUP] = [0.0] * Q_GROUP      # an all-zero group: scale 1
        write_npy(os.path.join(d, "x.npy"), "<f4", (N_Q,), x)
        write_npy(os.path.join(d, "q.npy"), "|i1", (N_Q,), [-128] * N_Q)   # never produced
        write_npy(os.path.join(d, "scales.npy"), "<f4", (N_Q // Q_GROUP,), [nan] * (N_Q // Q_GROUP))
    elif case == "histogram":
        write_npy(os.path.join(d, "x.npy"), "<i4", (N_HIST,), [rng.randrange(BINS) for _ in range(N_HIST)])
        write_npy(os.path.join(d, "hist.npy"), "<i4", (BINS,), [0] * BINS)
    elif case == "embedding":
        write_npy(os.path.join(d, "table.npy"), "<f4", (EM_VOCAB, EM_LDT), rand_bf16(rng, EM_VOCAB * EM_LDT, -4, 4))
        write_npy(os.path.join(d, "ids.npy"), "<i4", (len(EM_IDS),), EM_IDS)
        write_npy(os.path.join(d, "out.npy"), "<f4", (len(EM_IDS), EM_LDO), [nan] * (len(EM_IDS) * EM_LDO))
    else:
        sys.exit("unknown case " + case)


def check(case, d):
    case, M, N, K, LDA, LDB, LDC = fp8_dims(case)
    inp = lambda name: read_npy(os.path.join(d, name + ".npy"))[2]
    out = lambda name: read_npy(os.path.join(d, "out", name + ".npy"))[2]
    results = []  # (what, got, ref, tol, floor)
    if case == "int_to_fp8":
        x, y = inp("x"), out("y")
        results = [("y[%d] (from %d)" % (i, x[i]), y[i], e4m3(x[i]), 0.0, 0.0) for i in range(INT_FP8)]
    elif case == "f64_to_half":
        # bit for bit (tolerance None): one rounding to nearest even
        x, h, b = inp("x"), out("h"), out("b")
        for i in range(HALF_N):
            results.append(("h[%d] (from %r)" % (i, x[i]), h[i], round_to(x[i], 11, -14, 15), None, 0))
            results.append(("b[%d] (from %r)" % (i, x[i]), b[i], round_to(x[i], 8, -126, 127), None, 0))
    elif case == "int_to_bf16":
        for src in ("x", "y", "u"):
            v, b = inp(src), out("b" + src)
            results += [("b%s[%d] (from %d)" % (src, i, v[i]), b[i], round_int_to(v[i], 8), None, 0)
                        for i in range(HALF_N)]
    elif case == "vector_add":
        x, y, z = inp("x"), inp("y"), out("z")
        results = [("z[%d]" % i, z[i], x[i] + y[i], 1e-5, 1.0) for i in range(N_VEC)]
    elif case == "axpy_bf16":
        x, y, got = inp("x"), inp("y"), out("y")
        results = [("y[%d]" % i, got[i], 0.5 * x[i] + y[i], 1e-2, 0.1) for i in range(N_VEC)]
    elif case in ("softmax", "softmax_bf16"):
        x, y = inp("x"), out("y")
        tol = 1e-5 if case == "softmax" else 1e-2
        for r in range(ROWS):
            row = x[r * COLS:(r + 1) * COLS]
            m = max(row)
            s = sum(math.exp(v - m) for v in row)
            for c in range(COLS):
                results.append(("y[%d,%d]" % (r, c), y[r * COLS + c], math.exp(row[c] - m) / s, tol, 1e-30))
    elif case == "fp8_mixed":
        # Products of k/8 and k/4 and their sums over 64 terms are exact in
        # f32: the result must be exact.
        a, b, c = inp("a"), inp("b"), out("c")
        for i in range(64):
            for j in range(64):
                ref = sum(a[i * 64 + k] * b[k * 64 + j] for k in range(64))
                results.append(("c[%d,%d]" % (i, j), c[i * 64 + j], ref, 0, 0))
    elif case in ("matmul", "matmul_ptr", "matmul_bf16", "matmul_fp8"):
        a, b, c = inp("a"), inp("b"), out("c")
        for i in range(M):
            for j in range(LDC):
                if j >= N:
                    if not math.isnan(c[i * LDC + j]):
                        results.append(("c[%d,%d] (past N, must stay NaN)" % (i, j), c[i * LDC + j], float("nan"), 0, 1))
                    continue
                ref = sum(a[i * LDA + k] * b[k * LDB + j] for k in range(K))
                results.append(("c[%d,%d]" % (i, j), c[i * LDC + j], ref, 1e-2, 1.0))
    elif case == "layer_norm":
        x, w, b, y = inp("x"), inp("w"), inp("b"), out("y")
        mean, rstd = out("mean"), out("rstd")
        for r in range(LN_ROWS):
            row = x[r * LN_STRIDE:r * LN_STRIDE + LN_COLS]
            mu = sum(row) / LN_COLS
            var = sum((v - mu) ** 2 for v in row) / LN_COLS
            rs = 1.0 / math.sqrt(var + LN_EPS)
            results.append(("mean[%d]" % r, mean[r], mu, 1e-5, sum(abs(v) for v in row) / LN_COLS))
            results.append(("rstd[%d]" % r, rstd[r], rs, 1e-5, 0))
            for c in range(LN_STRIDE):
                i = r * LN_STRIDE + c
                if c >= LN_COLS:
                    results += stays_nan("y[%d,%d]" % (r, c), y[i])
                    continue
                ref = (row[c] - mu) * rs * w[c] + b[c]
                results.append(("y[%d,%d]" % (r, c), y[i], ref, 1e-2, 1e-2))
    elif case in ("row_sum", "row_max"):
        x, o = inp("x"), out("out")
        for r in range(RR_ROWS):
            row = x[r * RR_STRIDE:r * RR_STRIDE + RR_COLS]
            if case == "row_sum":
                results.append(("out[%d]" % r, o[r], math.fsum(row), 1e-5, sum(abs(v) for v in row)))
            else:
                results.append(("out[%d]" % r, o[r], max(row), 0, 1))
    elif case in ("attention", "attention_causal"):
        q, k, v, o = inp("q"), inp("k"), inp("v"), out("o")
        at = lambda t, h, i, c: t[(h * AT_SEQ + i) * AT_STRIDE + c]
        for h in range(AT_BH):
            for i in range(AT_SEQ):
                keys = range(i + 1) if case == "attention_causal" else range(AT_SEQ)
                s = [AT_SCALE * sum(at(q, h, i, c) * at(k, h, j, c) for c in range(AT_D)) for j in keys]
                m = max(s)
                p = [math.exp(x - m) for x in s]
                l = sum(p)
                for c in range(AT_STRIDE):
                    got = at(o, h, i, c)
                    what = "o[%d,%d,%d]" % (h, i, c)
                    if c >= AT_D:
                        results += stays_nan(what, got)
                        continue
                    ref = sum(pj * at(v, h, j, c) for pj, j in zip(p, keys)) / l
                    # p is rounded to bf16 for the second product: relative to
                    # the scale of V (|v| <= 1), not to the (averaged) output.
                    results.append((what, got, ref, 1e-2, 0.5))
    elif case in ("gelu", "gelu_exact"):
        x, y = inp("x"), out("y")
        for i in range(N_GELU):
            if case == "gelu":
                ref = 0.5 * x[i] * (1 + math.tanh(0.7978845608028654 * (x[i] + 0.044715 * x[i] ** 3)))
            else:
                ref = 0.5 * x[i] * (1 + math.erf(x[i] / math.sqrt(2)))
            results.append(("y[%d]" % i, y[i], ref, 1e-5, 1.0))
    elif case == "row_cumsum":
        x, y = inp("x"), out("y")
        for r in range(CS_ROWS):
            run = absrun = 0.0
            for c in range(CS_STRIDE):
                i = r * CS_STRIDE + c
                if c >= CS_COLS:
                    results += stays_nan("y[%d,%d]" % (r, c), y[i])
                    continue
                run += x[i]
                absrun += abs(x[i])
                results.append(("y[%d,%d]" % (r, c), y[i], run, 1e-5, absrun))
    elif case == "row_argmax":
        x, idx, val = inp("logits"), out("idx"), out("val")
        for r in range(AM_ROWS):
            row = x[r * AM_STRIDE:r * AM_STRIDE + AM_VOCAB]
            m = max(row)
            results.append(("idx[%d]" % r, idx[r], row.index(m), 0, 1))
            results.append(("val[%d]" % r, val[r], m, 0, 1))
    elif case == "transpose":
        x, y = inp("x"), out("y")
        for c in range(TR_COLS):
            for r in range(TR_SY):
                what = "y[%d,%d]" % (c, r)
                if r >= TR_ROWS:
                    results += stays_nan(what, y[c * TR_SY + r])
                else:
                    results.append((what, y[c * TR_SY + r], x[r * TR_SX + c], 0, 1))
    elif case == "quantize_i8":
        x, q, scales = inp("x"), out("q"), out("scales")
        for g in range(N_Q // Q_GROUP):
            grp = x[g * Q_GROUP:(g + 1) * Q_GROUP]
            amax = max(abs(v) for v in grp)
            ref_scale = amax / 127 if amax > 0 else 1.0
            results.append(("scales[%d]" % g, scales[g], ref_scale, 1e-5, 0))
            s32 = f32(f32(amax) / 127) if amax > 0 else 1.0   # the kernel's f32 scale
            for i in range(g * Q_GROUP, (g + 1) * Q_GROUP):
                ref = max(-127, min(127, math.floor(f32(f32(x[i] / s32) + 0.5))))
                results.append(("q[%d]" % i, q[i], ref, 0, 1))
    elif case == "histogram":
        x, hist = inp("x"), out("hist")
        for bin_ in range(BINS):
            results.append(("hist[%d]" % bin_, hist[bin_], x.count(bin_), 0, 1))
    elif case == "embedding":
        table, o = inp("table"), out("out")
        for i, id_ in enumerate(EM_IDS):
            for c in range(EM_LDO):
                what = "out[%d,%d]" % (i, c)
                if c >= EM_DIM:
                    results += stays_nan(what, o[i * EM_LDO + c])
                else:
                    ref = 0.0 if id_ < 0 else table[id_ * EM_LDT + c]
                    results.append((what, o[i * EM_LDO + c], ref, 0, 1))
    bad = 0
    for what, got, ref, tol, floor in results:
        if tol is None:
            ok = same_float(got, ref)
        else:
            ok = (not math.isnan(got)) and not math.isnan(ref) and \
                abs(got - ref) <= tol * max(abs(ref), floor)
        if not ok:
            bad += 1
            if bad <= 5:
                print("MISMATCH %s: got %r, expected %r" % (what, got, ref))
    print("%s: %d values, %d mismatches" % (case, len(results), bad))
    return bad == 0


def ints(path, dtype, count, lo, hi):
    """COUNT random integers in [LO, HI] as a DTYPE (f32, f16, f64, i32) .npy:
    small integers keep sums and products exact in any order, so a GPU's
    result must equal the host's bit for bit."""
    rng = random.Random()
    descr = {"f32": "<f4", "f16": "<f2", "f64": "<f8", "i32": "<i4"}[dtype]
    vals = [rng.randint(lo, hi) for _ in range(count)]
    write_npy(path, descr, [count], vals if dtype == "i32" else [float(v) for v in vals])


if __name__ == "__main__":
    if sys.argv[1] == "ints":
        # npy_ref.py ints FILE DTYPE COUNT LO HI
        ints(sys.argv[2], sys.argv[3], *map(int, sys.argv[4:7]))
        sys.exit(0)
    mode, case, d = sys.argv[1:4]
    flags = sys.argv[4:]
    if any(f != "--nonneg" for f in flags) or (flags and mode != "gen"):
        sys.exit("unknown options " + " ".join(flags))
    if mode == "gen":
        gen(case, d, nonneg="--nonneg" in flags)
    elif not check(case, d):
        sys.exit(1)
