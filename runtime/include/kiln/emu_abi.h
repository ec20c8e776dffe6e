/*===- kiln/emu_abi.h - ABI of emulated GPU code objects ----------*- C -*-===//
 *
 * An `emu:<arch>` image (docs/emulator.md) is a host shared object compiled
 * from the GPU stage's per-thread form for <arch>. Its entry runs ONE GPU
 * thread of one program:
 *
 *   void entry(void **args, KilnEmuThread *thread);
 *
 * `args` as in the host ABI (kiln/host_abi.h). The emulator runs the entry
 * once per thread (warps x warp size per program), each on its own fiber,
 * and implements every primitive that involves other threads or shared
 * memory through the callbacks in `thread->ops`; the code object imports
 * nothing else from the runtime. `where` arguments are "file:line:col"
 * strings of the kernel's source (static storage in the image), for
 * reports.
 *
 * Layout: fixed, C. Generated code reads the fields below at these byte
 * offsets (64-bit pointers): ops 0, thread 8, lane 12, warp 16,
 * program_id 20, num_programs 32.
 *===----------------------------------------------------------------------===*/
#ifndef KILN_EMU_ABI_H
#define KILN_EMU_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_EMU_ABI_VERSION 2

typedef struct KilnEmuThread KilnEmuThread;

/* Shuffle kinds (kiln_gpu.shuffle). */
enum { KILN_EMU_SHFL_XOR = 0, KILN_EMU_SHFL_IDX = 1, KILN_EMU_SHFL_UP = 2,
       KILN_EMU_SHFL_DOWN = 3 };

typedef struct KilnEmuOps {
  /* kiln_gpu.barrier: returns when every thread of the program arrived. */
  void (*barrier)(KilnEmuThread *t, const char *where);
  /* kiln_gpu.shuffle of a value of `bits` bits (zero-extended): the value
   * of the lane that `kind` and `offset` name; every lane of the warp
   * calls it together. */
  uint64_t (*shuffle)(KilnEmuThread *t, int32_t kind, uint64_t value,
                      int32_t bits, int32_t offset, const char *where);
  /* Host address of `bytes` bytes at `offset` of the program's shared
   * memory, before this thread reads (is_write = 0) or writes them: the
   * emulator checks the range and races first. */
  uint8_t *(*shared)(KilnEmuThread *t, int32_t offset, int32_t bytes,
                     int32_t is_write, const char *where);
  /* kiln_gpu.shared_load_matrix: `count` 8x8 16-bit matrices; `offset` is
   * this lane's row address; writes this lane's 2 x count elements to
   * `out`. */
  void (*load_matrix)(KilnEmuThread *t, int32_t offset, int32_t count,
                      int32_t transpose, void *out, const char *where);
  /* kiln_gpu.mma `instr` (the target description's name): this lane's
   * registers of A, B, C in memory (element order of the per-thread
   * vectors); writes D. */
  void (*mma)(KilnEmuThread *t, const char *instr, const void *a,
              const void *b, const void *c, void *d, const char *where);
  /* kiln_gpu.async_copy / async_commit / async_wait. `valid` = 0 writes
   * zeros without reading `src`. */
  void (*async_copy)(KilnEmuThread *t, int32_t offset, const void *src,
                     int32_t bytes, int32_t valid, const char *where);
  void (*async_commit)(KilnEmuThread *t);
  void (*async_wait)(KilnEmuThread *t, int32_t pending, const char *where);
  /* kiln_gpu.printf: `args` packed as CUDA's vprintf packs them (each
   * argument at its natural alignment; floats as double, integers under
   * 32 bits as 32). */
  void (*printf)(KilnEmuThread *t, const char *format, const void *args);
  /* kiln_gpu.trap: does not return. */
  void (*trap)(KilnEmuThread *t, const char *where);
  /* Checked builds: 1 if [address, address + bytes) is device memory the
   * launch may access, else reports and returns 0 (the access is
   * skipped). */
  int32_t (*check)(KilnEmuThread *t, const void *address, int64_t bytes,
                   int32_t is_store, const char *where);
  /* kiln_gpu.warpgroup_mma `instr` (Hopper's wgmma): B read from shared
   * memory through the PTX matrix descriptor `b_desc`, whose start field
   * (bits 0-13) holds the operand's shared offset / 16; A likewise through
   * `a_desc`, or from this lane's registers when `a` is not null. `flags`
   * bit 0: A is M-major, bit 1: B is N-major. Every lane of the warp calls
   * it together; warp w computes rows 16 (w % 4) .. + 15 of the group's 64
   * (C and D: this lane's registers of them). Executed at once: the
   * instruction is computed at once; the shared memory it read must not
   * be written until a warpgroup_wait covers it (checked). Appended in
   * ABI version 2. */
  void (*warpgroup_mma)(KilnEmuThread *t, const char *instr, uint64_t a_desc,
                        const void *a, uint64_t b_desc, int32_t flags,
                        const void *c, void *d, const char *where);
  /* kiln_gpu.warpgroup_wait: every lane of the warp calls it together;
   * the warp's batches of warpgroup_mma (those issued between two waits)
   * but the last `pending` are complete. Appended in ABI version 2. */
  void (*warpgroup_wait)(KilnEmuThread *t, int32_t pending, const char *where);
} KilnEmuOps;

struct KilnEmuThread {
  const KilnEmuOps *ops;
  int32_t thread; /* 0 .. warps x warp size - 1 */
  int32_t lane;
  int32_t warp;
  int32_t program_id[3];
  int32_t num_programs[3];
  int32_t reserved;
};

typedef void (*KilnEmuEntry)(void **args, KilnEmuThread *thread);

#ifdef __cplusplus
}
#endif

#endif /* KILN_EMU_ABI_H */
