#!/usr/bin/env python3
"""Writes a .tile file of about N lines (default 2000) made of many kernels
and helpers, for the front-end throughput benchmark."""
import sys

TEMPLATE = """// kernel {i}
fn scale_{i}(x: tile<f32, [N]>, s: f32) -> tile<f32, [N]> {{
    return x * s;
}}
kernel softmax_{i}<BLOCK: i32>(x: *f32, y: *f32, rows: i32, cols: i32, stride: i32 @div(4))
    grid (rows)
    tune BLOCK in [256, 512, 1024], warps in [4, 8]
         where BLOCK >= cols key (cols)
{{
    let row = program_id(0);
    let offs = arange(0, BLOCK);
    let mask = offs < cols;
    let v = load(x + row * stride + offs, mask = mask, other = -inf);
    var acc = zeros<f32>([BLOCK]);
    for k in range(0, 4) {{
        acc += where(mask, v * cast<f32>(k), 0.0);
    }}
    let e = exp(v - max(v, 0));
    store(y + row * stride + offs, e / sum(e, 0) + acc, mask = mask);
}}
kernel tiles_{i}<BM: i32 = 64, BN: i32 = 64>(a: *f16, c: *f32, M: i32, N: i32)
    grid (cdiv(M, BM) * cdiv(N, BN))
{{
    let pid = program_id(0);
    let rm = (pid / cdiv(N, BN)) * BM + arange(0, BM);
    let rn = (pid % cdiv(N, BN)) * BN + arange(0, BN);
    let m = (rm < M)[:, None] && (rn < N)[None, :];
    let t = load(a + rm[:, None] * N + rn[None, :], mask = m, other = 0.0);
    store(c + rm[:, None] * N + rn[None, :], cast<f32>(t) * 2.0, mask = m);
}}
"""

def main():
    lines = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    out = []
    i = 0
    while sum(s.count("\n") for s in out) < lines:
        out.append(TEMPLATE.format(i=i).replace("[N]", "[N]").replace(
            "fn scale_%d(" % i, "fn scale_%d<N: i32>(" % i))
        i += 1
    sys.stdout.write("".join(out))

if __name__ == "__main__":
    main()
