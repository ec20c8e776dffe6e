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
