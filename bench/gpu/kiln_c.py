"""ctypes bindings for libkiln_runtime's C API (runtime/include/kiln/runtime_c.h).

Standard library only: importable anywhere. The declarations below are
written by hand and checked against the header by `abi_self_check()`, which
parses runtime_c.h (enums, structs with their x86-64 SysV layout, function
prototypes) and compares it with the ctypes structures and signatures; when
build_bundles.py found a C compiler it also recorded the compiler's own
sizeof/offsetof/enum values in the bundle manifest ("abi"), and
`abi_self_check(header, compiler_abi)` compares those too. A mismatch makes
the check fail before anything is launched: a wrong layout would otherwise
crash (or silently misread) on the GPU machine.

Usage:

    rt = Runtime("OUT/libkiln_runtime.so")
    dev = rt.open_device("cuda")
    mod = dev.load_module("OUT/softmax.kpack")
    k = mod.kernel("softmax")
    s = dev.create_stream()
    args = make_args([arg_pointer(x_ptr, KILN_TYPE_F32), ..., arg_i32(rows)])
    info = k.launch(s, args, config="BLOCK=1024,warps=4")
    s.synchronize()
"""

import ctypes
import os
import re
import struct
from ctypes import (CFUNCTYPE, POINTER, Structure, Union, byref, c_char_p,
                    c_double, c_int, c_int32, c_int64, c_size_t, c_uint8,
                    c_uint32, c_uint64, c_void_p)

# --- enum kiln_status -------------------------------------------------------

KILN_SUCCESS = 0
KILN_ERROR_INVALID_ARGUMENT = 1
KILN_ERROR_NOT_FOUND = 2
KILN_ERROR_INVALID_BUNDLE = 3
KILN_ERROR_UNSUPPORTED_VERSION = 4
KILN_ERROR_NO_IMAGE = 5
KILN_ERROR_LAUNCH_REFUSED = 6
KILN_ERROR_KERNEL_TRAPPED = 7
KILN_ERROR_UNSUPPORTED_DEVICE = 8
KILN_ERROR_IO = 9
KILN_ERROR_DRIVER = 10
KILN_ERROR_OUT_OF_MEMORY = 11

# --- scalar types (KilnScalarKind) -----------------------------------------

KILN_TYPE_BOOL = 0
KILN_TYPE_I8 = 1
KILN_TYPE_I16 = 2
KILN_TYPE_I32 = 3
KILN_TYPE_I64 = 4
KILN_TYPE_U8 = 5
KILN_TYPE_U16 = 6
KILN_TYPE_U32 = 7
KILN_TYPE_U64 = 8
KILN_TYPE_F16 = 9
KILN_TYPE_BF16 = 10
KILN_TYPE_F32 = 11
KILN_TYPE_F64 = 12
KILN_TYPE_F8E4M3 = 13
KILN_TYPE_F8E5M2 = 14
KILN_TYPE_ANY = -1
KILN_TUNING_OFF = 0
KILN_TUNING_CACHED = 1
KILN_TUNING_FULL = 2

ENUM_VALUES = {k: v for k, v in globals().items()
               if k.startswith("KILN_") and isinstance(v, int)}

TYPE_NAMES = {KILN_TYPE_BOOL: "bool", KILN_TYPE_I8: "i8", KILN_TYPE_I16: "i16",
              KILN_TYPE_I32: "i32", KILN_TYPE_I64: "i64", KILN_TYPE_U8: "u8",
              KILN_TYPE_U16: "u16", KILN_TYPE_U32: "u32", KILN_TYPE_U64: "u64",
              KILN_TYPE_F16: "f16", KILN_TYPE_BF16: "bf16",
              KILN_TYPE_F32: "f32", KILN_TYPE_F64: "f64",
              KILN_TYPE_F8E4M3: "f8e4m3", KILN_TYPE_F8E5M2: "f8e5m2",
              KILN_TYPE_ANY: "any"}
TYPE_CODES = {v: k for k, v in TYPE_NAMES.items()}

# --- structs ---------------------------------------------------------------


class KilnParamInfo(Structure):
    _fields_ = [("name", c_char_p),
                ("is_pointer", c_int32),
                ("type", c_int32),
                ("div", c_int64),
                ("align", c_int64)]


