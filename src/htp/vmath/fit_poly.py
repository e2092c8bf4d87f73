#!/usr/bin/env python3
"""Minimax coefficients of the vmath polynomials (weighted Remez exchange, double precision).

Run: python3 src/htp/vmath/fit_poly.py. Prints each polynomial's coefficients (highest degree
first, rounded to float) and its max weighted error before float rounding. The C++ tests measure
the final accuracy of the float implementation against libm in double.

  exp:  e^r = 1 + r + r^2 q(r),                 |r| <= ln2/2   (relative error of e^r)
  tanh: tanh(x) = x + x^3 t(x^2),               |x| < 0.75     (relative error of tanh)
  log:  log1p(f) = 2s + s z l(z), s = f/(2+f),  |s| <= (sqrt2 - 1) / (sqrt2 + 1)
"""
import math
import struct


def f32(v):
    return struct.unpack('f', struct.pack('f', v))[0]


def solve(a, b):
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                for k in range(c, n + 1):
                    m[r][k] -= f * m[c][k]
    return [m[i][n] / m[i][i] for i in range(n)]


def remez(g, w, deg, lo, hi, iters=30, grid=20000):
    """Polynomial p of degree deg minimizing max |w(t) (g(t) - p(t))| on [lo, hi]."""
    n = deg + 2
    xs = [0.5 * (lo + hi) - 0.5 * (hi - lo) * math.cos(math.pi * i / (n - 1)) for i in range(n)]
    pts = [lo + (hi - lo) * i / grid for i in range(grid + 1)]
    coef, err = None, 0.0
    for _ in range(iters):
        a = [[x ** j for j in range(deg + 1)] + [(-1) ** i / max(w(x), 1e-30)] for i, x in enumerate(xs)]
        sol = solve(a, [g(x) for x in xs])
        coef, e_ref = sol[:-1], sol[-1]
        def err_at(t):
            return w(t) * (g(t) - sum(c * t ** j for j, c in enumerate(coef)))
        es = [err_at(t) for t in pts]
        # one extremum per run of equal sign
        ext, i = [], 0
        while i < len(pts):
            j, best = i, i
            while j < len(pts) and (es[j] >= 0) == (es[i] >= 0):
                if abs(es[j]) > abs(es[best]):
                    best = j
                j += 1
            ext.append(best)
            i = j
        while len(ext) > n:  # drop the smallest extremum at an end
            if abs(es[ext[0]]) < abs(es[ext[-1]]):
                ext.pop(0)
            else:
                ext.pop()
        if len(ext) < n:
            break
        xs = [pts[k] for k in ext]
        err = max(abs(e) for e in es)
        if abs(err - abs(e_ref)) < 1e-3 * err:
            break
    return coef, err


def show(name, coef, err):
    print(f"{name}: max weighted error {err:.3e}")
    for j in reversed(range(len(coef))):
        c = f32(coef[j])
        print(f"  c{j} = {c.hex()}  ({c:.9g})")


def exp_q(r):
    if abs(r) < 1e-3:  # series: avoids cancellation in e^r - 1 - r
        return 0.5 + r / 6 + r * r / 24 + r ** 3 / 120 + r ** 4 / 720
    return (math.exp(r) - 1 - r) / (r * r)


def tanh_t(z):
    x = math.sqrt(z)
    if x < 1e-3:
        return -1 / 3 + 2 * z / 15 - 17 * z * z / 315
    return (math.tanh(x) - x) / (x ** 3)


def tanh_w(z):
    x = math.sqrt(z)
    return z if x < 1e-6 else x ** 3 / math.tanh(x)


def log_l(z):
    s = math.sqrt(z)
    if s < 1e-3:
        return 2 / 3 + 2 * z / 5 + 2 * z * z / 7
    return (2 * math.atanh(s) - 2 * s) / (s * z)


if __name__ == '__main__':
    h = math.log(2) / 2
    show("exp q(r), degree 4", *remez(exp_q, lambda r: r * r / math.exp(r), 4, -h, h))
    show("tanh t(z), degree 6", *remez(tanh_t, tanh_w, 6, 0.0, 0.75 ** 2))
    zmax = ((math.sqrt(2) - 1) / (math.sqrt(2) + 1)) ** 2
    show("log l(z), degree 3", *remez(log_l, lambda z: z / 2 if z > 0 else 1e-30, 3, 0.0, zmax))
