/*===- EmuTestKernels.c - Hand-written emulated-GPU kernels ---------------===*
 *
 * Kernels for the emulator device's own tests (EmuDeviceTest.cpp): plain C
 * following kiln/emu_abi.h, one GPU thread per call, each doing one thing
 * the emulator must run or must report. `where` strings stand for the
 * source locations the compiler passes.
 *===----------------------------------------------------------------------===*/

#include "kiln/emu_abi.h"

#include <stdint.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))
#define PTR(T, i) (*(T *const *)args[i])
#define VAL(T, i) (*(const T *)args[i])

static uint32_t *shared32(KilnEmuThread *t, int32_t offset, int write,
                          const char *where) {
  return (uint32_t *)t->ops->shared(t, offset, 4, write, where);
}

/* exchange(out: *u32): each thread writes its id to shared word `thread`,
 * waits at a barrier, reads its neighbour's word and adds the value an xor
 * shuffle brings from lane ^ 1: out[thread] = next + (lane ^ 1) + 1000 *
 * program. 64 threads, 256 shared bytes. */
EXPORT void exchange(void **args, KilnEmuThread *t) {
  uint32_t *out = PTR(uint32_t, 0);
  int32_t n = 64;
  *shared32(t, 4 * t->thread, 1, "k.tile:1:1") = (uint32_t)t->thread;
  t->ops->barrier(t, "k.tile:2:1");
  uint32_t next = *shared32(t, 4 * ((t->thread + 1) % n), 0, "k.tile:3:1");
  uint64_t other =
      t->ops->shuffle(t, KILN_EMU_SHFL_XOR, (uint64_t)t->lane, 32, 1,
                      "k.tile:4:1");
  out[t->thread + n * t->program_id[0]] =
      next + (uint32_t)other + 1000u * (uint32_t)t->program_id[0];
}

/* race: threads 0 and 1 write shared word 0 with no barrier between. */
EXPORT void race(void **args, KilnEmuThread *t) {
  if (t->thread < 2)
    *shared32(t, 0, 1, "race.tile:7:3") = 1;
}

/* unwritten: thread 2 reads shared word 2, which nothing writes. */
EXPORT void unwritten(void **args, KilnEmuThread *t) {
  if (t->thread == 2)
    (void)*shared32(t, 8, 0, "unwritten.tile:4:9");
  t->ops->barrier(t, "unwritten.tile:5:1");
}

/* out_of_range: thread 3 writes the word just past the 256 bytes. */
EXPORT void out_of_range(void **args, KilnEmuThread *t) {
  if (t->thread == 3)
    *shared32(t, 256, 1, "oob.tile:2:2") = 7;
}

/* early_exit: thread 5 returns before the barrier the others wait at. */
EXPORT void early_exit(void **args, KilnEmuThread *t) {
  if (t->thread == 5)
    return;
  t->ops->barrier(t, "exit.tile:9:1");
}

/* diverge: lane 0 of each warp shuffles at one place, the others at
 * another. */
EXPORT void diverge(void **args, KilnEmuThread *t) {
  t->ops->shuffle(t, KILN_EMU_SHFL_XOR, 1, 32, 1,
                  t->lane == 0 ? "div.tile:3:5" : "div.tile:4:5");
}

/* async_ok(src: *u32, out: *u32): threads 0-15 each copy 16 bytes of src
 * into their shared slot asynchronously and wait; after a barrier, every
 * thread reads the next slot: out[4 t + i] = src[4 ((t + 1) % 16) + i]. */
EXPORT void async_ok(void **args, KilnEmuThread *t) {
  const uint32_t *src = PTR(const uint32_t, 0);
  uint32_t *out = PTR(uint32_t, 1);
  if (t->thread < 16) {
    t->ops->async_copy(t, 16 * t->thread, src + 4 * t->thread, 16, 1,
                       "async.tile:1:1");
    t->ops->async_commit(t);
    t->ops->async_wait(t, 0, "async.tile:2:1");
  }
  t->ops->barrier(t, "async.tile:3:1");
  int32_t next = (t->thread + 1) % 16;
  const uint8_t *p = t->ops->shared(t, 16 * next, 16, 0, "async.tile:4:1");
  memcpy(out + 4 * t->thread, p, 16);
}

/* async_early: thread 0 copies into word 0 and reads it before waiting. */
EXPORT void async_early(void **args, KilnEmuThread *t) {
  const uint32_t *src = PTR(const uint32_t, 0);
  if (t->thread != 0)
    return;
  t->ops->async_copy(t, 0, src, 4, 1, "early.tile:1:1");
  t->ops->async_commit(t);
  (void)*shared32(t, 0, 0, "early.tile:2:1");
  t->ops->async_wait(t, 0, "early.tile:3:1");
}

/* trapper: thread 7 prints a message and traps. */
EXPORT void trapper(void **args, KilnEmuThread *t) {
  if (t->thread != 7)
    return;
  int32_t packed[2] = {7, 0};
  t->ops->printf(t, "trap.tile:3:5: assertion failed: thread %d\n", packed);
  t->ops->trap(t, "trap.tile:3:5");
}

