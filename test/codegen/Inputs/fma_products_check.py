#!/usr/bin/env python3
"""fma-products.test: reads kpack_images.py's listing and prints one line
per code object, `<entry> <kind> <arch> ok` or `... FAILED: why`, then
`checked: N`. NVIDIA cubins: below ptxas's 255-register cap, at most 32
bytes spilled (ptxas sometimes spills a word or two; the defect this guards
against spilled hundreds). AMD objects: no scratch, no VGPR spilled."""
import json
import sys

checked = 0
for line in open(sys.argv[1]):
    entry, kind, arch, rest = line.split(" ", 3)
    if kind == "ptx":
        continue
    res = json.JSONDecoder().raw_decode(rest)[0]
    why = []
    if kind == "cubin":
        if res["registers"] >= 255:
            why.append("%d registers" % res["registers"])
        if max(res["spill_store_bytes"], res["spill_load_bytes"]) > 32:
            why.append("%d bytes spilled" % res["spill_store_bytes"])
    else:
        if res.get("scratch_bytes", 0) or res.get("vgpr_spills", 0):
            why.append("%d bytes of scratch, %d VGPRs spilled"
                       % (res.get("scratch_bytes", 0), res.get("vgpr_spills", 0)))
    checked += 1
    print("%s %s %s %s" % (entry, kind, arch, "FAILED: " + ", ".join(why) if why else "ok"))
print("checked: %d" % checked)