class KilnArgValue(Union):
    _fields_ = [("pointer", c_void_p),
                ("bits", c_uint64)]


class KilnArg(Structure):
    _fields_ = [("is_pointer", c_int32),
                ("type", c_int32),
                ("value", KilnArgValue)]


class KilnLaunchOptions(Structure):
    _fields_ = [("config", c_char_p),
                ("variant", c_int64)]


class KilnLaunchInfo(Structure):
    _fields_ = [("variant", c_uint32),
                ("grid", c_int64 * 3)]


# The header's struct names and the ctypes classes that mirror them.
STRUCTS = {"kiln_param_info": KilnParamInfo, "kiln_arg": KilnArg,
           "kiln_launch_options": KilnLaunchOptions,
           "kiln_launch_info": KilnLaunchInfo}

PRINT_CALLBACK = CFUNCTYPE(None, c_void_p, c_char_p)

# Handles are opaque: c_void_p; out-parameters for handles: POINTER(c_void_p).
_H = c_void_p
_HP = POINTER(c_void_p)
_STATUS = c_int  # enum kiln_status: an int on every ABI Kiln targets

# name: (restype, [argtypes]) — in the header's order.
FUNCTIONS = {
    "kiln_last_error": (c_char_p, []),
    "kiln_status_name": (c_char_p, [_STATUS]),
    "kiln_device_open": (_STATUS, [c_char_p, _HP]),
    "kiln_device_close": (None, [_H]),
    "kiln_device_name": (c_char_p, [_H]),
    "kiln_device_description": (c_char_p, [_H]),
    "kiln_device_set_print_callback": (_STATUS, [_H, PRINT_CALLBACK, c_void_p]),
    "kiln_buffer_alloc": (_STATUS, [_H, c_size_t, _HP]),
    "kiln_buffer_free": (None, [_H]),
    "kiln_buffer_pointer": (c_void_p, [_H]),
    "kiln_buffer_size": (c_size_t, [_H]),
    "kiln_stream_create": (_STATUS, [_H, _HP]),
    "kiln_stream_destroy": (None, [_H]),
    "kiln_stream_synchronize": (_STATUS, [_H]),
    "kiln_copy_to_device": (_STATUS, [_H, _H, c_size_t, c_void_p, c_size_t]),
    "kiln_copy_to_host": (_STATUS, [_H, c_void_p, _H, c_size_t, c_size_t]),
    "kiln_fill": (_STATUS, [_H, _H, c_size_t, c_uint8, c_size_t]),
    "kiln_event_create": (_STATUS, [_H, _HP]),
    "kiln_event_destroy": (None, [_H]),
    "kiln_event_record": (_STATUS, [_H, _H]),
    "kiln_event_synchronize": (_STATUS, [_H]),
    "kiln_event_elapsed_ms": (_STATUS, [_H, _H, POINTER(c_double)]),
    "kiln_module_load_file": (_STATUS, [_H, c_char_p, _HP]),
    "kiln_module_load_memory": (_STATUS, [_H, c_void_p, c_size_t, _HP]),
    "kiln_module_unload": (None, [_H]),
    "kiln_module_kernel_count": (c_size_t, [_H]),
    "kiln_module_kernel_name": (c_char_p, [_H, c_size_t]),
    "kiln_module_get_kernel": (_STATUS, [_H, c_char_p, _HP]),
    "kiln_kernel_param_count": (c_size_t, [_H]),
    "kiln_kernel_param": (_STATUS, [_H, c_size_t, POINTER(KilnParamInfo)]),
    "kiln_kernel_variant_count": (c_size_t, [_H]),
    "kiln_kernel_variant_name": (c_char_p, [_H, c_size_t]),
    "kiln_kernel_variant_config": (c_char_p, [_H, c_size_t]),
    "kiln_kernel_plan": (_STATUS, [_H, POINTER(KilnArg), c_size_t,
                                   POINTER(KilnLaunchOptions),
                                   POINTER(KilnLaunchInfo)]),
    "kiln_launch": (_STATUS, [_H, _H, POINTER(KilnArg), c_size_t,
                              POINTER(KilnLaunchOptions),
                              POINTER(KilnLaunchInfo)]),
    "kiln_set_tuning_mode": (_STATUS, [c_int]),
    "kiln_get_tuning_mode": (c_int, []),
    "kiln_set_tuning_database": (_STATUS, [c_char_p]),
}

