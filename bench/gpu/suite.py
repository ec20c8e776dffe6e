"""The PERF.md suite as data: entries, shapes, byte and FLOP counts, and the
argument list each Kiln kernel takes. Standard library only, so that
`run_suite.py --dry-run` works on a machine without torch.

An entry is one row of the result table: one Kiln kernel at one shape and
dtype, with its Triton and torch counterparts.
"""

import re
import zlib

# The .tile file of each Kiln kernel of the suite (bundles are per file).
KERNEL_FILES = {
    "vector_add": "vector_add", "axpy": "vector_add", "axpy_bf16": "vector_add",
    "softmax": "softmax", "softmax_bf16": "softmax",
    "layer_norm": "layer_norm",
    "row_sum": "row_reduce", "row_max": "row_reduce",
    "matmul": "matmul", "matmul_ptr": "matmul", "matmul_bf16": "matmul",
    "attention_fwd": "attention",
}
SUITE_FILES = ["vector_add", "softmax", "layer_norm", "row_reduce", "matmul", "attention"]

DTYPE_BYTES = {"f32": 4, "bf16": 2, "f16": 2}

# PERF.md tolerances, on ||got - ref|| / ||ref|| (normwise):
# f32 results "far under 1e-3", results stored in bf16/f16 "1e-3 to 1e-2".
TOLERANCE = {"f32": 1e-4, "bf16": 1e-2, "f16": 1e-2}


class Entry:
    def __init__(self, family, kernel, dtype, shape, bound, nbytes, flops,
                 torch_name, triton_name, note=""):
        self.family = family        # vector, softmax, layer_norm, row_reduce, matmul, attention
        self.kernel = kernel        # the Kiln kernel
        self.dtype = dtype
        self.shape = shape          # dict of sizes
        self.bound = bound          # "memory" or "compute"
        self.bytes = nbytes         # bytes a kernel must move at least
        self.flops = flops          # for compute-bound entries
        self.torch_name = torch_name
        self.triton_name = triton_name
        self.note = note

    @property
    def file(self):
        return KERNEL_FILES[self.kernel]

    @property
    def shape_str(self):
        s = self.shape
        if self.family == "vector":
            n = s["n"]
            return "2^%d" % (n.bit_length() - 1) if n & (n - 1) == 0 else str(n)
        if self.family in ("softmax", "layer_norm", "row_reduce"):
            return "%d x %d" % (s["rows"], s["cols"])
        if self.family == "matmul":
            return "%d x %d x %d" % (s["M"], s["N"], s["K"])
        if self.family == "attention":
            return "B%d H%d S%d D%d%s" % (s["batch"], s["heads"], s["seq"], s["head_dim"],
                                          " causal" if s["causal"] else "")
        return str(s)

    @property
    def id(self):
        return "%s/%s/%s" % (self.kernel, self.dtype, self.shape_str)

    def seed(self, base):
        """A per-entry seed that does not depend on which entries run."""
        return (base * 1000003 + zlib.crc32(self.id.encode())) % (2**31 - 1)

    def matches(self, token):
        """--only: a suite file (vector_add, softmax, layer_norm, row_reduce,
        matmul, attention: all its kernels) or a kernel name (axpy also
        selects axpy_bf16)."""
        return token in (self.file, self.kernel, self.family) or \
            self.kernel.startswith(token + "_")

    def kiln_params(self):
        """The Kiln kernel's runtime parameters, in order: (name, kind)
        with kind "*f32"/"*bf16"/"*f16" (pointer to), "i32" or "f32"."""
        d = self.dtype
        if self.kernel == "vector_add":
            return [("x", "*f32"), ("y", "*f32"), ("z", "*f32"), ("n", "i32")]
        if self.kernel in ("axpy", "axpy_bf16"):
            return [("a", "f32"), ("x", "*" + d), ("y", "*" + d), ("n", "i32")]
        if self.family == "softmax":
            return [("x", "*" + d), ("y", "*" + d), ("rows", "i32"), ("cols", "i32"),
                    ("stride", "i32")]
        if self.kernel == "layer_norm":
            return [("x", "*bf16"), ("y", "*bf16"), ("w", "*bf16"), ("b", "*bf16"),
                    ("mean_out", "*f32"), ("rstd_out", "*f32"), ("rows", "i32"),
                    ("cols", "i32"), ("stride", "i32"), ("eps", "f32")]
        if self.family == "row_reduce":
            return [("x", "*f32"), ("out", "*f32"), ("rows", "i32"), ("cols", "i32"),
                    ("stride", "i32")]
        if self.family == "matmul":
            return [("a", "*" + d), ("b", "*" + d), ("c", "*" + d), ("M", "i32"),
                    ("N", "i32"), ("K", "i32"), ("lda", "i32"), ("ldb", "i32"),
                    ("ldc", "i32")]
        if self.family == "attention":
            return [("q", "*bf16"), ("k", "*bf16"), ("v", "*bf16"), ("o", "*bf16"),
                    ("sm_scale", "f32"), ("batch_heads", "i32"), ("seq", "i32"),
                    ("head_dim", "i32"), ("stride_row", "i32"), ("causal", "i32")]
        raise KeyError(self.kernel)

    def scalar_args(self):
        """The integer scalar arguments (for launch conditions)."""
        s = self.shape
        if self.family == "vector":
            return {"n": s["n"]}
        if self.family in ("softmax", "layer_norm", "row_reduce"):
            return {"rows": s["rows"], "cols": s["cols"], "stride": s["cols"]}
        if self.family == "matmul":
            return {"M": s["M"], "N": s["N"], "K": s["K"], "lda": s["K"], "ldb": s["N"],
                    "ldc": s["N"]}
        if self.family == "attention":
            return {"batch_heads": s["batch"] * s["heads"], "seq": s["seq"],
                    "head_dim": s["head_dim"], "stride_row": s["head_dim"],
                    "causal": int(s["causal"])}
        return {}


