"""Triton kernels for the PERF.md suite: the Triton anchors of run_suite.py.

Written for this benchmark in the style of the Triton tutorials (vector add,
fused softmax, layer norm, matrix multiplication, fused attention); not the
tutorials' text. Each kernel computes what the Kiln kernel of the same name
in examples/*.tile computes, on the same memory layout, so both read and
write the same bytes:

    vector_add(x, y, z)                 z = x + y                      (f32)
    axpy(a, x, y)                       y = a*x + y in place, f32 math (f32, bf16)
    softmax(x, y)                       row softmax, f32 math          (f32, bf16)
    layer_norm(x, w, b, eps, y, mean, rstd)  rows of x, f32 math       (bf16)
    row_sum(x, out), row_max(x, out)    one f32 per row                (f32)
    matmul(a, b, c)                     c = a @ b, f32 accumulation    (f16, bf16)
    attention(q, k, v, o, scale, causal)  FlashAttention-2 forward     (bf16)

Fairness: Kiln reports the fastest of its tune variants, so each Triton
kernel is autotuned too (triton.autotune over a small config list comparable
to Kiln's tune space; `config=` pins one config and skips autotuning, which
is also how the kernels run under TRITON_INTERPRET=1). Everything launches
on torch's current stream.

Differences from the tutorials worth knowing when reading the numbers:
softmax and layer norm use one program per row (the tutorial's softmax is
persistent); the attention kernel loads K/V through pointer tiles (the
Hopper tutorial uses TMA descriptors and warp specialization, so it is
faster on H100) and requires seq to be a multiple of BLOCK_M.

Importing this module imports triton; run_suite.py imports it lazily.
"""

import triton
import triton.language as tl

# --- elementwise -----------------------------------------------------------

_ELEMENTWISE_CONFIGS = [triton.Config({"BLOCK": b}, num_warps=w)
                        for b in (1024, 2048, 4096) for w in (4, 8)]