# --- argument constructors (the header's static inline helpers) ------------


def arg_pointer(address, element=KILN_TYPE_ANY):
    a = KilnArg()
    a.is_pointer = 1
    a.type = element
    a.value.pointer = address
    return a


def arg_scalar(type_code, bits):
    a = KilnArg()
    a.is_pointer = 0
    a.type = type_code
    a.value.bits = bits & 0xFFFFFFFFFFFFFFFF
    return a


def arg_i32(v):
    if not -2**31 <= v < 2**31:
        raise ValueError("i32 argument out of range: %d" % v)
    return arg_scalar(KILN_TYPE_I32, v & 0xFFFFFFFF)


def arg_i64(v):
    return arg_scalar(KILN_TYPE_I64, v & 0xFFFFFFFFFFFFFFFF)


def arg_f32(v):
    return arg_scalar(KILN_TYPE_F32, struct.unpack("<I", struct.pack("<f", v))[0])


def arg_f64(v):
    return arg_scalar(KILN_TYPE_F64, struct.unpack("<Q", struct.pack("<d", v))[0])


def make_args(args):
    """A ctypes array of kiln_arg from a list of them."""
    array = (KilnArg * max(len(args), 1))()
    for i, a in enumerate(args):
        array[i] = a
    return array, len(args)


# --- the runtime -----------------------------------------------------------


class KilnError(RuntimeError):
    def __init__(self, function, status, name, message):
        super().__init__("%s: %s: %s" % (function, name, message))
        self.function = function
        self.status = status
        self.status_name = name
        self.message = message


def _text(b):
    return b.decode("utf-8", "replace") if b is not None else None


class Runtime:
    """libkiln_runtime loaded with ctypes; every function of FUNCTIONS bound."""

    def __init__(self, path):
        self.path = path
        self.lib = ctypes.CDLL(path)
        for name, (restype, argtypes) in FUNCTIONS.items():
            fn = getattr(self.lib, name)  # AttributeError: symbol missing
            fn.restype = restype
            fn.argtypes = argtypes
        self._callbacks = []

    def call(self, name, *args):
        status = getattr(self.lib, name)(*args)
        if status != KILN_SUCCESS:
            raise KilnError(name, status,
                            _text(self.lib.kiln_status_name(status)),
                            _text(self.lib.kiln_last_error()))

    def open_device(self, spec="auto"):
        h = c_void_p()
        self.call("kiln_device_open", spec.encode(), byref(h))
        return Device(self, h)


class _Handle:
    _destroy = None

    def __init__(self, rt, handle):
        self.rt = rt
        self.h = handle

    def close(self):
        if self.h is not None and self.h.value:
            getattr(self.rt.lib, self._destroy)(self.h)
        self.h = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class Device(_Handle):
    _destroy = "kiln_device_close"

    @property
    def name(self):
        return _text(self.rt.lib.kiln_device_name(self.h))

    @property
    def description(self):
        return _text(self.rt.lib.kiln_device_description(self.h))

    def alloc(self, nbytes):
        h = c_void_p()
        self.rt.call("kiln_buffer_alloc", self.h, nbytes, byref(h))
        return Buffer(self.rt, h)

    def create_stream(self):
        h = c_void_p()
        self.rt.call("kiln_stream_create", self.h, byref(h))
        return Stream(self.rt, h)

    def create_event(self):
        h = c_void_p()
        self.rt.call("kiln_event_create", self.h, byref(h))
        return Event(self.rt, h)

    def load_module(self, path):
        h = c_void_p()
        self.rt.call("kiln_module_load_file", self.h, os.fsencode(path), byref(h))
        return Module(self.rt, h, self)

    def set_print_callback(self, fn):
        cb = PRINT_CALLBACK(lambda user, line: fn(_text(line)))
        self.rt._callbacks.append(cb)  # keep it alive
        self.rt.call("kiln_device_set_print_callback", self.h, cb, None)


class Buffer(_Handle):
    _destroy = "kiln_buffer_free"

    @property
    def pointer(self):
        return self.rt.lib.kiln_buffer_pointer(self.h) or 0

    @property
    def size(self):
        return self.rt.lib.kiln_buffer_size(self.h)