def _vector(kernel, dtype, n):
    e = DTYPE_BYTES[dtype]
    if kernel == "vector_add":
        return Entry("vector", kernel, dtype, {"n": n}, "memory", 3 * n * e, 0,
                     "torch.add(out=)", "vector_add")
    return Entry("vector", kernel, dtype, {"n": n}, "memory", 3 * n * e, 0,
                 "Tensor.add_(alpha=)", "axpy", "in place: y = a*x + y")


def _softmax(dtype, rows, cols):
    e = DTYPE_BYTES[dtype]
    return Entry("softmax", "softmax" if dtype == "f32" else "softmax_bf16", dtype,
                 {"rows": rows, "cols": cols}, "memory", 2 * rows * cols * e, 0,
                 "torch.softmax", "softmax")


def _layer_norm(rows, cols):
    return Entry("layer_norm", "layer_norm", "bf16", {"rows": rows, "cols": cols}, "memory",
                 2 * rows * cols * 2 + 2 * cols * 2 + 2 * rows * 4, 0,
                 "F.layer_norm", "layer_norm", "Kiln and Triton also write mean, rstd (f32)")


def _row(kernel, rows, cols):
    return Entry("row_reduce", kernel, "f32", {"rows": rows, "cols": cols}, "memory",
                 rows * cols * 4 + rows * 4, 0,
                 "torch.sum(dim=1)" if kernel == "row_sum" else "torch.amax(dim=1)",
                 kernel, "" if kernel == "row_sum" else
                 "torch.amax: torch.max(dim) also computes indices")


def _matmul(kernel, dtype, M, N, K):
    return Entry("matmul", kernel, dtype, {"M": M, "N": N, "K": K}, "compute",
                 (M * K + K * N + M * N) * 2, 2 * M * N * K, "torch.matmul (cuBLAS)",
                 "matmul", "decode shape" if M <= 32 else "")


def _attention(batch, heads, seq, head_dim, causal):
    flops = 4 * batch * heads * seq * seq * head_dim
    if causal:
        flops //= 2
    return Entry("attention", "attention_fwd", "bf16",
                 {"batch": batch, "heads": heads, "seq": seq, "head_dim": head_dim,
                  "causal": bool(causal)}, "compute", 4 * batch * heads * seq * head_dim * 2,
                 flops, "F.scaled_dot_product_attention", "attention")


