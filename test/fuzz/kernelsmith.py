#!/usr/bin/env python3
"""kernelsmith: differential testing of Kiln's GPU stage on random kernels.

Generates random, valid .tile kernels (elementwise arithmetic on tiles of
every float and integer type, broadcasting and widening, comparisons and
`where`, casts, transposes, reshapes and rank-3 permutes, reductions and
scans along any axis, `dot` on f16/bf16/f32/i8/fp8 operands, pointer and
view loads with masks, loops with carried accumulators and products),
compiles each for the host and for the CPU emulator of several GPU archs,
runs every image on the same random inputs and compares the outputs with
the host's **bit for bit** (docs/testing.md).

Exact comparison is possible because the data are small integers (and
halves), and the generator tracks a bound on every value's magnitude: it
only builds an operation whose result is exactly representable in its
type (an f16 tile stays within 2048, a bf16 one within 256, f32 within
2^24, an unsigned one never negative; products and sums are bounded
before they are made). Every result
is then the same in any order of summation or product accumulation, so a
difference between the host and a GPU image is a compiler bug, not
rounding.

  kernelsmith.py [--seeds A:B | --seed N ... | --count N] [--targets emu:sm_80,...]
                 [--keep DIR] [--time-limit S] [-v]
  kernelsmith.py ... --pack DIR [--pack-targets sm_80,sm_90a]
  kernelsmith.py --replay DIR|DIR.tar.xz [--device cuda:0] [--kiln-run PATH]
                 [--wrapper CMD] [--time-limit S] [--keep DIR] [-v]

--pack keeps the seeds that pass in DIR with a bundle per packed target
and the host's outputs; --replay runs them where there is no compiler
(the GPU side of the device pack) and compares bit for bit.

For each seed: the kernel (DIR/<seed>/k.tile), its inputs, every target's
outputs. A failing seed prints what failed (compile crash, internal error,
emulator fault, or the first differing elements) and exits 1 at the end.
A compile error that is a user error means a generator bug: reported too.
The seed fully determines the kernel, the const params and the inputs.
"""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "test", "e2e", "Inputs"))
from npy_ref import read_npy, write_npy  # noqa: E402

DEFAULT_TARGETS = ["emu:sm_80", "emu:sm_90a", "emu:gfx942", "emu:gfx1100"]

# Largest magnitude (in units of the value's resolution) each type holds
# exactly: 2^(mantissa bits + 1) for floats; integers keep a margin below
# their range (i32, i64, u32, u64) so that no operation wraps.
EXACT = {"f32": 1 << 24, "f16": 1 << 11, "bf16": 1 << 8, "f64": 1 << 53,
         "i8": 127, "i16": (1 << 15) - 1, "i32": 1 << 30, "i64": 1 << 62,
         "u8": 255, "u16": (1 << 16) - 1, "u32": 1 << 31, "u64": 1 << 62,
         "f8e4m3": 1 << 4, "f8e5m2": 1 << 3}
NPY = {"f32": "<f4", "f16": "<f2", "f64": "<f8", "i8": "|i1", "i16": "<i2", "i32": "<i4", "i64": "<i8",
       "u8": "|u1", "u16": "<u2", "u32": "<u4", "u64": "<u8"}
FLOATS = ("f32", "f16", "bf16", "f64")
SIGNED = ("i8", "i16", "i32", "i64")
UNSIGNED = ("u8", "u16", "u32", "u64")
INTS = SIGNED + UNSIGNED
WIDTH = {"i8": 8, "u8": 8, "i16": 16, "u16": 16, "i32": 32, "u32": 32, "i64": 64, "u64": 64,
         "f16": 16, "bf16": 16, "f32": 32, "f64": 64}
# What an integer output holds before the launch (floats: NaN).
POISON = {"i8": -85, "i16": -12345, "i32": -12345, "i64": -12345, "u8": 171, "u16": 54321,
          "u32": 0xDEADBEEF, "u64": 0xDEADBEEF}
# The element types of the inputs, the common ones more often.
INPUT_TYPES = ["f32", "f32", "f32", "f16", "bf16", "i32", "i32", "f64", "i8", "u8", "i16", "u16", "u32",
               "i64", "u64"]


def reduced_type(ty):
    """The element type of a reduction or scan of `ty` (language 7.6)."""
    if ty in ("f16", "bf16"):
        return "f32"
    if ty == "bool" or ty in INTS and WIDTH[ty] < 32:
        return "i32"
    return ty


def widened(a, b):
    """The element type two operands meet in (language 3.6), or None where
    mixing them is an error."""
    if a == b:
        return a
    if a in FLOATS and b in FLOATS:
        if "f64" in (a, b):
            return "f64"
        return "f32"
    for kind in (SIGNED, UNSIGNED):
        if a in kind and b in kind:
            return a if WIDTH[a] > WIDTH[b] else b
    return None


class Val:
    """A generated value: its name in the kernel, element type, symbolic
    shape (a tuple of const-param names, "1", or () for a scalar), a bound on
    its magnitude, its resolution (frac = 1: multiples of 1/2) and whether
    it is never negative (every unsigned or bool value is)."""

    def __init__(self, name, ty, shape, bound, frac=0, nonneg=False):
        self.name, self.ty, self.shape, self.bound, self.frac = name, ty, shape, bound, frac
        self.nonneg = nonneg or ty in UNSIGNED or ty == "bool"

    def fits(self, ty, bound=None, frac=None):
        """Whether the value converts to `ty` exactly."""
        bound = self.bound if bound is None else bound
        frac = self.frac if frac is None else frac
        if ty == "bool":
            return True
        if ty in INTS:
            return frac == 0 and bound <= EXACT[ty] and (self.nonneg or ty in SIGNED)
        return bound * (1 << frac) <= EXACT[ty]


def broadcast(a, b):
    """The broadcast of two symbolic shapes, or None."""
    if a == ():
        return b
    if b == ():
        return a
    if len(a) != len(b):
        return None
    out = []
    for x, y in zip(a, b):
        if x == y or y == "1":
            out.append(x)
        elif x == "1":
            out.append(y)
        else:
            return None
    return tuple(out)