class Stream(_Handle):
    _destroy = "kiln_stream_destroy"

    def synchronize(self):
        self.rt.call("kiln_stream_synchronize", self.h)

    def fill(self, buffer, value, nbytes, offset=0):
        self.rt.call("kiln_fill", self.h, buffer.h, offset, value, nbytes)

    def record(self, event):
        self.rt.call("kiln_event_record", event.h, self.h)


class Event(_Handle):
    _destroy = "kiln_event_destroy"

    def synchronize(self):
        self.rt.call("kiln_event_synchronize", self.h)

    def elapsed_ms(self, end):
        ms = c_double()
        self.rt.call("kiln_event_elapsed_ms", self.h, end.h, byref(ms))
        return ms.value


class Module(_Handle):
    _destroy = "kiln_module_unload"

    def __init__(self, rt, handle, device):
        super().__init__(rt, handle)
        self.device = device
        self._kernels = {}

    def kernel_names(self):
        n = self.rt.lib.kiln_module_kernel_count(self.h)
        return [_text(self.rt.lib.kiln_module_kernel_name(self.h, i))
                for i in range(n)]

    def kernel(self, name):
        if name not in self._kernels:
            h = c_void_p()
            self.rt.call("kiln_module_get_kernel", self.h, name.encode(), byref(h))
            self._kernels[name] = Kernel(self.rt, h, self, name)
        return self._kernels[name]

    def close(self):
        for k in self._kernels.values():
            k.h = None  # owned by the module
        self._kernels = {}
        super().close()


class Kernel:
    """A kernel of a module (owned by it: no destroy)."""

    def __init__(self, rt, handle, module, name):
        self.rt = rt
        self.h = handle
        self.module = module
        self.name = name

    def params(self):
        out = []
        for i in range(self.rt.lib.kiln_kernel_param_count(self.h)):
            info = KilnParamInfo()
            self.rt.call("kiln_kernel_param", self.h, i, byref(info))
            out.append({"name": _text(info.name),
                        "is_pointer": bool(info.is_pointer),
                        "type": TYPE_NAMES.get(info.type, str(info.type)),
                        "div": info.div, "align": info.align})
        return out

    def variants(self):
        out = []
        for i in range(self.rt.lib.kiln_kernel_variant_count(self.h)):
            out.append((i, _text(self.rt.lib.kiln_kernel_variant_name(self.h, i)),
                        _text(self.rt.lib.kiln_kernel_variant_config(self.h, i))))
        return out

    @staticmethod
    def options(config=None, variant=-1):
        o = KilnLaunchOptions()
        o.config = config.encode() if config else None
        o.variant = variant
        return o

    def plan(self, args, nargs, options=None):
        info = KilnLaunchInfo()
        self.rt.call("kiln_kernel_plan", self.h, args, nargs,
                     byref(options) if options is not None else None, byref(info))
        return info

    def launch(self, stream, args, nargs, options=None, info=None):
        """Launches; `options` a KilnLaunchOptions (see options()), `info` an
        optional KilnLaunchInfo to fill. Raises KilnError on failure."""
        status = self.rt.lib.kiln_launch(
            self.h, stream.h, args, nargs,
            byref(options) if options is not None else None,
            byref(info) if info is not None else None)
        if status != KILN_SUCCESS:
            raise KilnError("kiln_launch", status,
                            _text(self.rt.lib.kiln_status_name(status)),
                            _text(self.rt.lib.kiln_last_error()))


# --- the header, parsed: the self-check ------------------------------------

# x86-64 SysV (LP64) sizes and alignments of the C types the header uses.
_C_SCALARS = {
    "int8_t": (1, 1), "uint8_t": (1, 1), "int16_t": (2, 2), "uint16_t": (2, 2),
    "int32_t": (4, 4), "uint32_t": (4, 4), "int64_t": (8, 8), "uint64_t": (8, 8),
    "int": (4, 4), "unsigned": (4, 4), "size_t": (8, 8), "double": (8, 8),
    "float": (4, 4), "char": (1, 1),
}


