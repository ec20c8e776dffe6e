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

#define KILN_EMU_ABI_VERSION 3

typedef struct KilnEmuThread KilnEmuThread;

/* A tensor map (Hopper's TMA descriptor, as the emulator sees it): what
 * the runtime evaluated from an image's "tensor_maps" entry
 * (docs/bundle.md) and the launch's arguments. An emulated image that has
 * tensor maps takes one extra argument per map after the kernel's
 * parameters, in the manifest's order: `args[i]` points at a variable
 * holding a `const KilnEmuTensorMap *`. Layout fixed, at these byte
 * offsets: base 0, rank 8, elem_bytes 12, sizes 16, strides 56, box 96,
 * swizzle 116, reserved 120 (128 bytes in all, with the padding at the
 * end). Entries past `rank` are 0. The runtime checked TMA's
 * requirements before the launch (docs/bundle.md, "tensor_maps"). Added
 * in ABI version 3. */
typedef struct KilnEmuTensorMap {
  const void *base;   /* global address of element (0, ..., 0) */
  int32_t rank;       /* 1..5 */
  int32_t elem_bytes; /* 1, 2, 4 or 8 */
  int64_t sizes[5];   /* outermost first */
  int64_t strides[5]; /* bytes, outermost first; strides[rank-1] = elem_bytes */
  int32_t box[5];     /* outermost first */
  int32_t swizzle;    /* 0, 32, 64, 128 (bytes) */
  int32_t reserved;
} KilnEmuTensorMap;

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
   * emulator checks the range, the alignment (2^n bytes up to 16 start on
   * a multiple of their size) and races first. */
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

  /* Hopper's mbarriers and TMA tensor loads (callbacks 13 to 16, counting
   * barrier as 0; appended in ABI version 3). An mbarrier is 8 bytes of
   * shared memory at `offset` (8-byte aligned); its phases count from 0. A
   * phase completes when its arrivals reach the barrier's count and its
   * pending transaction bytes are back to 0: then the phase flips (its
   * parity is phase % 2) and the arrivals start again from 0. Each thread
   * calls these on its own (they are not warp-wide). */

  /* mbarrier.init: the 8-byte barrier at shared `offset` expects `count`
   * arrivals per phase; phase 0. Checked like a write of its 8 bytes (the
   * other threads may use the barrier after a barrier); an init while the
   * barrier has pending arrivals or transactions is reported. */
  void (*mbarrier_init)(KilnEmuThread *t, int32_t offset, int32_t count,
                        const char *where);
  /* mbarrier.arrive.expect_tx: adds `bytes` to the current phase's pending
   * transaction bytes, then arrives once. */
  void (*mbarrier_arrive_expect_tx)(KilnEmuThread *t, int32_t offset,
                                    int32_t bytes, const char *where);
  /* cp.async.bulk.tensor (TMA) load: the box of `map` at `coords` (rank
   * entries, outermost first; they may be negative or past the end:
   * elements outside the tensor read as zero) into shared memory at
   * `shared_offset`, stored dense row-major and swizzled as the map says,
   * completing box-bytes of transactions on the barrier at `bar_offset`.
   * The bytes are written at once; a thread may read them only after its
   * own mbarrier_wait observed the phase they completed (checked). */
  void (*tensor_load)(KilnEmuThread *t, const KilnEmuTensorMap *map,
                      int32_t shared_offset, const int32_t *coords,
                      int32_t bar_offset, const char *where);
  /* mbarrier.try_wait.parity loop: returns once the barrier's phase with
   * parity `parity` has completed (its current phase's parity differs
   * from `parity`). A wait that nothing can end is reported. */
  void (*mbarrier_wait)(KilnEmuThread *t, int32_t offset, int32_t parity,
                        const char *where);
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
