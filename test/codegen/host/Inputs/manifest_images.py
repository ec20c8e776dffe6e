#!/usr/bin/env python3
"""Prints one line per image of a .kpack bundle's manifest:
`ENTRY target T arch A requires cpu C features F,G,... assumes {...}`
(requires/assumes only when the image has them).

Usage: manifest_images.py BUNDLE.kpack"""
import json
import struct
import sys


def main():
    data = open(sys.argv[1], "rb").read()
    # The manifest is the first offloading binary (docs/bundle.md).
    _, _, _, entry_offset, _ = struct.unpack_from("<4sIQQQ", data, 0)
    _, _, _, _, _, image_offset, image_size = struct.unpack_from(
        "<HHIQQQQ", data, entry_offset)
    manifest = json.loads(data[image_offset:image_offset + image_size])
    for kernel in manifest["kernels"]:
        for variant in kernel["variants"]:
            for image in variant["images"]:
                line = "%s target %s arch %s" % (image["entry"],
                                                 image["target"], image["arch"])
                if "requires" in image:
                    req = image["requires"]
                    line += " requires cpu %s features %s" % (
                        req.get("cpu", "-"), ",".join(req.get("features", [])))
                if "assumes" in image:
                    line += " assumes " + json.dumps(image["assumes"],
                                                     sort_keys=True)
                print(line)


if __name__ == "__main__":
    main()