/* wgmma_write: both warps store B (16 x 8 f16, K-major, no swizzle: 256
 * bytes), then issue a warpgroup matrix instruction reading it (A from
 * registers); thread 0 then writes word 0 of B — before the wait when
 * args[0] (an i32) is 0, after it (and a barrier) otherwise. */
EXPORT void wgmma_write(void **args, KilnEmuThread *t) {
  int32_t after = *(const int32_t *)args[0];
  *shared32(t, 4 * t->thread, 1, "wgmma.tile:1:1") = 0x3c003c00u; /* 1, 1 */
  t->ops->barrier(t, "wgmma.tile:2:1");
  uint16_t a[8];
  float c[4] = {0, 0, 0, 0}, d[4];
  for (int i = 0; i < 8; ++i)
    a[i] = 0x3c00; /* 1.0 */
  /* LBO 128 (the second 8 of K), SBO 256; start 0. */
  uint64_t desc = ((uint64_t)(256 >> 4) << 32) | ((uint64_t)(128 >> 4) << 16);
  t->ops->warpgroup_mma(t, "nv.wgmma.m64n8k16.f16", 0, a, desc, 0, c, d,
                        "wgmma.tile:3:1");
  if (after) {
    t->ops->warpgroup_wait(t, 0, "wgmma.tile:4:1");
    t->ops->barrier(t, "wgmma.tile:4:9");
  }
  if (t->thread == 0)
    *shared32(t, 0, 1, "wgmma.tile:5:1") = 0;
  if (!after)
    t->ops->warpgroup_wait(t, 0, "wgmma.tile:6:1");
  if (d[0] != 16.0f) /* sixteen products of ones */
    t->ops->trap(t, "wgmma.tile:7:1");
}

/*===----------------------------------------------------------------------===*
 * Hopper's mbarriers and tensor loads (TMA). These kernels run on emu:sm_90a
 * images whose manifest gives them tensor maps: the map of tensor map i is
 * the argument after the kernel's parameters (MAP(i) below). The barrier
 * is at shared offset 0 (the second at 8); boxes go from 1024 up.
 *===----------------------------------------------------------------------===*/

#define MAP(i) (*(const KilnEmuTensorMap *const *)args[i])

/* Copies shared bytes [from, from + bytes) to out, 16 bytes per call, the
 * chunks spread over the 64 threads. */
static void copy_out(KilnEmuThread *t, uint8_t *out, int32_t from,
                     int32_t bytes, const char *where) {
  for (int32_t c = 16 * t->thread; c < bytes; c += 16 * 64)
    memcpy(out + c, t->ops->shared(t, from + c, 16, 0, where), 16);
}

/* tma_box(src: *u16, out: *u8, rows, cols, ld, c0, c1, bytes, dst: i32) +
 * map 0 over src ([rows, cols], strides [ld, 1]): thread 0 loads the box at
 * (c0, c1) into shared offset dst; every thread waits for it, then out
 * receives the shared bytes [dst, dst + bytes) as they are (swizzled). */
EXPORT void tma_box(void **args, KilnEmuThread *t) {
  uint8_t *out = PTR(uint8_t, 1);
  int32_t coords[2] = {VAL(int32_t, 5), VAL(int32_t, 6)};
  int32_t bytes = VAL(int32_t, 7), dst = VAL(int32_t, 8);
  if (t->thread == 0)
    t->ops->mbarrier_init(t, 0, 1, "box.tile:1:1");
  t->ops->barrier(t, "box.tile:2:1");
  if (t->thread == 0) {
    t->ops->mbarrier_arrive_expect_tx(t, 0, bytes, "box.tile:3:1");
    t->ops->tensor_load(t, MAP(9), dst, coords, 0, "box.tile:4:1");
  }
  t->ops->mbarrier_wait(t, 0, 0, "box.tile:5:1");
  copy_out(t, out, dst, bytes, "box.tile:6:1");
}

/* tma_ring(src: *u32, out: *u32, tiles: i32) + map 0 over src ([8 tiles,
 * 16], box [8, 16], 512 bytes a tile): a 2-stage ring (stages at 1024 and
 * 1536, full barriers at 0 and 8). Thread 0 keeps the next tiles in
 * flight; every thread waits for each tile, adds its elements t and t + 64
 * to a sum, and the stage is refilled after a barrier: out[64 program +
 * t] = the sum over the tiles. */
