"""What the multi-variant output checkers share (nvptx/Inputs/ptx_variants.py,
amdgpu/Inputs/amdgcn_variants.py): `kiln compile --emit=ptx|amdgcn|llvm`
without --kernel/-D writes every variant, each after a line
`// kernel <entry> (<config>) for <arch>` (`; kernel ...` in LLVM IR).
"""
import re

HEADER = re.compile(r"^(?://|;) kernel (\S+) \((.*)\) for (\S+)$")


def split(path):
    """The variants of a multi-variant file: dicts with the entry, the arch
    and the lines from its header on."""
    variants, current = [], None
    with open(path) as f:
        for line in f:
            m = HEADER.match(line.rstrip("\n"))
            if m:
                current = {"entry": m.group(1), "arch": m.group(3), "lines": []}
                variants.append(current)
            if current is not None:
                current["lines"].append(line)
    return variants