def _strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def _drop_inline_bodies(text):
    """Removes `static inline ... { ... }` definitions (brace-balanced)."""
    out, i = [], 0
    while True:
        m = re.compile(r"static\s+inline\b").search(text, i)
        if not m:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:m.start()])
        j = text.index("{", m.end())
        depth = 0
        while True:
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        i = j + 1


def parse_enums(text):
    """Every enumerator of every enum in the header: name -> value."""
    values = {}
    for body in re.findall(r"\benum\b[^{;]*\{(.*?)\}", text, flags=re.S):
        nxt = 0
        for item in body.split(","):
            item = item.strip()
            if not item:
                continue
            if "=" in item:
                name, expr = (s.strip() for s in item.split("=", 1))
                expr = expr.strip()
                if re.fullmatch(r"-?\s*\d+", expr):
                    value = int(expr.replace(" ", ""))
                elif expr in values:
                    value = values[expr]
                else:
                    raise ValueError("cannot evaluate enumerator %r" % item)
            else:
                name, value = item, nxt
            values[name] = value
            nxt = value + 1
    return values


def _parse_fields(body):
    """[(name, ctype text, array length or None, nested fields or None)]."""
    fields = []
    body = body.strip()
    while body:
        m = re.match(r"(union|struct)\s*\{", body)
        if m:
            depth, j = 0, m.end() - 1
            while True:
                if body[j] == "{":
                    depth += 1
                elif body[j] == "}":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            inner = body[m.end():j]
            rest = body[j + 1:]
            name, _, body = rest.partition(";")
            fields.append((name.strip(), m.group(1), None, _parse_fields(inner)))
            body = body.strip()
            continue
        decl, _, body = body.partition(";")
        body = body.strip()
        decl = " ".join(decl.split())
        m = re.fullmatch(r"(.*?)\s*\b(\w+)\s*(?:\[(\d+)\])?", decl)
        if not m:
            raise ValueError("cannot parse field %r" % decl)
        fields.append((m.group(2), m.group(1).strip(),
                       int(m.group(3)) if m.group(3) else None, None))
    return fields


def _layout(fields, kind="struct"):
    """(size, align, {field: (offset, size)}) under x86-64 SysV rules."""
    offset, align, layout, size = 0, 1, {}, 0
    for name, ctype, count, nested in fields:
        if nested is not None:
            fsize, falign, inner = _layout(nested, ctype)
        else:
            if "*" in ctype:
                fsize, falign = 8, 8
            else:
                base = ctype.replace("const", "").strip()
                if base not in _C_SCALARS:
                    raise ValueError("unknown field type %r" % ctype)
                fsize, falign = _C_SCALARS[base]
            if count:
                fsize *= count
            inner = None
        if kind == "union":
            layout[name] = (0, fsize)
            size = max(size, fsize)
        else:
            offset = (offset + falign - 1) // falign * falign
            layout[name] = (offset, fsize)
            offset += fsize
            size = offset
        align = max(align, falign)
        if inner:
            for k, (o, s) in inner.items():
                layout[name + "." + k] = (layout[name][0] + o, s)
    size = (size + align - 1) // align * align
    return size, align, layout


def parse_structs(text):
    """typedef struct NAME { ... } NAME; -> {NAME: (size, align, layout)}."""
    out = {}
    for m in re.finditer(r"typedef\s+struct\s+(\w+)\s*\{", text):
        depth, j = 0, m.end() - 1
        while True:
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        out[m.group(1)] = _layout(_parse_fields(text[m.end():j]))
    return out


def _canon_c(ctype, enums_typedefs, struct_names):
    """A C parameter or return type as a canonical token."""
    t = " ".join(ctype.replace("const", " ").split())
    stars = t.count("*")
    base = t.replace("*", "").strip()
    if base in enums_typedefs:
        base = "int"
    if base in ("int32_t", "int"):
        base = "int"
    if base == "void" and stars == 0:
        return "void"
    if base == "char" and stars == 1:
        return "char*"
    if base in struct_names:
        return base + "*" * stars
    if base.startswith("kiln_") and stars >= 1:  # opaque handles
        return "handle" + "*" * (stars - 1)
    if base == "void" and stars == 1:
        return "void*"
    return base + "*" * stars