@triton.jit
def _vector_add_kernel(X, Y, Z, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    xv = tl.load(X + offs, mask=inside)
    yv = tl.load(Y + offs, mask=inside)
    tl.store(Z + offs, xv + yv, mask=inside)


@triton.jit
def _axpy_kernel(a, X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    xv = tl.load(X + offs, mask=inside).to(tl.float32)
    yv = tl.load(Y + offs, mask=inside).to(tl.float32)
    tl.store(Y + offs, (a * xv + yv).to(Y.dtype.element_ty), mask=inside)


_vector_add_tuned = triton.autotune(_ELEMENTWISE_CONFIGS, key=["n"])(_vector_add_kernel)
# In place: the autotuner must put y back after each trial run.
_axpy_tuned = triton.autotune(_ELEMENTWISE_CONFIGS, key=["n"],
                              restore_value=["Y"])(_axpy_kernel)


def _launch(tuned, plain, grid, args, config):
    if config is None:
        tuned[grid](*args)
    else:
        kw = dict(config)
        warps = kw.pop("num_warps", 4)
        stages = kw.pop("num_stages", 3)
        plain[grid](*args, num_warps=warps, num_stages=stages, **kw)


def vector_add(x, y, z, config=None):
    n = x.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
    _launch(_vector_add_tuned, _vector_add_kernel, grid, (x, y, z, n), config)


def axpy(a, x, y, config=None):
    n = x.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
    _launch(_axpy_tuned, _axpy_kernel, grid, (a, x, y, n), config)


# --- row kernels: softmax, layer norm, row reductions ----------------------

_WARPS_CONFIGS = [triton.Config({}, num_warps=w) for w in (4, 8, 16)]


@triton.jit
def _softmax_kernel(X, Y, rows, cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    inside = offs < cols
    v = tl.load(X + row * stride + offs, mask=inside, other=-float("inf")).to(tl.float32)
    e = tl.exp(v - tl.max(v, axis=0))
    out = e / tl.sum(e, axis=0)
    tl.store(Y + row * stride + offs, out.to(Y.dtype.element_ty), mask=inside)


_softmax_tuned = triton.autotune(_WARPS_CONFIGS, key=["rows", "cols"])(_softmax_kernel)


def softmax(x, y, config=None):
    """x, y: [rows, cols] with the same row stride (unit column stride)."""
    rows, cols = x.shape
    block = triton.next_power_of_2(cols)
    args = (x, y, rows, cols, x.stride(0))
    if config is None:
        _softmax_tuned[(rows,)](*args, BLOCK=block)
    else:
        _softmax_kernel[(rows,)](*args, BLOCK=block, num_warps=config.get("num_warps", 4))


@triton.jit
def _layer_norm_kernel(X, Y, W, B, Mean, Rstd, rows, cols, stride, eps,
                       BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    inside = offs < cols
    xv = tl.load(X + row * stride + offs, mask=inside, other=0.0).to(tl.float32)
    mean = tl.sum(xv, axis=0) / cols
    centered = tl.where(inside, xv - mean, 0.0)
    var = tl.sum(centered * centered, axis=0) / cols
    rstd = 1.0 / tl.sqrt(var + eps)
    wv = tl.load(W + offs, mask=inside, other=0.0).to(tl.float32)
    bv = tl.load(B + offs, mask=inside, other=0.0).to(tl.float32)
    tl.store(Y + row * stride + offs, (centered * rstd * wv + bv).to(Y.dtype.element_ty),
             mask=inside)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)


_layer_norm_tuned = triton.autotune(_WARPS_CONFIGS, key=["rows", "cols"])(_layer_norm_kernel)


def layer_norm(x, w, b, eps, y, mean, rstd, config=None):
    """One program per row; the whole row in registers (cols <= 65536/elt)."""
    rows, cols = x.shape
    block = triton.next_power_of_2(cols)
    args = (x, y, w, b, mean, rstd, rows, cols, x.stride(0), eps)
    if config is None:
        _layer_norm_tuned[(rows,)](*args, BLOCK=block)
    else:
        _layer_norm_kernel[(rows,)](*args, BLOCK=block, num_warps=config.get("num_warps", 4))


_ROW_CONFIGS = [triton.Config({"BLOCK": b}, num_warps=w)
                for b in (1024, 2048, 4096) for w in (4, 8, 16)]


@triton.jit
def _row_sum_kernel(X, Out, rows, cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for c0 in range(0, cols, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        acc += tl.load(X + row * stride + offs, mask=offs < cols, other=0.0)
    tl.store(Out + row, tl.sum(acc, axis=0))


@triton.jit
def _row_max_kernel(X, Out, rows, cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.full([BLOCK], -float("inf"), dtype=tl.float32)
    for c0 in range(0, cols, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        acc = tl.maximum(acc, tl.load(X + row * stride + offs, mask=offs < cols,
                                      other=-float("inf")))
    tl.store(Out + row, tl.max(acc, axis=0))


_row_sum_tuned = triton.autotune(_ROW_CONFIGS, key=["rows", "cols"])(_row_sum_kernel)
_row_max_tuned = triton.autotune(_ROW_CONFIGS, key=["rows", "cols"])(_row_max_kernel)


def row_sum(x, out, config=None):
    rows, cols = x.shape
    _launch(_row_sum_tuned, _row_sum_kernel, (rows,), (x, out, rows, cols, x.stride(0)), config)


def row_max(x, out, config=None):
    rows, cols = x.shape
    _launch(_row_max_tuned, _row_max_kernel, (rows,), (x, out, rows, cols, x.stride(0)), config)


# --- matmul ----------------------------------------------------------------

def _mm(bm, bn, bk, stages, warps):
    return triton.Config({"BM": bm, "BN": bn, "BK": bk, "GROUP": 8},
                         num_stages=stages, num_warps=warps)


_MATMUL_CONFIGS = [
    # square shapes
    _mm(128, 256, 64, 3, 8), _mm(256, 128, 64, 3, 8), _mm(128, 128, 64, 4, 8),
    _mm(128, 128, 64, 4, 4), _mm(128, 64, 64, 4, 4), _mm(64, 128, 64, 4, 4),
    _mm(128, 128, 32, 4, 4), _mm(64, 64, 64, 4, 4),
    # the decode shape (M <= 32)
    _mm(16, 64, 128, 4, 4), _mm(16, 128, 128, 4, 4), _mm(16, 64, 256, 3, 4),
    _mm(16, 128, 64, 4, 4), _mm(16, 256, 64, 3, 4), _mm(32, 64, 128, 4, 4),
]


def _prune_matmul(configs, named_args, **kwargs):
    small = named_args["M"] <= 32
    kept = [c for c in configs if (c.kwargs["BM"] <= 32) == small]
    return kept or configs


@triton.jit
def _matmul_kernel(A, B, C, M, N, K, lda, ldb, ldc,
                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                   GROUP: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    # Grouped order: GROUP tile-rows walked column by column (L2 reuse).
    per_group = GROUP * tiles_n
    first_m = (pid // per_group) * GROUP
    rows_here = tl.minimum(tiles_m - first_m, GROUP)
    pm = first_m + (pid % per_group) % rows_here
    pn = (pid % per_group) // rows_here

    # Rows/columns past M/N wrap around (valid addresses); the store masks them.
    offs_m = (pm * BM + tl.arange(0, BM)) % M
    offs_n = (pn * BN + tl.arange(0, BN)) % N
    offs_k = tl.arange(0, BK)
    a_ptrs = A + offs_m[:, None] * lda + offs_k[None, :]
    b_ptrs = B + offs_k[:, None] * ldb + offs_n[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a_t = tl.load(a_ptrs, mask=offs_k[None, :] < K - k0, other=0.0)
        b_t = tl.load(b_ptrs, mask=offs_k[:, None] < K - k0, other=0.0)
        acc = tl.dot(a_t, b_t, acc)
        a_ptrs += BK
        b_ptrs += BK * ldb
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    tl.store(C + rm[:, None] * ldc + rn[None, :], acc.to(C.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


_matmul_tuned = triton.autotune(_MATMUL_CONFIGS, key=["M", "N", "K"],
                                prune_configs_by={"early_config_prune": _prune_matmul})(_matmul_kernel)


def matmul(a, b, c, config=None):
    """c[M, N] = a[M, K] @ b[K, N]; row-major with unit column stride."""
    M, K = a.shape
    N = b.shape[1]
    grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)
    args = (a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0))
    if config is not None:
        config = dict(config)
        config.setdefault("GROUP", 8)
    _launch(_matmul_tuned, _matmul_kernel, grid, args, config)


# --- fused attention (FlashAttention-2 forward) ----------------------------

def _at(bm, bn, warps, stages):
    return triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=warps, num_stages=stages)


_ATTENTION_CONFIGS = [
    _at(128, 64, 4, 3), _at(128, 64, 8, 3), _at(128, 128, 8, 3), _at(128, 32, 4, 3),
    _at(64, 64, 4, 3), _at(64, 32, 4, 4), _at(128, 128, 8, 2), _at(128, 64, 4, 4),
]


def _prune_attention(configs, named_args, **kwargs):
    seq = named_args["seq"]
    kept = [c for c in configs
            if seq % c.kwargs["BLOCK_M"] == 0 and c.kwargs["BLOCK_M"] % c.kwargs["BLOCK_N"] == 0]
    return kept or configs


@triton.jit
def _attention_blocks(acc, l_i, m_i, q, k_base, v_base, stride_m, qk_scale, lo, hi,
                      offs_m, offs_n, offs_d, BLOCK_N: tl.constexpr, DIAGONAL: tl.constexpr):
    """Keys lo..hi (multiples of BLOCK_N) into the running (acc, l_i, m_i).
    DIAGONAL: the blocks straddle the causal diagonal and are masked."""
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        keys = start_n + offs_n
        k_t = tl.load(k_base + keys[:, None] * stride_m + offs_d[None, :])
        s = tl.dot(q, tl.trans(k_t)) * qk_scale  # log2 units
        if DIAGONAL:
            s = tl.where(offs_m[:, None] >= keys[None, :], s, -1.0e6)
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v_t = tl.load(v_base + keys[:, None] * stride_m + offs_d[None, :])
        acc = tl.dot(p.to(v_t.dtype), v_t, acc * alpha[:, None])
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def _attention_kernel(Q, K, V, O, sm_scale, seq, stride_bh, stride_m,
                      HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    base = tl.program_id(1).to(tl.int64) * stride_bh
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + offs_m[:, None] * stride_m + offs_d[None, :])
    m_i = tl.full([BLOCK_M], -float("inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634  # log2(e)
    k_base = K + base
    v_base = V + base
    if CAUSAL:
        # Blocks left of the diagonal need no mask; then the diagonal ones.
        acc, l_i, m_i = _attention_blocks(acc, l_i, m_i, q, k_base, v_base, stride_m,
                                          qk_scale, 0, start_m, offs_m, offs_n, offs_d,
                                          BLOCK_N, False)
        acc, l_i, m_i = _attention_blocks(acc, l_i, m_i, q, k_base, v_base, stride_m,
                                          qk_scale, start_m, start_m + BLOCK_M, offs_m,
                                          offs_n, offs_d, BLOCK_N, True)
    else:
        acc, l_i, m_i = _attention_blocks(acc, l_i, m_i, q, k_base, v_base, stride_m,
                                          qk_scale, 0, seq, offs_m, offs_n, offs_d,
                                          BLOCK_N, False)
    out = acc / l_i[:, None]
    tl.store(O + base + offs_m[:, None] * stride_m + offs_d[None, :], out.to(O.dtype.element_ty))


_attention_tuned = triton.autotune(_ATTENTION_CONFIGS, key=["seq", "HEAD_DIM", "CAUSAL"],
                                   prune_configs_by={"early_config_prune": _prune_attention})(_attention_kernel)


def attention(q, k, v, o, sm_scale, causal, config=None):
    """q, k, v, o: contiguous [batch, heads, seq, head_dim]; seq a multiple
    of 128 (of the config's BLOCK_M)."""
    batch, heads, seq, head_dim = q.shape
    for t in (q, k, v, o):
        assert t.is_contiguous() and t.shape == q.shape
    assert seq % 64 == 0, "the Triton attention kernel needs seq % 64 == 0"
    grid = lambda meta: (seq // meta["BLOCK_M"], batch * heads)
    args = (q, k, v, o, sm_scale, seq, seq * head_dim, head_dim)
    if config is None:
        _attention_tuned[grid](*args, HEAD_DIM=head_dim, CAUSAL=bool(causal))
    else:
        kw = dict(config)
        _attention_kernel[grid](*args, HEAD_DIM=head_dim, CAUSAL=bool(causal),
                                BLOCK_M=kw["BLOCK_M"], BLOCK_N=kw["BLOCK_N"],
                                num_warps=kw.get("num_warps", 4),
                                num_stages=kw.get("num_stages", 3))


# A small fixed config per kernel, for TRITON_INTERPRET=1 and smoke tests.
SMALL_CONFIGS = {
    "vector_add": {"BLOCK": 1024, "num_warps": 4},
    "axpy": {"BLOCK": 1024, "num_warps": 4},
    "softmax": {"num_warps": 4},
    "layer_norm": {"num_warps": 4},
    "row_sum": {"BLOCK": 1024, "num_warps": 4},
    "row_max": {"BLOCK": 1024, "num_warps": 4},
    "matmul": {"BM": 64, "BN": 64, "BK": 32, "num_warps": 4, "num_stages": 3},
    "matmul_decode": {"BM": 16, "BN": 64, "BK": 64, "num_warps": 4, "num_stages": 3},
    "attention": {"BLOCK_M": 64, "BLOCK_N": 32, "num_warps": 4, "num_stages": 3},
}


_TUNED = {"vector_add": _vector_add_tuned, "axpy": _axpy_tuned, "softmax": _softmax_tuned,
          "layer_norm": _layer_norm_tuned, "row_sum": _row_sum_tuned, "row_max": _row_max_tuned,
          "matmul": _matmul_tuned, "attention": _attention_tuned}


def best_config(name):
    """The config the autotuner chose on its last run of kernel `name`
    ("BLOCK=1024, warps=4, stages=3"), or None."""
    c = getattr(_TUNED.get(name), "best_config", None)
    if c is None:
        return None
    parts = ["%s=%s" % kv for kv in sorted(c.kwargs.items())]
    parts += ["warps=%d" % c.num_warps, "stages=%d" % c.num_stages]
    return ", ".join(parts)
