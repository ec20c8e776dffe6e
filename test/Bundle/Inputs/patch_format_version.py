"""Copies a bundle, changing the manifest's kiln.format-version string.

Usage: patch_format_version.py IN OUT DIGIT
The manifest is the first offloading binary (llvm/Object/OffloadBinary.h):
a 24-byte header, then the entry (its string map's offset and count), then
the string map of (key offset, value offset) pairs.
"""
import struct
import sys

src, dst, digit = sys.argv[1], sys.argv[2], sys.argv[3].encode()
data = bytearray(open(src, "rb").read())
_magic, _version, _size, entry_offset, _entry_size = struct.unpack_from("<4sIQQQ", data, 0)
_kind, _offload, _flags, string_offset, num_strings, _image_offset, _image_size = \
    struct.unpack_from("<HHIQQQQ", data, entry_offset)
for i in range(num_strings):
    key, value = struct.unpack_from("<QQ", data, string_offset + 16 * i)
    if data[key:data.index(b"\0", key)] == b"kiln.format-version":
        assert data[value + 1:value + 2] == b"\0"  # one digit
        data[value:value + 1] = digit
open(dst, "wb").write(data)
