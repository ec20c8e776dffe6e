#!/usr/bin/env python3
"""Lists the images of a .kpack bundle (docs/bundle.md) and extracts them,
for tests that look into code objects without a GPU.

Usage:
  kpack_images.py BUNDLE.kpack                 one line per image:
      <entry> <kind> <arch> <resources JSON> [assumes JSON]
  kpack_images.py BUNDLE.kpack --dump DIR      also writes DIR/<entry>.<kind>
  kpack_images.py BUNDLE.kpack --resource KEY  <entry> <kind> <value of KEY>
"""
import json
import os
import struct
import sys

KINDS = {0: "none", 1: "object", 2: "bitcode", 3: "cubin", 4: "fatbinary",
         5: "ptx", 6: "spirv"}


def binaries(data):
    off = 0
    while off < len(data):
        _, _, size, eoff, _ = struct.unpack_from("<4sIQQQ", data, off)
        kind, _, _, soff, nstr, ioff, isize = struct.unpack_from(
            "<HHIQQQQ", data, off + eoff)
        strings = {}
        for i in range(nstr):
            k, v = struct.unpack_from("<QQ", data, off + soff + 16 * i)
            key = data[off + k:data.index(b"\0", off + k)].decode()
            strings[key] = data[off + v:data.index(b"\0", off + v)].decode()
        yield kind, strings, data[off + ioff:off + ioff + isize]
        off = (off + size + 7) // 8 * 8


def main():
    args = sys.argv[1:]
    bundle = args[0]
    dump = args[args.index("--dump") + 1] if "--dump" in args else None
    key = args[args.index("--resource") + 1] if "--resource" in args else None
    data = open(bundle, "rb").read()
    items = list(binaries(data))
    manifest = json.loads(items[0][2])
    listed = [img for k in manifest["kernels"] for v in k["variants"]
              for img in v["images"]]
    if dump:
        os.makedirs(dump, exist_ok=True)
    for (kind, strings, image), meta in zip(items[1:], listed):
        entry = strings.get("kiln.entry", "?")
        kname = KINDS.get(kind, str(kind))
        res = meta.get("resources", {})
        if key:
            print(entry, kname, res.get(key, "-"))
        else:
            line = f"{entry} {kname} {meta.get('arch')} {json.dumps(res, sort_keys=True)}"
            if "assumes" in meta:
                line += " assumes " + json.dumps(meta["assumes"], sort_keys=True)
            print(line)
        if dump:
            with open(os.path.join(dump, f"{entry}.{kname}"), "wb") as f:
                f.write(image)


if __name__ == "__main__":
    main()