def build_plan(mode="full"):
    """mode: "full" (PERF.md shapes), "quick" (one small shape per kernel),
    "host" (tiny ragged shapes for the host-device smoke test)."""
    plan = []
    if mode == "full":
        n = 1 << 28
        plan += [_vector("vector_add", "f32", n), _vector("axpy", "f32", n),
                 _vector("axpy_bf16", "bf16", n)]
        for dt in ("f32", "bf16"):
            plan += [_softmax(dt, 4096, c) for c in (1024, 4096, 8192)]
        plan += [_layer_norm(4096, c) for c in (1024, 4096, 8192)]
        plan += [_row("row_sum", 8192, 8192), _row("row_max", 8192, 8192)]
        for M, N, K in ((4096, 4096, 4096), (8192, 8192, 8192), (16, 8192, 8192)):
            plan += [_matmul("matmul", "f16", M, N, K), _matmul("matmul_ptr", "f16", M, N, K),
                     _matmul("matmul_bf16", "bf16", M, N, K)]
        for d in (64, 128):
            for causal in (False, True):
                plan.append(_attention(4, 32, 4096, d, causal))
    elif mode == "quick":
        n = 1 << 20
        plan += [_vector("vector_add", "f32", n), _vector("axpy", "f32", n),
                 _vector("axpy_bf16", "bf16", n)]
        plan += [_softmax("f32", 1024, 1024), _softmax("bf16", 1024, 1024)]
        plan += [_layer_norm(1024, 1024)]
        plan += [_row("row_sum", 1024, 1024), _row("row_max", 1024, 1024)]
        plan += [_matmul(k, dt, 1024, 1024, 1024) for k, dt in
                 (("matmul", "f16"), ("matmul_ptr", "f16"), ("matmul_bf16", "bf16"))]
        plan.append(_attention(1, 4, 1024, 128, True))
    elif mode == "host":
        plan += [_vector("vector_add", "f32", 5000), _vector("axpy", "f32", 5000),
                 _vector("axpy_bf16", "bf16", 5000)]
        plan += [_softmax("f32", 8, 1000), _softmax("bf16", 8, 1000)]
        plan += [_layer_norm(8, 1000)]
        plan += [_row("row_sum", 8, 1000), _row("row_max", 8, 1000)]
        for M, N, K in ((64, 64, 64), (16, 64, 64)):
            plan += [_matmul(k, dt, M, N, K) for k, dt in
                     (("matmul", "f16"), ("matmul_ptr", "f16"), ("matmul_bf16", "bf16"))]
        plan += [_attention(1, 2, 128, 64, False), _attention(1, 2, 128, 128, True)]
    else:
        raise ValueError(mode)
    return plan


def filter_plan(plan, only):
    if not only:
        return plan
    tokens = [t.strip() for t in only.split(",") if t.strip()]
    unknown = [t for t in tokens if not any(e.matches(t) for e in plan)]
    if unknown:
        raise SystemExit("--only: no suite entry matches %s (kernels: %s)" % (
            ", ".join(unknown), ", ".join(sorted({e.kernel for e in plan}))))
    return [e for e in plan if any(e.matches(t) for t in tokens)]


# --- launch conditions, for the dry run -------------------------------------

def _infix_to_python(expr):
    if not re.fullmatch(r"[\w\s()+\-*/%<>=!&|,]*", expr):
        raise ValueError("unexpected characters in condition %r" % expr)
    e = expr.replace("&&", " and ").replace("||", " or ")
    e = re.sub(r"!(?!=)", " not ", e)
    e = re.sub(r"(?<![/])/(?![/])", "//", e)
    return e


def eval_condition(expr, names):
    """Evaluates a launch condition as `kiln compile --list-variants` prints
    it (infix) over integer names. For the dry run's preview only: on the
    GPU the runtime decides (kiln_kernel_plan)."""
    env = {"cdiv": lambda a, b: -(-a // b), "min": min, "max": max}
    env.update(names)
    return bool(eval(_infix_to_python(expr), {"__builtins__": {}}, env))


def parse_config(text):
    """'BLOCK=1024, warps=4, stages=2' -> {'BLOCK': 1024, ...}."""
    out = {}
    for part in text.split(","):
        if "=" in part:
            k, v = part.split("=", 1)
            out[k.strip()] = int(v.strip())
    return out