def parse_functions(text):
    """name -> (return token, [param tokens]) for every prototype."""
    text = _drop_inline_bodies(text)
    enums = set(re.findall(r"typedef\s+enum\s+\w+\s*\{.*?\}\s*(\w+)\s*;", text, flags=re.S))
    structs = set(parse_structs(text))
    # Drop typedefs and enum/struct bodies, keep prototypes.
    flat = re.sub(r"typedef[^;{]*\{.*?\}\s*\w+\s*;", " ", text, flags=re.S)
    flat = re.sub(r"typedef[^;]*;", " ", flat)
    flat = re.sub(r"\benum\s*\{.*?\}\s*;", " ", flat, flags=re.S)
    flat = re.sub(r"#[^\n]*", " ", flat)
    flat = flat.replace('extern "C" {', " ").replace("}", " ")
    out = {}
    for m in re.finditer(r"([\w\s\*]+?)\b(kiln_\w+)\s*\(((?:[^()]|\([^()]*\))*)\)\s*;", flat):
        ret, name, params = m.group(1), m.group(2), m.group(3).strip()
        toks = []
        if params and params != "void":
            # Split on commas that are not inside a function-pointer's parens.
            depth, cur, parts = 0, "", []
            for ch in params:
                if ch == "(":
                    depth += 1
                elif ch == ")":
                    depth -= 1
                if ch == "," and depth == 0:
                    parts.append(cur)
                    cur = ""
                else:
                    cur += ch
            parts.append(cur)
            for p in parts:
                p = " ".join(p.split())
                if "(*" in p:
                    toks.append("fnptr")
                    continue
                pm = re.fullmatch(r"(.*?[\s\*])(\w+)", p)
                toks.append(_canon_c(pm.group(1) if pm else p, enums, structs))
        out[name] = (_canon_c(ret, enums, structs), toks)
    return out


def _canon_ctypes(t):
    if t is None:
        return "void"
    if t is PRINT_CALLBACK:
        return "fnptr"
    if t is c_void_p:
        return "void*|handle"
    if t is c_char_p:
        return "char*"
    if t is _HP:
        return "handle*"
    for struct_name, cls in STRUCTS.items():
        if t is POINTER(cls):
            return struct_name + "*"
    # On LP64, ctypes' c_size_t *is* c_uint64 (c_ulong): same ABI type.
    if t is c_size_t:
        return "size_t|uint64_t"
    simple = {c_int: "int", c_uint8: "uint8_t", c_int64: "int64_t",
              c_uint32: "uint32_t", c_double: "double"}
    if t in simple:
        return simple[t]
    if t is POINTER(c_double):
        return "double*"
    return repr(t)


def _ctypes_layout(cls, prefix=""):
    out = {}
    for fname, ftype in cls._fields_:
        d = getattr(cls, fname)
        out[prefix + fname] = (d.offset, d.size)
        if isinstance(ftype, type) and issubclass(ftype, (Structure, Union)):
            for k, (o, s) in _ctypes_layout(ftype).items():
                out[prefix + fname + "." + k] = (d.offset + o, s)
    return out


