#!/usr/bin/env python3
"""Prints the Chebyshev coefficients of compiler/GPU/MathExpansion.cpp's f64
erf (kErfSmall, kErfLarge), computed with mpmath at 50 digits.

    python3 scripts/fit-erf-f64.py      # needs python3-mpmath

Two pieces, each a Chebyshev series in t in [-1, 1] evaluated by Clenshaw's
recurrence:
  |x| < 2:  erf(x) = x * S(t),  S interpolates erf(x) / x in u = x^2 on
            [0, 4], t = u / 2 - 1;
  |x| >= 2: erfc(x) = exp(-x^2) * L(t), L interpolates exp(x^2) erfc(x) in
            s = 1 / x on [1/6, 1/2] (x in [2, 6]; beyond 6, erf is 1 in
            f64), t = 6 s - 2.
Coefficients are the interpolant's at N Chebyshev nodes, cut after the
last one above 1e-17 (both series then have 18 terms); the tail left out
is below 1e-16 in S and L.
"""

import mpmath as mp

mp.mp.dps = 50
N = 64  # interpolation nodes


def chebyshev(f, a, b):
    xs = [mp.cos(mp.pi * (k + mp.mpf(1) / 2) / N) for k in range(N)]
    fs = [f((b - a) / 2 * x + (a + b) / 2) for x in xs]
    c = [2 * mp.fsum(fs[k] * mp.cos(mp.pi * j * (k + mp.mpf(1) / 2) / N)
                     for k in range(N)) / N for j in range(N)]
    c[0] /= 2
    return c


def small(u):
    if u == 0:
        return 2 / mp.sqrt(mp.pi)
    return mp.erf(mp.sqrt(u)) / mp.sqrt(u)


def large(s):
    x = 1 / s
    return mp.exp(x * x) * mp.erfc(x)


TERMS = 18
for name, f, a, b in (("kErfSmall", small, mp.mpf(0), mp.mpf(4)),
                      ("kErfLarge", large, mp.mpf(1) / 6, mp.mpf(1) / 2)):
    c = chebyshev(f, a, b)
    assert all(abs(x) < 1e-16 for x in c[TERMS:]), name
    print("const double %s[%d] = {" % (name, TERMS))
    for x in c[:TERMS]:
        print("    %r," % float(x))
    print("};")
