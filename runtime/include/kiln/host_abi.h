/*===- kiln/host_abi.h - The host code object ABI -------------------------===*
 *
 * The contract between codegen/host (which emits one shared object per
 * kernel variant) and the runtime's host device (which loads it and runs
 * one call per program instance, concurrently, on a thread pool).
 *
 * A host image is an ELF shared object for the bundle's host triple. It
 * exports one function per variant, named by the image's `kiln.entry`
 * string (e.g. "softmax_v3"), with this C signature:
 *
 *     void entry(void **args, const KilnHostProgram *program);
 *
 * `args[i]` points to the value of the kernel's i-th runtime parameter, in
 * declaration order: for a pointer parameter, to a `void *` holding the
 * device (here: host) address; for a scalar, to the scalar in its natural
 * C representation (bool: one byte 0/1; f16/bf16: the 16-bit pattern).
 * The image needs nothing from the process but libc (and libm); it calls
 * back into the runtime only through `program`.
 *
 * This header is plain C so that generated code, the runtime and FFI users
 * agree on one layout. KILN_HOST_ABI_VERSION changes whenever it changes.
 *===----------------------------------------------------------------------===*/
#ifndef KILN_HOST_ABI_H
#define KILN_HOST_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_HOST_ABI_VERSION 2

/* Scalar kinds, as passed to `print` (same order as the language's types). */
typedef enum KilnScalarKind {
  KILN_BOOL = 0,
  KILN_I8, KILN_I16, KILN_I32, KILN_I64,
  KILN_U8, KILN_U16, KILN_U32, KILN_U64,
  KILN_F16, KILN_BF16, KILN_F32, KILN_F64,
  KILN_F8E4M3, KILN_F8E5M2
} KilnScalarKind;

typedef struct KilnHostProgram {
  /* This program instance's coordinates and the grid's extent. */
  int32_t program_id[3];
  int32_t num_programs[3];
  /* Opaque runtime state handed back to the callbacks. */
  void *runtime;
  /* print("fmt", x): `text` is the format string; `values` holds `count`
   * elements of `kind` (a scalar: count 1; a tile: row-major, `rank` dims
   * in `shape`). Called once per print statement per program. */
  void (*print)(void *runtime, const char *text, int32_t kind,
                const void *values, int64_t count, int32_t rank,
                const int64_t *shape);
  /* A failed assert or a checked-mode violation: `message` says what and
   * where (file:line:col). The kernel returns right after the call. */
  void (*trap)(void *runtime, const char *message);
  /* Checked mode only (images compiled with --check-bounds): called before
   * every load, store and atomic that its mask lets through. Returns 1 when
   * [address, address + bytes) lies inside memory the runtime allocated; 0
   * otherwise, after recording "out-of-range <load|store> of N bytes at
   * ADDR: <where>" as the trap message; the access is then skipped.
   * `is_store` is 1 for stores and atomics. (Added in ABI version 2.) */
  int32_t (*check)(void *runtime, const void *address, int64_t bytes,
                   int32_t is_store, const char *where);
} KilnHostProgram;

typedef void (*KilnHostEntry)(void **args, const KilnHostProgram *program);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_HOST_ABI_H */