EXPORT void tma_ring(void **args, KilnEmuThread *t) {
  uint32_t *out = PTR(uint32_t, 1);
  int32_t tiles = VAL(int32_t, 2);
  const KilnEmuTensorMap *map = MAP(3);
  if (t->thread == 0) {
    t->ops->mbarrier_init(t, 0, 1, "ring.tile:1:1");
    t->ops->mbarrier_init(t, 8, 1, "ring.tile:1:2");
  }
  t->ops->barrier(t, "ring.tile:2:1");
  for (int32_t i = 0; i < 2 && i < tiles; ++i)
    if (t->thread == 0) {
      int32_t coords[2] = {8 * i, 0};
      t->ops->mbarrier_arrive_expect_tx(t, 8 * i, 512, "ring.tile:3:1");
      t->ops->tensor_load(t, map, 1024 + 512 * i, coords, 8 * i,
                          "ring.tile:4:1");
    }
  uint32_t sum = 0;
  for (int32_t i = 0; i < tiles; ++i) {
    int32_t s = i % 2;
    t->ops->mbarrier_wait(t, 8 * s, (i / 2) % 2, "ring.tile:5:1");
    for (int32_t e = t->thread; e < 128; e += 64) {
      uint32_t v;
      memcpy(&v, t->ops->shared(t, 1024 + 512 * s + 4 * e, 4, 0,
                                "ring.tile:6:1"),
             4);
      sum += v;
    }
    t->ops->barrier(t, "ring.tile:7:1");
    if (t->thread == 0 && i + 2 < tiles) {
      int32_t coords[2] = {8 * (i + 2), 0};
      t->ops->mbarrier_arrive_expect_tx(t, 8 * s, 512, "ring.tile:8:1");
      t->ops->tensor_load(t, map, 1024 + 512 * s, coords, 8 * s,
                          "ring.tile:9:1");
    }
  }
  out[64 * t->program_id[0] + t->thread] = sum;
}

/* tma_bug(src: *u32, kind: i32) + map 0 over src (box [8, 16], 512
 * bytes): one misuse per kind, each reported:
 *   0  thread 5 reads the box without waiting for it;
 *   1  every thread waits for a phase that needs 2 arrivals and gets 1;
 *   2  thread 0 initializes the barrier again while its phase has an
 *      arrival;
 *   3  the box goes to shared offset 1152 (not 1024-aligned: swizzle 128
 *      in the map this kind is given with);
 *   4  thread 0 loads the box over B while a warpgroup instruction reads
 *      it (no warpgroup_wait between);
 *   5  (with a map larger than its buffer) a plain load, for checked
 *      builds;
 *   6  every thread waits at an mbarrier nothing initialized (offset 16);
 *   7  thread 0 arrives twice at a barrier that expects one arrival;
 *   8  the box goes to shared offset 2048, past the 2048 bytes;
 *   9  thread 0 initializes an mbarrier at offset 4 (misaligned);
 *   10 thread 0 initializes the barrier with a count of 0;
 *   11 thread 0 loads with a null map. */
EXPORT void tma_bug(void **args, KilnEmuThread *t) {
  int32_t kind = VAL(int32_t, 1);
  const KilnEmuTensorMap *map = kind == 11 ? 0 : MAP(2);
  int32_t coords[2] = {0, 0};
  if (kind == 6) {
    t->ops->mbarrier_wait(t, 16, 0, "bug.tile:9:1");
    return;
  }
  if (kind == 9 || kind == 10) {
    if (t->thread == 0)
      t->ops->mbarrier_init(t, kind == 9 ? 4 : 0, kind == 9 ? 1 : 0,
                            "bug.tile:9:2");
    return;
  }
  if (t->thread == 0)
    t->ops->mbarrier_init(t, 0, kind == 1 ? 2 : 1, "bug.tile:1:1");
  t->ops->barrier(t, "bug.tile:2:1");
  if (kind == 4) {
    /* wgmma_write's instruction (B: 16 x 8 f16 at 1024, 256 bytes). */
    *shared32(t, 1024 + 4 * t->thread, 1, "bug.tile:3:1") = 0x3c003c00u;
    t->ops->barrier(t, "bug.tile:3:2");
    uint16_t a[8];
    float c[4] = {0, 0, 0, 0}, d[4];
    for (int i = 0; i < 8; ++i)
      a[i] = 0x3c00;
    uint64_t desc = ((uint64_t)(256 >> 4) << 32) |
                    ((uint64_t)(128 >> 4) << 16) | (1024 >> 4);
    t->ops->warpgroup_mma(t, "nv.wgmma.m64n8k16.f16", 0, a, desc, 0, c, d,
                          "bug.tile:3:3");
  }
  if (t->thread == 0) {
    t->ops->mbarrier_arrive_expect_tx(t, 0, kind == 1 ? 0 : 512,
                                      "bug.tile:4:1");
    if (kind == 7)
      t->ops->mbarrier_arrive_expect_tx(t, 0, 0, "bug.tile:4:2");
    if (kind == 2)
      t->ops->mbarrier_init(t, 0, 1, "bug.tile:5:1");
    if (kind != 1)
      t->ops->tensor_load(t, map, kind == 3 ? 1152 : kind == 8 ? 2048 : 1024,
                          coords, 0, "bug.tile:6:1");
  }
  if (kind == 4)
    t->ops->warpgroup_wait(t, 0, "bug.tile:7:0");
  if (kind != 0 || t->thread != 5)
    t->ops->mbarrier_wait(t, 0, 0, "bug.tile:7:1");
  if (kind == 0)
    (void)*shared32(t, 1024, 0, "bug.tile:8:1");
}