def abi_self_check(header_path, compiler_abi=None):
    """Compares the bindings with runtime_c.h (and, when given, with the
    sizes and offsets a C compiler reported for it). Returns a list of
    problems (empty: all is well) and a list of lines describing what was
    checked."""
    problems, checked = [], []
    text = _strip_comments(open(header_path).read())

    enums = parse_enums(text)
    for name, value in sorted(enums.items()):
        if name not in ENUM_VALUES:
            problems.append("enum %s = %d is in the header, not in kiln_c.py" % (name, value))
        elif ENUM_VALUES[name] != value:
            problems.append("enum %s: header %d, kiln_c.py %d" % (name, value, ENUM_VALUES[name]))
    for name in ENUM_VALUES:
        if name not in enums:
            problems.append("enum %s is in kiln_c.py, not in the header" % name)
    checked.append("%d enumerators" % len(enums))

    structs = parse_structs(text)
    for name, cls in STRUCTS.items():
        if name not in structs:
            problems.append("struct %s not found in the header" % name)
            continue
        size, align, layout = structs[name]
        if ctypes.sizeof(cls) != size:
            problems.append("sizeof(%s): header %d, ctypes %d" % (name, size, ctypes.sizeof(cls)))
        if ctypes.alignment(cls) != align:
            problems.append("alignof(%s): header %d, ctypes %d" % (name, align, ctypes.alignment(cls)))
        mine = _ctypes_layout(cls)
        for field, (off, fsize) in layout.items():
            if field not in mine:
                problems.append("%s.%s: in the header, not in ctypes" % (name, field))
            elif mine[field] != (off, fsize):
                problems.append("%s.%s: header offset %d size %d, ctypes offset %d size %d"
                                % (name, field, off, fsize, mine[field][0], mine[field][1]))
        for field in mine:
            if field not in layout:
                problems.append("%s.%s: in ctypes, not in the header" % (name, field))
        checked.append("%s: %d bytes, %s" % (name, size, ", ".join(
            "%s@%d" % (f, o) for f, (o, _) in layout.items())))
    for name in structs:
        if name not in STRUCTS:
            problems.append("struct %s is in the header but has no ctypes mirror" % name)

    functions = parse_functions(text)
    for name, (ret, params) in sorted(functions.items()):
        if name not in FUNCTIONS:
            problems.append("function %s is in the header, not bound" % name)
            continue
        restype, argtypes = FUNCTIONS[name]
        got_ret = _canon_ctypes(restype)
        if ret not in got_ret.split("|"):
            problems.append("%s returns %s in the header, %s in ctypes" % (name, ret, got_ret))
        if len(params) != len(argtypes):
            problems.append("%s takes %d parameters in the header, %d in ctypes"
                            % (name, len(params), len(argtypes)))
            continue
        for i, (p, a) in enumerate(zip(params, argtypes)):
            got = _canon_ctypes(a)
            if p not in got.split("|"):
                problems.append("%s parameter %d: header %s, ctypes %s" % (name, i, p, got))
    for name in FUNCTIONS:
        if name not in functions:
            problems.append("function %s is bound but not declared in the header" % name)
    checked.append("%d functions" % len(functions))

    if compiler_abi:
        for name, info in compiler_abi.get("structs", {}).items():
            cls = STRUCTS.get(name)
            if cls is None:
                problems.append("compiler ABI names unknown struct %s" % name)
                continue
            if ctypes.sizeof(cls) != info["size"]:
                problems.append("sizeof(%s): compiler %d, ctypes %d" % (name, info["size"], ctypes.sizeof(cls)))
            mine = _ctypes_layout(cls)
            for field, off in info.get("offsets", {}).items():
                if field not in mine or mine[field][0] != off:
                    problems.append("offsetof(%s, %s): compiler %d, ctypes %s"
                                    % (name, field, off, mine.get(field, ("missing",))[0]))
        for name, value in compiler_abi.get("enums", {}).items():
            if ENUM_VALUES.get(name) != value:
                problems.append("enum %s: compiler %d, kiln_c.py %s" % (name, value, ENUM_VALUES.get(name)))
        if compiler_abi.get("sizeof_enum_status") not in (None, ctypes.sizeof(_STATUS)):
            problems.append("sizeof(kiln_status): compiler %d, ctypes %d"
                            % (compiler_abi["sizeof_enum_status"], ctypes.sizeof(_STATUS)))
        checked.append("the compiler's sizeof/offsetof/enum values (%s)" % compiler_abi.get("compiler", "?"))
    return problems, checked