class Gen:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.seed = seed
        self.lines = []
        self.n = 0
        self.vals = []
        self.depth = 0
        self.in_loop = False
        self.early = False
        self.carry_regs = 0
        self.loop_vars = []

    # -- helpers --------------------------------------------------------
    def fresh(self):
        self.n += 1
        return "v%d" % self.n

    def emit(self, expr, ty, shape, bound, frac=0, keep=True, nonneg=False):
        v = Val(self.fresh(), ty, shape, bound, frac, nonneg)
        self.lines.append("    let %s = %s;" % (v.name, expr))
        # A tile over 64 KB (a [128, 128] i64 one) is not used further: a
        # layout conversion takes it whole through shared memory, which
        # AMD's 64 KB do not hold (no variant then; seed 158674256).
        if keep and self.elements(shape) * WIDTH.get(ty, 32) // 8 <= 65536:
            self.vals.append(v)
        return v

    def pick(self, pred=lambda v: True):
        c = [v for v in self.vals if pred(v)]
        return self.rng.choice(c) if c else None

    def lit(self, ty, value):
        if ty in FLOATS:
            return "%.1f" % value
        return "%d" % value

    # -- value producers -----------------------------------------------
    def unary(self, a):
        r = self.rng.random()
        if a.ty == "bool":
            return self.emit("!%s" % a.name, "bool", a.shape, 1)
        if r < 0.2:
            if a.ty in UNSIGNED:
                return None  # it would wrap
            if a.ty in SIGNED and self.rng.random() < 0.3:
                return self.emit("~%s" % a.name, a.ty, a.shape, a.bound + 1)
            return self.emit("-%s" % a.name, a.ty, a.shape, a.bound, a.frac)
        if r < 0.35:
            if a.ty in UNSIGNED:
                return None
            return self.emit("abs(%s)" % a.name, a.ty, a.shape, a.bound, a.frac, nonneg=True)
        if r < 0.55:
            # cast to another type where the value fits exactly
            options = [t for t in FLOATS + INTS if t != a.ty and a.fits(t)]
            if not options:
                return None
            t = self.rng.choice(options)
            return self.emit("cast<%s>(%s)" % (t, a.name), t, a.shape, a.bound, a.frac, nonneg=a.nonneg)
        if r < 0.7 and a.ty in FLOATS:
            rem = self.rng.random() < 0.3
            if a.frac == 0 and a.fits(a.ty, frac=1) and not rem:
                return self.emit("%s * %s" % (a.name, self.lit(a.ty, 0.5)), a.ty, a.shape,
                                 (a.bound + 1) // 2 + 1, 1, nonneg=a.nonneg)
            if rem:
                # the C remainder: exact, the dividend's sign
                k = self.rng.choice([1.0, 1.5, 2.0, 3.0])
                frac = max(a.frac, 0 if k == int(k) else 1)  # 2 % 1.5 is 0.5
                if not a.fits(a.ty, bound=int(k) + 1, frac=frac):
                    return None
                return self.emit("%s %% %s" % (a.name, self.lit(a.ty, k)), a.ty, a.shape, int(k) + 1, frac,
                                 nonneg=a.nonneg)
            fn = self.rng.choice(["floor", "ceil"])
            return self.emit("%s(%s)" % (fn, a.name), a.ty, a.shape, a.bound + 1, 0, nonneg=a.nonneg)
        if r < 0.85 and a.ty in INTS:
            op = self.rng.choice(["/", "%", ">>", "&", "<<"])
            k = self.rng.choice([1, 2, 3, 5, 7] + ([-2, -3] if a.ty in SIGNED and op in "/%" else []))
            if op == "<<":
                if not a.fits(a.ty, bound=(a.bound << k) * 4):
                    return None
                return self.emit("%s << %d" % (a.name, k), a.ty, a.shape, a.bound << k, nonneg=a.nonneg)
            bound = a.bound if op != "%" else abs(k)
            return self.emit("%s %s %d" % (a.name, op, k), a.ty, a.shape, bound,
                             nonneg=a.nonneg or op == "&")
        # compare with a constant
        op = self.rng.choice(["<", "<=", ">", ">=", "==", "!="])
        c = self.lit(a.ty, self.rng.randint(0 if a.ty in UNSIGNED else -2, 2))
        return self.emit("%s %s %s" % (a.name, op, c), "bool", a.shape, 1)

    def binary(self, a, b):
        shape = broadcast(a.shape, b.shape)
        if shape is None:
            return None
        if a.ty == "bool" and b.ty == "bool":
            op = self.rng.choice(["&&", "||", "==", "!="])
            return self.emit("%s %s %s" % (a.name, op, b.name), "bool", shape, 1)
        if a.ty == "bool" or b.ty == "bool":
            # where(c, x, y) with the bool as the condition
            c, x = (a, b) if a.ty == "bool" else (b, a)
            y = self.pick(lambda v: v.ty == x.ty and broadcast(broadcast(c.shape, x.shape) or (), v.shape) is not None
                          and broadcast(c.shape, x.shape) is not None)
            if y is None:
                return None
            s = broadcast(broadcast(c.shape, x.shape), y.shape)
            if s is None:
                return None
            return self.emit("where(%s, %s, %s)" % (c.name, x.name, y.name), x.ty, s,
                             max(x.bound, y.bound), max(x.frac, y.frac), nonneg=x.nonneg and y.nonneg)
        # widened where they differ (f16 with bf16 gives f32, i8 with i64
        # gives i64); signed with unsigned, integer with float is an error
        ty = widened(a.ty, b.ty)
        if ty is None:
            return None
        frac = max(a.frac, b.frac)
        both = a.nonneg and b.nonneg
        r = self.rng.random()
        if r < 0.3:
            op, bound, nonneg = "+", a.bound + b.bound, both
        elif r < 0.5:
            if ty in UNSIGNED:
                return None  # it could wrap
            op, bound, nonneg = "-", a.bound + b.bound, False
        elif r < 0.65:
            op, bound, nonneg = "*", a.bound * b.bound, both
            frac = a.frac + b.frac
        elif r < 0.8:
            fn = self.rng.choice(["maximum", "minimum"])
            v = Val("", ty, shape, max(a.bound, b.bound), frac, both)
            if not v.fits(ty):
                return None
            return self.emit("%s(%s, %s)" % (fn, a.name, b.name), ty, shape, v.bound, frac, nonneg=both)
        elif r < 0.85 and ty in FLOATS:
            # the C remainder of a tile by a tile (exact; the GPUs' own
            # loop), by |b| + 1 so never by zero
            bound = min(a.bound, b.bound + 1)
            if frac > 1 or not Val("", ty, shape, bound, frac, a.nonneg).fits(ty):
                return None
            return self.emit("%s %% (abs(%s) + %s)" % (a.name, b.name, self.lit(b.ty, 1)), ty, shape, bound,
                             frac, nonneg=a.nonneg)
        elif r < 0.9 and ty in INTS:
            op = self.rng.choice(["&", "|", "^"])
            bound = 1
            while bound <= max(a.bound, b.bound):
                bound <<= 1
            nonneg = both or op == "&" and (a.nonneg or b.nonneg)
        else:
            op = self.rng.choice(["<", "<=", ">", ">=", "==", "!="])
            return self.emit("%s %s %s" % (a.name, op, b.name), "bool", shape, 1)
        if frac > 1 or not Val("", ty, shape, bound, frac, nonneg).fits(ty):
            return None
        return self.emit("%s %s %s" % (a.name, op, b.name), ty, shape, bound, frac, nonneg=nonneg)

    def reduce(self, a):
        axes = [i for i, d in enumerate(a.shape) if d != "1"]
        if not axes:
            return None
        axis = self.rng.choice(axes)
        length = self.dim(a.shape[axis])
        keep = len(a.shape) >= 2 and self.rng.random() < 0.4
        out = list(a.shape)
        if keep:
            out[axis] = "1"
        else:
            del out[axis]
        out = tuple(out)
        kd = ", keepdims = true" if keep else ""
        if len(a.shape) >= 2 and axis == len(a.shape) - 1 and self.rng.random() < 0.3:
            axis = -1  # the last axis, by its negative index
        if a.ty == "bool":
            fn = self.rng.choice(["sum", "max", "min"])
            return self.emit("%s(%s, %d%s)" % (fn, a.name, axis, kd), "i32", out, length)
        rty = reduced_type(a.ty)
        nn = a.nonneg
        r = self.rng.random()
        if r < 0.3:
            bound = a.bound * length
            if not Val("", rty, out, bound, a.frac, nn).fits(rty):
                return None
            return self.emit("sum(%s, %d%s)" % (a.name, axis, kd), rty, out, bound, a.frac, nonneg=nn)
        if r < 0.55:
            fn = self.rng.choice(["max", "min"])
            return self.emit("%s(%s, axis = %d%s)" % (fn, a.name, axis, kd), rty, out, a.bound, a.frac,
                             nonneg=nn)
        if r < 0.7:
            fn = self.rng.choice(["argmax", "argmin"])
            return self.emit("%s(%s, %d%s)" % (fn, a.name, axis, kd), "i32", out, length, nonneg=True)
        if r < 0.8 and a.ty in INTS:
            bound = 1
            while bound <= a.bound:
                bound <<= 1
            return self.emit("xor_sum(%s, %d%s)" % (a.name, axis, kd), rty, out, bound, nonneg=nn)
        if r < 0.9:
            # a product of signs (of 0/1 for unsigned types): exact in any
            # order; as a scan sometimes
            lo = 0 if a.ty in UNSIGNED else -1
            sign = "where(%s > %s, %s, %s)" % (a.name, self.lit(a.ty, 0), self.lit(a.ty, 1), self.lit(a.ty, lo))
            if a.ty not in ("i32", "f32"):
                sign = "cast<%s>(%s)" % (a.ty, sign)  # the literals make an i32 or f32 tile
            sign = self.emit(sign, a.ty, a.shape, 1, keep=False, nonneg=lo == 0)
            if self.rng.random() < 0.3:
                return self.emit("cumprod(%s, %d)" % (sign.name, axis), rty, a.shape, 1, nonneg=lo == 0)
            return self.emit("prod(%s, %d%s)" % (sign.name, axis, kd), rty, out, 1, nonneg=lo == 0)
        # inclusive scan: the input's shape
        bound = a.bound * length
        if not Val("", rty, a.shape, bound, a.frac, nn).fits(rty):
            return None
        return self.emit("cumsum(%s, %d)" % (a.name, axis), rty, a.shape, bound, a.frac, nonneg=nn)

    def reshape(self, a):
        if len(a.shape) == 3:
            if self.rng.random() < 0.5:
                perm = self.rng.choice([[0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]])
                return self.emit("permute(%s, [%s])" % (a.name, ", ".join(map(str, perm))), a.ty,
                                 tuple(a.shape[i] for i in perm), a.bound, a.frac)
            return self.merge(a)
        if len(a.shape) == 2 and self.rng.random() < 0.3:
            # rank 3: one dimension split in two
            axis = self.rng.choice([0, 1])
            n = self.dim(a.shape[axis])
            if n < 2:
                return None
            f = self.rng.choice([f for f in (2, 4, n // 2) if 2 <= f <= n // 2] or [n])
            parts = [self.canon(f), self.canon(n // f)]
            if self.rng.random() < 0.5:
                parts.reverse()
            shape = tuple(a.shape[:axis]) + tuple(parts) + tuple(a.shape[axis + 1:])
            return self.emit("reshape(%s, [%s])" % (a.name, ", ".join(shape)), a.ty, shape, a.bound, a.frac)
        if len(a.shape) == 1 and a.shape[0] != "1":
            which = self.rng.random()
            if which < 0.5:
                return self.emit("%s[:, None]" % a.name, a.ty, (a.shape[0], "1"), a.bound, a.frac)
            return self.emit("%s[None, :]" % a.name, a.ty, ("1", a.shape[0]), a.bound, a.frac)
        if len(a.shape) == 2 and "1" not in a.shape:
            r = self.rng.random()
            t = (a.shape[1], a.shape[0])
            if r < 0.5:
                return self.emit("trans(%s)" % a.name, a.ty, t, a.bound, a.frac)
            if r < 0.75:
                return self.emit("reshape(%s, [%s, %s])" % (a.name, t[0], t[1]), a.ty, t, a.bound, a.frac)
            # through rank 1 and back
            flat = self.emit("reshape(%s, [%s * %s])" % (a.name, a.shape[0], a.shape[1]), a.ty,
                             ("%s*%s" % a.shape,), a.bound, a.frac, keep=False)
            return self.emit("reshape(%s, [%s, %s])" % (flat.name, a.shape[0], a.shape[1]), a.ty,
                             a.shape, a.bound, a.frac)
        if len(a.shape) == 2 and a.shape[1] == "1":
            return self.emit("reshape(%s, [%s])" % (a.name, a.shape[0]), a.ty, (a.shape[0],),
                             a.bound, a.frac)
        if len(a.shape) == 2 and a.shape[0] == "1":
            return self.emit("broadcast(%s, [%s, %s])" % (a.name, self.other(a.shape[1]), a.shape[1]),
                             a.ty, (self.other(a.shape[1]), a.shape[1]), a.bound, a.frac)
        return None

    def merge(self, a, keep=True):
        """A rank-3 value as rank 2: two neighbouring dimensions merged."""
        d = [self.dim(x) for x in a.shape]
        if self.rng.random() < 0.5:
            shape = (self.canon(d[0] * d[1]), a.shape[2])
        else:
            shape = (a.shape[0], self.canon(d[1] * d[2]))
        return self.emit("reshape(%s, [%s])" % (a.name, ", ".join(shape)), a.ty, shape, a.bound, a.frac,
                         keep=keep)

    def other(self, d):
        return {"BM": "BN", "BN": "BM"}.get(d, "BM")

    def dot(self):
        # a [X, Y] and b [Y, Z] among the values, operand types as dot wants
        pairs = []
        # 2-d tiles, every dimension at least 16 (the matrix units' smallest)
        ok2 = lambda v: len(v.shape) == 2 and v.ty != "bool" and min(map(self.dim, v.shape)) >= 16
        for a in self.vals:
            if not ok2(a):
                continue
            for b in self.vals:
                if not ok2(b) or b.shape[0] != a.shape[1]:
                    continue
                pairs.append((a, b))
        if not pairs:
            # make one: a [BM, BN] value times the transpose of another
            mn = [v for v in self.vals if v.shape == ("BM", "BN") and v.ty != "bool"]
            if not mn:
                return None
            a = self.rng.choice(mn)
            t = self.rng.choice(mn)
            b = self.emit("trans(%s)" % t.name, t.ty, ("BN", "BM"), t.bound, t.frac)
            pairs = [(a, b)]
        a, b = self.rng.choice(pairs)
        k = self.dim(a.shape[1])
        ty = self.rng.choice(["f16", "bf16", "f32", "i8", "f8e4m3", "f8e5m2"])
        if ty == "f32" and self.rng.random() < 0.5:
            prec = ', precision = "tf32"'
            ok = lambda v: v.frac == 0 and v.bound <= 1024  # tf32 keeps 11 bits
        else:
            prec = ""
            ok = lambda v: v.fits(ty)
        if not (ok(a) and ok(b)):
            return None
        # f32 without tf32 is scalar FMAs on most targets (with tf32 too on
        # gfx11, which has no tf32 matrix instruction), unrolled: past a
        # thousand per thread ptxas and LLVM take seconds to minutes and
        # gigabytes (a known limit, docs/testing.md), which is not what this
        # looks for
        if ty == "f32" and \
                self.dim(a.shape[0]) * self.dim(b.shape[1]) * k // (32 * self.warps) > 1024:
            return None
        if ty == "i8" and (a.frac or b.frac or a.ty in FLOATS and (a.frac or b.frac)):
            return None
        tys = [ty, ty]
        if ty.startswith("f8") and self.rng.random() < 0.3:
            tys[1] = "f8e5m2" if ty == "f8e4m3" else "f8e4m3"
            if not b.fits(tys[1]):
                return None
        ops = []
        for v, t in zip((a, b), tys):
            ops.append(v.name if v.ty == t else "cast<%s>(%s)" % (t, v.name))
        rty = "i32" if ty == "i8" else "f32"
        bound = a.bound * b.bound * k
        frac = a.frac + b.frac
        if not Val("", rty, (), bound, frac).fits(rty):
            return None
        shape = (a.shape[0], b.shape[1])
        acc = self.pick(lambda v: v.ty == rty and v.shape == shape)
        if acc is not None and self.rng.random() < 0.5 and Val("", rty, (), bound + acc.bound,
                                                              max(frac, acc.frac)).fits(rty):
            return self.emit("dot(%s, %s, %s%s)" % (ops[0], ops[1], acc.name, prec), rty, shape,
                             bound + acc.bound, max(frac, acc.frac))
        return self.emit("dot(%s, %s%s)" % (ops[0], ops[1], prec), rty, shape, bound, frac)

    def step(self):
        r = self.rng.random()
        # rank-3 values are few: taken more often than their share
        a = (self.rng.random() < 0.3 and self.pick(lambda v: len(v.shape) == 3)) or self.pick()
        if len(a.shape) == 3 and self.rng.random() < 0.4:
            return self.reshape(a) if self.rng.random() < 0.6 else self.reduce(a)
        if self.dots_ok and self.rng.random() < 0.15:
            return self.dot()
        if r < 0.25:
            return self.unary(a)
        if r < 0.55:
            b = self.pick(lambda v: broadcast(v.shape, a.shape) is not None)
            return self.binary(a, b)
        if r < 0.7:
            return self.reduce(a)
        if r < 0.85:
            return self.reshape(a)
        if r < 0.9:
            r2 = self.rng.random()
            if self.depth < 2 and r2 < 0.35:
                return self.branch_block(a)
            if self.depth < 2 and r2 < 0.6:
                return self.inner_loop(a)
            return self.branch(a)
        if self.dots_ok:
            return self.dot()
        return None

    def condition(self):
        """A runtime condition, uniform per program."""
        conds = ["s0 > 0", "s0 == 1", "pid0 % 2 == 0", "pid1 < 1", "s0 < 0 || pid0 == 1"]
        if self.in_loop:
            conds += ["kb > 0", "kb == BN || s0 > 1"]
        for j in self.loop_vars:
            conds += ["%s == 1" % j, "%s %% 2 == 0 && s0 != 2" % j]
        return self.rng.choice(conds)

    def inner_loop(self, a):
        """A `for` loop inside the program (constant or runtime trip count,
        at most 5) computing from its variable and updating a var of a's
        type and shape: shared memory and barriers inside loops, layouts
        of carried values, nested in the column loop too."""
        if a.ty == "bool" or not a.shape or self.registers(a) > 32:
            return None  # the loop carries it: past 255 registers, no variant
        bound, trips = self.rng.choice([("3", 3), ("1", 1), ("s0 + 2", 5), ("pid0 % 3 + 1", 3)])
        j = "j%d" % (self.n + 1)
        v = Val(self.fresh(), a.ty, a.shape, a.bound, a.frac, a.nonneg)
        self.lines.append("    var %s = %s;" % (v.name, a.name))
        self.lines.append("    for %s in range(0, %s) {" % (j, bound))
        saved = list(self.vals)
        self.vals.append(Val(j, "i32", (), trips, nonneg=True))
        self.loop_vars.append(j)
        made = self.block(self.rng.randint(1, 4))
        self.loop_vars.pop()
        ok = lambda x: x.ty == a.ty and x.ty != "bool" and broadcast(x.shape, a.shape) == a.shape
        src = [x for x in made if ok(x)] or [x for x in self.vals if ok(x)]
        self.vals = saved
        self.update(v, self.rng.choice(src), trips)
        self.lines.append("    }")
        self.vals.append(v)
        return v

    def block(self, steps):
        """`steps` steps in a nested block; its values are not seen after
        it. Returns the values it made."""
        saved, before = list(self.vals), len(self.vals)
        self.depth += 1
        for _ in range(steps):
            self.step()
        self.depth -= 1
        made = self.vals[before:]
        self.vals = saved
        return made

    def branch_block(self, a):
        """A var of a's type and shape set in an `if` (and its `else`) from
        values computed inside the branch: reductions, products and layout
        changes under control flow."""
        if a.ty == "bool":
            return None
        v = Val(self.fresh(), a.ty, a.shape, a.bound, a.frac, a.nonneg)
        self.lines.append("    var %s = %s;" % (v.name, a.name))
        self.lines.append("    if %s {" % self.condition())
        arms = 2 if self.rng.random() < 0.5 else 1
        for arm in range(arms):
            if arm:
                self.lines.append("    } else {")
            made = self.block(self.rng.randint(1, 4))
            ok = lambda x: x.ty == a.ty and broadcast(x.shape, a.shape) == a.shape
            src = [x for x in made if ok(x)] or [x for x in self.vals if ok(x)]
            x = self.rng.choice(src)
            self.lines.append("    %s = %s;" % (v.name, x.name))
            v.bound, v.frac, v.nonneg = max(v.bound, x.bound), max(v.frac, x.frac), v.nonneg and x.nonneg
        self.lines.append("    }")
        self.vals.append(v)
        return v

    def branch(self, a):
        """A var set in an `if` on a runtime condition (uniform per program:
        a scalar param, or the program id), merged after it."""
        if a.ty == "bool" and self.rng.random() < 0.5:
            return None
        b = self.pick(lambda v: v.ty == a.ty and broadcast(v.shape, a.shape) == a.shape)
        if b is None:
            return None
        cond = self.condition()
        v = Val(self.fresh(), a.ty, a.shape, max(a.bound, b.bound), max(a.frac, b.frac))
        self.lines.append("    var %s = %s;" % (v.name, a.name))
        if self.rng.random() < 0.5:
            self.lines.append("    if %s { %s = %s; }" % (cond, v.name, b.name))
        else:
            c = self.pick(lambda x: x.ty == a.ty and broadcast(x.shape, a.shape) == a.shape) or a
            v.bound = max(v.bound, c.bound)
            v.frac = max(v.frac, c.frac)
            self.lines.append("    if %s { %s = %s; } else { %s = %s; }" % (cond, v.name, b.name, v.name, c.name))
        self.vals.append(v)
        return v

    def dim(self, d):
        return evaluate_dim(d, self.consts)

    def canon(self, n):
        """A dimension of n elements, by name where BM or BN has that size."""
        return "BM" if n == self.consts["BM"] else "BN" if n == self.consts["BN"] else str(n)

    # -- the kernel -----------------------------------------------------
    def load_input(self, i, ty, mode):
        """An input tile [BM, BN] of x<i> (an [M, N] matrix, rows N apart)."""
        p = "x%d" % i
        self.params.append("%s: *%s" % (p, ty))
        self.inputs.append((p, ty, ("M", "N")))
        col = "kb" if mode.endswith("-loop") else "pid1 * BN"
        if mode in ("view", "view-loop"):
            self.lines.append("    let X%d = view(%s, [M, N], [N, 1]);" % (i, p))
            # outside the view: zero, or `other`
            other = self.rng.choice([None, None, 1, 2 if ty in UNSIGNED else -2])
            return self.emit("load(X%d, [pid0 * BM, %s], [BM, BN]%s)"
                             % (i, col, "" if other is None else ", other = %s" % self.lit(ty, other)),
                             ty, ("BM", "BN"), max(self.data_bound, 2))
        if mode in ("view-t", "view-t-loop"):
            # the matrix transposed: rows one element apart, columns N
            self.lines.append("    let X%d = view(%s, [N, M], [1, N]);" % (i, p))
            return self.emit("load(X%d, [%s, pid0 * BM], [BN, BM])" % (i, col), ty, ("BN", "BM"),
                             self.data_bound)
        if mode in ("view-3d", "view-3d-loop"):
            # row pairs: [M / 2, 2, N] (an odd last row is outside it, read
            # as zero), loaded as [BM / 2, 2, BN] and merged back; BM >= 4:
            # a dimension BM / 2 of 1 would broadcast in one variant only,
            # which the language refuses
            self.lines.append("    let X%d = view(%s, [M / 2, 2, N], [2 * N, N, 1]);" % (i, p))
            half = self.canon(self.consts["BM"] // 2)
            t = self.emit("load(X%d, [pid0 * (BM / 2), 0, %s], [BM / 2, 2, BN])" % (i, col), ty,
                          (half, "2", "BN"), self.data_bound)
            return self.emit("reshape(%s, [BM, BN])" % t.name, ty, ("BM", "BN"), self.data_bound)
        if mode == "view-s2":
            # every other row
            self.lines.append("    let X%d = view(%s, [(M + 1) / 2, N], [2 * N, 1]);" % (i, p))
            return self.emit("load(X%d, [pid0 * BM, %s], [BM, BN])" % (i, col), ty, ("BM", "BN"),
                             self.data_bound)
        other = self.rng.choice([0, 0, 0, 1, 2 if ty in UNSIGNED else -2])
        return self.emit("load(%s + rm[:, None] * N + rn[None, :], mask = inb, other = %s)"
                         % (p, self.lit(ty, other)), ty, ("BM", "BN"), self.data_bound)

    def generate(self):
        rng = self.rng
        self.data_bound = rng.choice([2, 3, 4])
        bm = rng.choice([16, 16, 32, 32, 64, 128, 1, 2, 8])
        bn = rng.choice([16, 16, 32, 32, 64, 128, 1, 4, 8])
        if bm * bn > 8192:
            bn = 8192 // bm
        self.consts = {"BM": bm, "BN": bn}
        self.dots_ok = bm >= 16 and bn >= 16
        warps = rng.choice([1, 2, 4, 4, 8])
        self.warps = warps
        self.loop = rng.random() < 0.35
        self.stages = None
        self.params, self.inputs, self.outputs = [], [], []
        self.zero_init = set()
        nin = rng.randint(1, 3)
        tys = [rng.choice(INPUT_TYPES) for _ in range(nin)]
        body_start = len(self.lines)
        if self.loop:
            self.gen_loop(tys)
        else:
            self.gen_tile(tys)
        params = ", ".join(self.params)
        head = ["kernel k<BM: i32, BN: i32>(%s, M: i32, N: i32, GN: i32, s0: i32, s1: f32)" % params,
                "    grid (cdiv(M, BM), %s)" % ("1" if self.loop else "cdiv(N, BN)"),
                "{"]
        self.lines = head + self.lines[body_start:] + ["}"]
        return "\n".join(self.lines) + "\n"

    def gen_tile(self, tys):
        rng = self.rng
        self.lines += ["    let pid0 = program_id(0);", "    let pid1 = program_id(1);",
                       "    let rm = pid0 * BM + arange(0, BM);",
                       "    let rn = pid1 * BN + arange(0, BN);",
                       "    let inb = (rm < M)[:, None] && (rn < N)[None, :];"]
        modes = ["ptr", "ptr", "ptr", "view", "view", "view-t", "view-s2"] + (["view-3d"] if self.consts["BM"] >= 4 else [])
        for i, ty in enumerate(tys):
            self.load_input(i, ty, rng.choice(modes))
            if rng.random() < 0.25:
                self.scalar_load(i, ty)
        self.vals.append(Val("rm", "i32", ("BM",), 1 << 12))
        self.vals.append(Val("pid0", "i32", (), 64))
        if rng.random() < 0.3:
            self.vals.append(Val("s0", "i32", (), 3))
            self.vals.append(Val("s1", "f32", (), 3))
        steps = rng.randint(6, 20)
        stop = rng.randint(0, steps) if rng.random() < 0.15 else -1
        for j in range(steps):
            if j == stop:
                self.early_return()
            self.step()
        if rng.random() < 0.25:
            self.atomics()
        self.store_outputs(rng.randint(2, 4))

    def gen_loop(self, tys):
        rng = self.rng
        self.lines += ["    let pid0 = program_id(0);", "    let pid1 = 0;",
                       "    let rm = pid0 * BM + arange(0, BM);"]
        # carried: a row accumulator and, with dots, a product accumulator
        self.lines.append("    var acc_r = zeros<f32>([BM]);")
        use_dot = self.dots_ok and rng.random() < 0.6
        chain = False
        if use_dot:
            self.params.append("w: *f16")
            self.inputs.append(("w", "f16", ("N", "16")))
            self.lines.append("    var acc_d = zeros<f32>([BM, 16]);")
            chain = rng.random() < 0.4
            if chain:
                self.params.append("w2: *f16")
                self.inputs.append(("w2", "f16", ("16", "16")))
                self.lines.append("    let w2t = load(w2 + arange(0, 16)[:, None] * 16 + arange(0, 16)[None, :]);")
                self.lines.append("    var acc_e = zeros<f32>([BM, 16]);")
        # pipelining depth of the loop's loads: at most 96 KiB of buffers (a
        # stage of 128x64 f64 tiles is 64 KiB per input); one stage has none
        stage = self.consts["BM"] * self.consts["BN"] * sum(WIDTH[t] // 8 for t in tys) + 32 * self.consts["BN"]
        self.stages = rng.choice([s for s in (1, 2, 2, 3, 4) if s == 1 or s * stage <= 96 * 1024])
        self.loop_line = len(self.lines)
        self.lines.append("    for kb in range(0, N, BN) {")
        self.in_loop = True
        self.lines.append("    let rn = kb + arange(0, BN);")
        self.lines.append("    let inb = (rm < M)[:, None] && (rn < N)[None, :];")
        for i, ty in enumerate(tys):
            # x0 is a [BM, BN] tile (the product's operand), the others may
            # come transposed
            modes = ["ptr", "ptr", "view-loop", "view-loop"] + (["view-t-loop"] if i else []) + \
                (["view-3d-loop"] if self.consts["BM"] >= 4 else [])
            self.load_input(i, ty, rng.choice(modes))
            if rng.random() < 0.15:
                self.scalar_load(i, ty)
        self.vals.append(Val("rm", "i32", ("BM",), 1 << 12))
        for _ in range(rng.randint(3, 12)):
            self.step()
        carried = [self.carry() for _ in range(rng.choice([0, 0, 1, 2]))]
        # the row accumulator takes every value of BM rows nothing else
        # reads (the sinks: otherwise dead code), as row sums in f32
        cand = [v for v in self.vals if v.shape and v.shape[0] == "BM"]
        sinks = self.unread(cand) or [rng.choice(cand)]
        terms, total = [], 0
        for v in sinks[-4:]:
            if v.ty == "bool":
                v = self.emit("cast<i32>(%s)" % v.name, "i32", v.shape, 1, keep=False)
            while len(v.shape) > 1:
                n = self.dim(v.shape[-1])
                v = self.emit("sum(%s, %d)" % (v.name, len(v.shape) - 1), reduced_type(v.ty),
                              v.shape[:-1], v.bound * n, v.frac, keep=False, nonneg=v.nonneg)
            if v.ty != "f32":
                v = self.emit("cast<f32>(%s)" % v.name, "f32", v.shape, v.bound, v.frac, keep=False)
            # at most 4 blocks of N (the input sizes stay below 4 * BN)
            if not Val("", "f32", (), (total + v.bound) * 4, 1).fits("f32"):
                continue
            total += v.bound
            terms.append(v.name)
        if not terms:
            terms = ["0.0"]
        self.acc_bound = total * 4 + 1
        self.lines.append("    acc_r += %s;" % " + ".join(terms))
        if use_dot:
            a = rng.choice([v for v in self.vals if v.shape == ("BM", "BN")])
            # the operand as f16: itself, cast, or 0/1 where it does not fit
            op, op_bound, op_frac = "cast<f16>(where(%s, 1, 0))" % a.name, 1, 0
            if a.ty == "f16":
                op, op_bound, op_frac = a.name, a.bound, a.frac
            elif a.ty != "bool" and a.fits("f16"):
                op, op_bound, op_frac = "cast<f16>(%s)" % a.name, a.bound, a.frac
            elif a.ty != "bool":
                op = "cast<f16>(where(%s > %s, 1, 0))" % (a.name, self.lit(a.ty, 0))
            if rng.random() < 0.5:
                self.lines.append("    let wt = load(w + rn[:, None] * 16 + arange(0, 16)[None, :], "
                                  "mask = (rn < N)[:, None], other = 0.0);")
            else:
                self.lines.append("    let wt = load(view(w, [N, 16], [16, 1]), [kb, 0], [BN, 16]);")
            self.lines.append("    acc_d = dot(%s, wt, acc_d);" % op)
            # a second product of the first's result, as attention's P V
            if chain and Val("", "f16", (), op_bound * 2 * self.consts["BN"], op_frac).fits("f16"):
                self.lines.append("    let pd = dot(%s, wt);" % op)
                self.lines.append("    acc_e = dot(cast<f16>(pd), w2t, acc_e);")
            elif chain:
                self.lines.append("    acc_e += acc_d;")
        self.lines.append("    }")
        self.in_loop = False
        self.vals = [Val("acc_r", "f32", ("BM",), self.acc_bound, 1)] + [c for c in carried if c]
        if use_dot:
            self.vals.append(Val("acc_d", "f32", ("BM", "16"), 1 << 20, 1))
            if chain:
                self.vals.append(Val("acc_e", "f32", ("BM", "16"), 1 << 22, 1))
        for _ in range(rng.randint(0, 3)):
            self.step()
        self.store_outputs(rng.randint(1, 2), loop=True)

    def carry(self):
        """A var of any type and shape updated in every iteration of the
        loop (at most 4), declared before it: layouts through the loop's
        carried values."""
        x = self.pick(lambda v: v.ty != "bool" and v.shape)
        if x is None:
            return None
        # registers per thread the loop carries (beside the products'):
        # past 255 a variant is dropped
        regs = self.registers(x)
        if self.carry_regs + regs > 48:
            return None
        self.carry_regs += regs
        c = Val(self.fresh(), x.ty, x.shape, 0, nonneg=True)  # zeros
        self.update(c, x, 4)
        self.lines.insert(self.loop_line, "    var %s = zeros<%s>([%s]);" % (c.name, c.ty, ", ".join(c.shape)))
        self.loop_line += 1
        return c

    def update(self, v, x, trips):
        """One update of the var v by x in a loop of at most `trips`
        iterations: a sum (where it stays exact), maximum/minimum, or x
        where it is positive (the last such iteration's value)."""
        r = self.rng.random()
        if r < 0.4 and Val("", v.ty, v.shape, v.bound + trips * x.bound, max(v.frac, x.frac),
                           v.nonneg and x.nonneg).fits(v.ty):
            if self.rng.random() < 0.5:
                self.lines.append("    %s += %s;" % (v.name, x.name))
            else:
                self.lines.append("    %s = %s + %s;" % (v.name, v.name, x.name))
            v.bound += trips * x.bound
        else:
            if r < 0.7:
                fn = self.rng.choice(["maximum", "minimum"])
                self.lines.append("    %s = %s(%s, %s);" % (v.name, fn, v.name, x.name))
            else:
                self.lines.append("    %s = where(%s > %s, %s, %s);" % (v.name, x.name, self.lit(x.ty, 0), x.name,
                                                                        v.name))
            v.bound = max(v.bound, x.bound)
        v.frac, v.nonneg = max(v.frac, x.frac), v.nonneg and x.nonneg

    def elements(self, shape):
        n = 1
        for d in shape:
            n *= self.dim(d)
        return n

    def registers(self, v):
        """Registers per thread a tile value takes (no copies)."""
        return self.elements(v.shape) * max(1, WIDTH.get(v.ty, 32) // 32) // (32 * self.warps)

    def scalar_load(self, i, ty):
        """One element of input i (a uniform scalar), sometimes masked, and
        sometimes a tile filled with it."""
        p = "x%d" % i
        off = self.rng.choice(["(pid0 * 7 + 3) % (M * N)", "(M * N - 1) / 2", "(s0 * s0 + pid0) % (M * N)"])
        other = self.lit(ty, 1)
        if self.rng.random() < 0.4:
            v = self.emit("load(%s + %s, mask = s0 > 0, other = %s)" % (p, off, other), ty, (),
                          max(self.data_bound, 1))
        else:
            v = self.emit("load(%s + %s)" % (p, off), ty, (), self.data_bound)
        if self.rng.random() < 0.5:
            shape = self.rng.choice([("BM", "BN"), ("BM",), ("BN", "2")])
            self.emit("full<%s>([%s], %s)" % (ty, ", ".join(shape), v.name), ty, shape, v.bound,
                      nonneg=v.nonneg)

    def early_return(self):
        """Some programs stop here: their outputs keep the poison."""
        cond = self.rng.choice(["s0 > 1", "pid0 == 1", "pid1 % 2 == 1 && s0 != 0", "pid0 + pid1 == 2"])
        self.lines.append("    if %s { return; }" % cond)
        self.early = True

    def atomics(self):
        """atomic_add / atomic_max / atomic_min of integer values (i32, u32,
        i64, u64, f32, f64 tiles) into a 16-element output (zero before the
        launch): the result does not depend on the order the programs and
        lanes arrive in (float sums stay exact: every element of every
        program's tile counted). The old values atomics return are
        order-dependent and not read."""
        rng = self.rng
        # at most this many elements reach one output element
        count = (3 * self.consts["BM"] + 16) * 4 * self.consts["BN"]
        cands = [v for v in self.vals if v.ty in ("i32", "u32", "i64", "u64", "f32", "f64") and v.frac == 0
                 and v.bound < (1 << 16) and v.shape in (("BM", "BN"), ("BM",), ())
                 and (v.ty in INTS or v.bound * count <= EXACT[v.ty])]
        if not cands:
            return
        v = rng.choice(cands)
        if v.ty in ("i32", "u32", "i64", "u64") and v.shape == ("BM", "BN") and rng.random() < 0.4:
            return self.cas(v)
        fn = rng.choice(["atomic_add", "atomic_add"] + (["atomic_max", "atomic_min"] if v.ty != "f64" else []))
        o = "atom%d" % len(self.outputs)
        self.params.append("%s: *%s" % (o, v.ty))
        if v.shape == ("BM", "BN"):
            idx = "(rm[:, None] + rn[None, :]) %% %d" % rng.choice([1, 3, 16])
            mask = ", mask = inb"
        elif v.shape == ("BM",):
            idx = "rm %% %d" % rng.choice([1, 5, 16])
            mask = ", mask = rm < M"
        else:
            idx = "(pid0 + pid1) % 16"
            mask = ""
        self.lines.append("    %s(%s + %s, %s%s);" % (fn, o, idx, v.name, mask))
        self.outputs.append((o, v.ty, ("1", "16")))
        self.zero_init.add(o)

    def cas(self, v):
        """Two rounds of atomic_cas on a zeroed [GM * BM, GN * BN] output,
        one element per lane (so no order matters): 0 -> v where v > 0,
        then v -> v + 1 where v is odd. The second round's old values are
        stored too."""
        o, olds = "atom%d" % len(self.outputs), "old%d" % len(self.outputs)
        self.params += ["%s: *%s" % (o, v.ty), "%s: *%s" % (olds, v.ty)]
        ptrs = "%s + (pid0 * BM + arange(0, BM))[:, None] * (GN * BN) + (pid1 * BN + arange(0, BN))[None, :]"
        z, one = self.lit(v.ty, 0), self.lit(v.ty, 1)
        self.lines.append("    atomic_cas(%s, where(%s > %s, %s, %s), %s);"
                          % (ptrs % o, v.name, z, z, one, v.name))
        self.lines.append("    let %s_v = atomic_cas(%s, where(%s %% 2 != %s, %s, %s), %s + %s);"
                          % (olds, ptrs % o, v.name, z, v.name, z, v.name, one))
        self.lines.append("    store(%s, %s_v);" % (ptrs % olds, olds))
        for name in (o, olds):
            self.outputs.append((name, v.ty, ("GM*BM", "GN*BN")))
            self.zero_init.add(name)

    def unread(self, vals):
        """The values of `vals` that no statement reads (yet): the ends of
        the chains, dead code unless stored or summed."""
        read = set()
        for line in self.lines:
            # every name but those assigned (`let v =`, `var v =`, `v = `)
            read.update(re.findall(r"\bv\d+\b(?!\s*=[^=])", line))
        return [v for v in vals if v.name not in read]

    def store_outputs(self, count, loop=False):
        rng = self.rng
        # the values nothing reads yet, latest first (the deepest chains);
        # then any other
        cands = [v for v in self.vals if v.name != "rm"]
        sinks = list(reversed(self.unread(cands)))
        rest = [v for v in cands if v not in sinks]
        rng.shuffle(rest)
        chosen = (sinks + rest)[:max(count, min(len(sinks), 5))]
        for j, v in enumerate(chosen):
            o = "out%d" % j
            if len(v.shape) == 3:
                v = self.merge(v, keep=False)
            ty = "i32" if v.ty == "bool" else v.ty
            val = "cast<i32>(%s)" % v.name if v.ty == "bool" else v.name
            self.params.append("%s: *%s" % (o, ty))
            if v.shape == ("BM", "BN") and not loop and rng.random() < 0.6:
                if rng.random() < 0.4:
                    # through a view: the box's part outside [M, N] is not
                    # written (the poison stays)
                    self.lines.append("    store(view(%s, [M, N], [N, 1]), [pid0 * BM, pid1 * BN], %s);" % (o, val))
                else:
                    self.lines.append("    store(%s + rm[:, None] * N + rn[None, :], %s, mask = inb);" % (o, val))
                self.outputs.append((o, ty, ("M", "N")))
                continue
            if len(v.shape) == 2 and v.shape[0] == "BM" and loop and rng.random() < 0.4:
                # rows past M not written
                c = v.shape[1]
                self.lines.append("    store(view(%s, [M, %s], [%s, 1]), [pid0 * BM, 0], %s);" % (o, c, c, val))
                self.outputs.append((o, ty, ("M", c)))
                continue
            # per program: rows pid0 * R + i, columns pid1 * C + j of a
            # [GM * R, GN * C] matrix, stored whole (unmasked)
            shape = v.shape
            if len(shape) == 0:
                r, c = "1", "1"
                self.lines.append("    store(%s + pid0 * GN + pid1, %s);" % (o, val))
            else:
                if len(shape) == 1:
                    val = "%s[:, None]" % val
                    shape = (shape[0], "1")
                r, c = shape
                ri = "pid0 * %s + arange(0, %s)" % (r, r)
                ci = "pid1 * %s + arange(0, %s)" % (c, c)
                self.lines.append("    store(%s + (%s)[:, None] * (GN * %s) + (%s)[None, :], %s);"
                                  % (o, ri, c, ci, val))
            self.outputs.append((o, ty, ("GM*" + r, "GN*" + c)))


def npy_descr(ty):
    return NPY.get(ty, "<f4")  # bf16 is given and returned as float32


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", ""


def evaluate_dim(expr, env):
    """A symbolic dimension's value: names of env and integers joined by *
    and / (left to right; the divisions are exact)."""
    v, op = None, "*"
    for t in re.findall(r"[A-Za-z_]\w*|\d+|[*/]", expr):
        if t in "*/":
            op = t
            continue
        x = env[t] if t in env else int(t)
        v = x if v is None else v * x if op == "*" else v // x
    return v


def compile_seed(g, d, targets, kiln, bundle):
    """Compiles the seed's kernel (d/k.tile) for `targets` into `bundle`:
    None, or (kind of failure, message)."""
    cmd = [kiln, "compile", os.path.join(d, "k.tile"), "--targets=" + ",".join(targets), "-D",
           "BM=%d" % g.consts["BM"], "-D", "BN=%d" % g.consts["BN"], "-D", "warps=%d" % g.warps,
           "-o", bundle] + (["-D", "stages=%d" % g.stages] if g.stages else [])
    rc, out = run(cmd, 600)
    if rc == 0:
        return None
    kind = {"timeout": "compile timeout (600 s)"}.get(rc) or ("compile crash" if rc < 0 else "compile error")
    internal = re.search(r"' op |LLVM ERROR|failed to legalize|internal|Assertion", out)
    if kind == "compile error" and not internal:
        kind = "compile error (a generator bug, or a wrong diagnostic)"
    elif kind == "compile error":
        kind = "internal compiler error"
    return kind, out.strip()[-3000:]


def write_inputs(seed, g, d):
    """Writes the seed's inputs and poisoned outputs into d: the kernel's
    arguments (NAME=FILE relative to d, NAME=VALUE) and the sizes."""
    rng = random.Random(seed * 7919 + 1)
    bm, bn = g.consts["BM"], g.consts["BN"]
    # sizes: ragged, or whole multiples of 16 (the fast paths)
    if rng.random() < 0.5:
        M = rng.randint(1, 3 * bm + 5)
        N = rng.randint(1, min(4 * bn, 3 * bn + 7))
    else:
        M = 16 * rng.randint(1, max(1, (3 * bm) // 16 + 1))
        N = 16 * rng.randint(1, max(1, (4 * bn) // 16))
    if g.loop:
        N = min(N, 4 * bn)  # the accumulator bound counts at most 4 blocks
    GM = -(-M // bm)
    GN = 1 if g.loop else -(-N // bn)
    env = {"M": M, "N": N, "GM": GM, "GN": GN, "BM": bm, "BN": bn}
    argv = []
    for name, ty, shape in g.inputs:
        dims = [evaluate_dim(s, env) for s in shape]
        count = dims[0] * dims[1]
        if ty in INTS:
            vals = [rng.randint(0 if ty in UNSIGNED else -g.data_bound, g.data_bound) for _ in range(count)]
        elif name.startswith("w"):
            vals = [float(rng.randint(-2, 2)) for _ in range(count)]
        else:
            vals = [float(rng.randint(-g.data_bound, g.data_bound)) for _ in range(count)]
        write_npy(os.path.join(d, name + ".npy"), npy_descr(ty), dims, vals)
        argv.append("%s=%s.npy" % (name, name))
    for name, ty, shape in g.outputs:
        dims = [evaluate_dim(s, env) for s in shape]
        poison = [POISON.get(ty, float("nan"))] * (dims[0] * dims[1])
        if name in g.zero_init:
            poison = [0 if ty in INTS else 0.0] * (dims[0] * dims[1])
        write_npy(os.path.join(d, name + ".npy"), npy_descr(ty), dims, poison)
        argv.append("%s=%s.npy" % (name, name))
    argv += ["M=%d" % M, "N=%d" % N, "GN=%d" % GN, "s0=%d" % rng.randint(-3, 3),
             "s1=%d.0" % rng.randint(-3, 3)]
    outputs = [(name, ty, evaluate_dim(shape[1], env)) for name, ty, shape in g.outputs]
    return argv, outputs, "M=%d N=%d" % (M, N)


def run_image(kiln_run, bundle, dev, d, argv, outputs, od, wrapper=()):
    """Runs the bundle's kernel on `dev` with the seed's arguments (files
    relative to d), outputs into od: ({output: values}, None) or
    (None, (kind of failure, message))."""
    os.makedirs(od, exist_ok=True)
    args = [a if not a.endswith(".npy") else "%s=%s" % (a.split("=")[0], os.path.join(d, a.split("=", 1)[1]))
            for a in argv]
    rc, out = run(list(wrapper) + [kiln_run, bundle, "--kernel", "k", "--device", dev, "--out-dir", od] + args,
                  600)
    if rc != 0:
        return None, ("run failure on %s" % dev, ("rc %s\n" % rc) + out.strip()[-3000:])
    return {name: read_npy(os.path.join(od, name + ".npy"))[2] for name, _, _ in outputs}, None


def compare(ref, got, outputs, dev, poison_ok=False):
    """None when every output of `got` equals the host's `ref` bit for bit
    (NaN equals NaN), else (kind of failure, message). Unless poison_ok
    (programs may return early), a NaN the host left is a failure too."""
    for name, ty, cols in outputs:
        a, b = ref[name], got[name]
        bad = [i for i, (x, y) in enumerate(zip(a, b)) if not (x == y or x != x and y != y)]
        if bad or len(a) != len(b):
            msg = "%s: %d of %d elements differ from the host's; first: %s" % (
                name, len(bad), len(a), ", ".join("[%d, %d] host %r %s %r" % (i // cols, i % cols, a[i], dev, b[i])
                                                 for i in bad[:4]))
            return "mismatch on %s" % dev, msg
        if any(x != x for x in a) and ty not in INTS and not poison_ok:
            return "host left NaN", "%s holds NaN (poison not overwritten?)" % name
    return None


def one(seed, args, workdir):
    """Generates, compiles and runs one seed on the host and args.targets:
    (None or the kind of failure, message, the seed's folder)."""
    g = Gen(seed)
    src = g.generate()
    d = os.path.join(workdir, str(seed))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "k.tile"), "w") as f:
        f.write(src)
    bundle = os.path.join(d, "k.kpack")
    fail = compile_seed(g, d, ["host"] + args.targets, args.kiln, bundle)
    if fail:
        return fail + (d,)
    argv, outputs, sizes = write_inputs(seed, g, d)
    results = {}
    for dev in ["host"] + args.targets:
        od = os.path.join(d, "out-" + dev.replace(":", "_"))
        results[dev], fail = run_image(args.kiln_run, bundle, dev, d, argv, outputs, od)
        if fail:
            return fail + (d,)
        if dev != "host":
            fail = compare(results["host"], results[dev], outputs, dev, g.early)
            if fail:
                return fail + (d,)
    if args.pack:
        # the images for the GPU, one bundle per target (a device runs the
        # best image of a bundle: one each, so that every target's code runs)
        case = {"seed": seed, "argv": argv, "outputs": outputs, "sizes": sizes, "bundles": {},
                "poison_ok": g.early}
        for t in args.pack_targets:
            name = "k-%s.kpack" % t.replace(":", "_")
            fail = compile_seed(g, d, [t], args.kiln, os.path.join(d, name))
            if fail:
                return fail + (d,)
            case["bundles"][t] = name
        # the host's outputs are the reference; the emulators' and the
        # bundle they ran are not needed any more
        os.rename(os.path.join(d, "out-host"), os.path.join(d, "expected"))
        for dev in args.targets:
            shutil.rmtree(os.path.join(d, "out-" + dev.replace(":", "_")), ignore_errors=True)
        os.remove(bundle)
        with open(os.path.join(d, "case.json"), "w") as f:
            json.dump(case, f, indent=1)
    return None, sizes, d


def replay(args):
    """Runs every packed seed's bundles on args.device and compares with
    the host's outputs recorded when the pack was made. What a failing seed
    needs stays in args.keep (or a temporary folder): its outputs, and its
    unpacked files when the pack is a .tar.xz; a passing seed's go."""
    outdir = args.keep or tempfile.mkdtemp(prefix="kernelsmith-replay-")
    root = args.replay
    unpacked = os.path.isfile(root)
    if unpacked:
        # a pack as gpu-pack.sh writes it: kernelsmith.tar.xz
        with tarfile.open(root) as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(os.path.join(outdir, "packed"), filter="data")
            else:
                tar.extractall(os.path.join(outdir, "packed"))
        root = os.path.join(outdir, "packed")
        top = os.listdir(root)
        if len(top) == 1 and os.path.isdir(os.path.join(root, top[0])):
            root = os.path.join(root, top[0])
    cases = sorted(int(s) for s in os.listdir(root) if os.path.isfile(os.path.join(root, s, "case.json"))) \
        if os.path.isdir(root) else []
    if not cases:
        print("kernelsmith: error: no packed seeds (*/case.json) in %s" % args.replay)
        return 2
    wrapper = args.wrapper.split() if args.wrapper else ()
    failures, count, images = [], 0, 0
    start = time.time()
    for seed in cases:
        if args.time_limit and time.time() - start > args.time_limit:
            break
        d = os.path.join(root, str(seed))
        with open(os.path.join(d, "case.json")) as f:
            case = json.load(f)
        outputs = [tuple(o) for o in case["outputs"]]
        ref = {name: read_npy(os.path.join(d, "expected", name + ".npy"))[2] for name, _, _ in outputs}
        count += 1
        failed_before = len(failures)
        for target, bundle in sorted(case["bundles"].items()):
            images += 1
            # --device emu: each emulator's bundle on that emulator
            dev = target if args.device == "emu" else args.device
            od = os.path.join(outdir, str(seed), "out-" + target.replace(":", "_"))
            got, fail = run_image(args.kiln_run, os.path.join(d, bundle), dev, d, case["argv"],
                                  outputs, od, wrapper)
            fail = fail or compare(ref, got, outputs, "%s (%s image)" % (dev, target),
                                   case.get("poison_ok", False))
            if fail:
                failures.append("%d/%s" % (seed, target))
                print("seed %d, %s image: %s (%s)\n  %s" % (seed, target, fail[0], d,
                                                          fail[1].replace("\n", "\n  ")), flush=True)
            elif args.v:
                print("seed %d, %s image: ok (%s)" % (seed, target, case["sizes"]), flush=True)
        if len(failures) == failed_before:
            shutil.rmtree(os.path.join(outdir, str(seed)), ignore_errors=True)
            if unpacked:
                shutil.rmtree(d, ignore_errors=True)
    if unpacked:
        # the seeds not replayed (time limit)
        for seed in cases[count:]:
            shutil.rmtree(os.path.join(root, str(seed)), ignore_errors=True)
    print("kernelsmith: %d packed seeds replayed on %s (%d bundles), %d failed%s"
          % (count, args.device, images, len(failures), ": " + " ".join(failures) if failures else ""))
    if not failures:
        shutil.rmtree(outdir if not args.keep else os.path.join(outdir, "packed"), ignore_errors=True)
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", default=None, help="A:B, the seeds A to B-1")
    ap.add_argument("--seed", type=int, action="append", default=[])
    ap.add_argument("--count", type=int, default=None, help="this many fresh seeds")
    ap.add_argument("--targets", default=",".join(DEFAULT_TARGETS))
    ap.add_argument("--kiln", default=os.path.join(ROOT, "build", "bin", "kiln"))
    ap.add_argument("--kiln-run", default=os.path.join(ROOT, "build", "bin", "kiln-run"))
    ap.add_argument("--keep", default=None, help="keep every seed's files under this folder")
    ap.add_argument("--time-limit", type=float, default=None, help="stop starting seeds after S seconds")
    ap.add_argument("--print", action="store_true", help="print the kernels of the seeds and exit")
    ap.add_argument("--pack", default=None, metavar="DIR",
                    help="keep the seeds that pass in DIR, with bundles for --pack-targets and the "
                         "host's outputs, for --replay on a machine without the compiler")
    ap.add_argument("--pack-targets", default="sm_80,sm_90a")
    ap.add_argument("--replay", default=None, metavar="DIR",
                    help="run the seeds packed in DIR on --device and compare with the host's outputs")
    ap.add_argument("--device", default="cuda:0",
                    help="the device of --replay (emu: each emulator's bundle on that emulator)")
    ap.add_argument("--wrapper", default=None,
                    help="--replay: a command line to run kiln-run under (compute-sanitizer --tool racecheck)")
    ap.add_argument("-v", action="store_true")
    args = ap.parse_args()
    if args.replay:
        return replay(args)
    args.targets = [t for t in args.targets.split(",") if t]
    args.pack_targets = [t for t in args.pack_targets.split(",") if t]
    seeds = list(args.seed)
    if args.seeds:
        a, b = args.seeds.split(":")
        seeds += list(range(int(a), int(b)))
    if not seeds:
        # fresh seeds: one, --count, or as many as the time limit allows
        sysrand = random.SystemRandom()
        n = args.count or (None if args.time_limit else 1)
        seeds = [sysrand.randrange(1 << 30) for _ in range(n)] if n else \
            (sysrand.randrange(1 << 30) for _ in iter(int, 1))
    if args.print:
        for s in seeds:
            print("// seed %d\n%s" % (s, Gen(s).generate()))
        return 0
    workdir = args.pack or args.keep or tempfile.mkdtemp(prefix="kernelsmith-")
    os.makedirs(workdir, exist_ok=True)
    failures = []
    start = time.time()
    count = 0
    for s in seeds:
        if args.time_limit and time.time() - start > args.time_limit:
            break
        count += 1
        kind, msg, d = one(s, args, workdir)
        if kind:
            failures.append(s)
            if args.pack:
                # out of the pack, next to it
                dest = os.path.join(args.pack.rstrip("/") + ".failed", str(s))
                shutil.rmtree(dest, ignore_errors=True)
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                shutil.move(d, dest)
                d = dest
            print("seed %d: %s (%s)\n  %s" % (s, kind, d, msg.replace("\n", "\n  ")), flush=True)
        else:
            if args.v:
                print("seed %d: ok (%s)" % (s, msg), flush=True)
            if not args.keep and not args.pack:
                shutil.rmtree(d, ignore_errors=True)
    print("kernelsmith: %d seeds, %d failed%s" % (count, len(failures),
                                                  ": " + " ".join(map(str, failures)) if failures else ""))
    if args.pack:
        print("kernelsmith: %d seeds packed in %s for %s" % (count - len(failures), args.pack,
                                                              ", ".join(args.pack_targets)))
    elif not args.keep and not failures:
        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