# A C program that prints what the compiler thinks of the header (JSON);
# build_bundles.py compiles and runs it when a C compiler is there.
ABI_PROBE_C = r"""
#include <stddef.h>
#include <stdio.h>
#include "kiln/runtime_c.h"
#define OFF(S, F) printf("\"%s\": %zu", #F, offsetof(S, F))
int main(void) {
  printf("{\"structs\": {");
  printf("\"kiln_param_info\": {\"size\": %zu, \"offsets\": {", sizeof(kiln_param_info));
  OFF(kiln_param_info, name); printf(", "); OFF(kiln_param_info, is_pointer); printf(", ");
  OFF(kiln_param_info, type); printf(", "); OFF(kiln_param_info, div); printf(", ");
  OFF(kiln_param_info, align); printf("}}, ");
  printf("\"kiln_arg\": {\"size\": %zu, \"offsets\": {", sizeof(kiln_arg));
  OFF(kiln_arg, is_pointer); printf(", "); OFF(kiln_arg, type); printf(", ");
  OFF(kiln_arg, value); printf(", ");
  printf("\"value.pointer\": %zu, ", offsetof(kiln_arg, value.pointer));
  printf("\"value.bits\": %zu}}, ", offsetof(kiln_arg, value.bits));
  printf("\"kiln_launch_options\": {\"size\": %zu, \"offsets\": {", sizeof(kiln_launch_options));
  OFF(kiln_launch_options, config); printf(", "); OFF(kiln_launch_options, variant); printf("}}, ");
  printf("\"kiln_launch_info\": {\"size\": %zu, \"offsets\": {", sizeof(kiln_launch_info));
  OFF(kiln_launch_info, variant); printf(", "); OFF(kiln_launch_info, grid); printf("}}");
  printf("}, \"sizeof_enum_status\": %zu, \"enums\": {", sizeof(kiln_status));
  printf("\"KILN_SUCCESS\": %d, \"KILN_ERROR_INVALID_ARGUMENT\": %d, \"KILN_ERROR_NOT_FOUND\": %d, "
         "\"KILN_ERROR_INVALID_BUNDLE\": %d, \"KILN_ERROR_UNSUPPORTED_VERSION\": %d, "
         "\"KILN_ERROR_NO_IMAGE\": %d, \"KILN_ERROR_LAUNCH_REFUSED\": %d, "
         "\"KILN_ERROR_KERNEL_TRAPPED\": %d, \"KILN_ERROR_UNSUPPORTED_DEVICE\": %d, "
         "\"KILN_ERROR_IO\": %d, \"KILN_ERROR_DRIVER\": %d, \"KILN_ERROR_OUT_OF_MEMORY\": %d, ",
         KILN_SUCCESS, KILN_ERROR_INVALID_ARGUMENT, KILN_ERROR_NOT_FOUND,
         KILN_ERROR_INVALID_BUNDLE, KILN_ERROR_UNSUPPORTED_VERSION, KILN_ERROR_NO_IMAGE,
         KILN_ERROR_LAUNCH_REFUSED, KILN_ERROR_KERNEL_TRAPPED, KILN_ERROR_UNSUPPORTED_DEVICE,
         KILN_ERROR_IO, KILN_ERROR_DRIVER, KILN_ERROR_OUT_OF_MEMORY);
  printf("\"KILN_TYPE_BOOL\": %d, \"KILN_TYPE_I8\": %d, \"KILN_TYPE_I16\": %d, \"KILN_TYPE_I32\": %d, "
         "\"KILN_TYPE_I64\": %d, \"KILN_TYPE_U8\": %d, \"KILN_TYPE_U16\": %d, \"KILN_TYPE_U32\": %d, "
         "\"KILN_TYPE_U64\": %d, \"KILN_TYPE_F16\": %d, \"KILN_TYPE_BF16\": %d, \"KILN_TYPE_F32\": %d, "
         "\"KILN_TYPE_F64\": %d, \"KILN_TYPE_F8E4M3\": %d, \"KILN_TYPE_F8E5M2\": %d, "
         "\"KILN_TYPE_ANY\": %d}}\n",
         KILN_TYPE_BOOL, KILN_TYPE_I8, KILN_TYPE_I16, KILN_TYPE_I32, KILN_TYPE_I64, KILN_TYPE_U8,
         KILN_TYPE_U16, KILN_TYPE_U32, KILN_TYPE_U64, KILN_TYPE_F16, KILN_TYPE_BF16, KILN_TYPE_F32,
         KILN_TYPE_F64, KILN_TYPE_F8E4M3, KILN_TYPE_F8E5M2, KILN_TYPE_ANY);
  return 0;
}
"""


if __name__ == "__main__":
    import json
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    header = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        here, "..", "..", "runtime", "include", "kiln", "runtime_c.h")
    compiler = json.load(open(sys.argv[2])) if len(sys.argv) > 2 else None
    problems, checked = abi_self_check(header, compiler)
    for line in checked:
        print("checked:", line)
    for p in problems:
        print("MISMATCH:", p)
    print("ABI self-check:", "FAILED" if problems else "ok")
    sys.exit(1 if problems else 0)
