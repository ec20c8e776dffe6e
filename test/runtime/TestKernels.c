/*===- TestKernels.c - Hand-written host kernels for the runtime tests ----===*
 *
 * Until codegen/host produces kernels, the runtime is tested with these:
 * plain C following kiln/host_abi.h, built into one shared object whose
 * bytes the tests put into bundles (one image per variant, each exporting
 * the entries of every kernel; the manifest picks one by name).
 *
 * Each kernel's comment gives the signature the tests declare for it.
 *===----------------------------------------------------------------------===*/

#include "kiln/host_abi.h"

#include <stdint.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

#define PTR(T, i) (*(T *const *)args[i])
#define VAL(T, i) (*(const T *)args[i])

/* vadd<BLOCK>(x: *f32, y: *f32, z: *f32, n: i32), grid (cdiv n BLOCK):
 * z = x + y. Variant v has BLOCK = 4 << v. */
static void vadd(void **args, const KilnHostProgram *p, int64_t block) {
  const float *x = PTR(float, 0), *y = PTR(float, 1);
  float *z = PTR(float, 2);
  int32_t n = VAL(int32_t, 3);
  int64_t begin = (int64_t)p->program_id[0] * block;
  for (int64_t i = begin; i < begin + block && i < n; ++i)
    z[i] = x[i] + y[i];
}
EXPORT void vadd_v0(void **a, const KilnHostProgram *p) { vadd(a, p, 4); }
EXPORT void vadd_v1(void **a, const KilnHostProgram *p) { vadd(a, p, 8); }
EXPORT void vadd_v2(void **a, const KilnHostProgram *p) { vadd(a, p, 16); }

/* tag(out: *i32, ...): program 0 writes which entry ran (100 + variant). */
static void tag(void **args, const KilnHostProgram *p, int32_t v) {
  if (p->program_id[0] == 0 && p->program_id[1] == 0 && p->program_id[2] == 0)
    PTR(int32_t, 0)[0] = 100 + v;
}
EXPORT void tag_v0(void **a, const KilnHostProgram *p) { tag(a, p, 0); }
EXPORT void tag_v1(void **a, const KilnHostProgram *p) { tag(a, p, 1); }
EXPORT void tag_v2(void **a, const KilnHostProgram *p) { tag(a, p, 2); }
EXPORT void tag_v3(void **a, const KilnHostProgram *p) { tag(a, p, 3); }

/* count(hits: *i32, total: *i64): every program adds 1 to its own slot
 * hits[x + X * (y + Y * z)] and to *total; 3-d grids check the ids. */
EXPORT void count_v0(void **args, const KilnHostProgram *p) {
  int32_t *hits = PTR(int32_t, 0);
  int64_t *total = PTR(int64_t, 1);
  int64_t linear = p->program_id[0] +
                   (int64_t)p->num_programs[0] *
                       (p->program_id[1] +
                        (int64_t)p->num_programs[1] * p->program_id[2]);
  __atomic_fetch_add(&hits[linear], 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(total, 1, __ATOMIC_RELAXED);
}

/* overlap(stats: *i64, micros: i32): stats[0] = programs running now,
 * stats[1] = the most ever running at once. Each program sleeps. */
EXPORT void overlap_v0(void **args, const KilnHostProgram *p) {
  int64_t *stats = PTR(int64_t, 0);
  int32_t micros = VAL(int32_t, 1);
  int64_t now = __atomic_add_fetch(&stats[0], 1, __ATOMIC_SEQ_CST);
  int64_t seen = __atomic_load_n(&stats[1], __ATOMIC_SEQ_CST);
  while (now > seen &&
         !__atomic_compare_exchange_n(&stats[1], &seen, now, 0,
                                      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
  }
  struct timespec ts = {0, (long)micros * 1000};
  nanosleep(&ts, 0);
  __atomic_sub_fetch(&stats[0], 1, __ATOMIC_SEQ_CST);
}

/* scalars(out: *u8, b: bool, a: i8, c: i16, d: i32, e: i64, f: u8,
 *         g: u16, h: u32, i: u64, j: f16, k: bf16, l: f32, m: f64):
 * copies each argument's bytes to out, 8 bytes apart. */
EXPORT void scalars_v0(void **args, const KilnHostProgram *p) {
  static const int sizes[13] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8};
  uint8_t *out = PTR(uint8_t, 0);
  for (int i = 0; i < 13; ++i) {
    const uint8_t *v = (const uint8_t *)args[i + 1];
    for (int b = 0; b < sizes[i]; ++b)
      out[8 * i + b] = v[b];
  }
}

/* printer(x: *f32): prints a scalar, a 2x3 tile, a bool, and plain text. */
EXPORT void printer_v0(void **args, const KilnHostProgram *p) {
  float v = PTR(float, 0)[p->program_id[0]];
  int32_t tile[6] = {1, 2, 3, 4, 5, -6};
  int64_t shape[2] = {2, 3};
  uint8_t flag = 1;
  uint16_t half = 0x3e00; /* 1.5 */
  p->print(p->runtime, "x = ", KILN_F32, &v, 1, 0, 0);
  p->print(p->runtime, "t = ", KILN_I32, tile, 6, 2, shape);
  p->print(p->runtime, "flag ", KILN_BOOL, &flag, 1, 0, 0);
  p->print(p->runtime, "h=", KILN_F16, &half, 1, 0, 0);
  p->print(p->runtime, "hello", KILN_I32, 0, 0, 0, 0);
}

/* trapper(n: i32): program n traps; the others count themselves in
 * done[0] (trapper(n: i32, done: *i64) in the tests). */
EXPORT void trapper_v0(void **args, const KilnHostProgram *p) {
  int32_t n = VAL(int32_t, 0);
  if (p->program_id[0] == n) {
    p->trap(p->runtime, "k.tile:3:5: assertion failed: boom");
    return;
  }
  __atomic_fetch_add(&PTR(int64_t, 1)[0], 1, __ATOMIC_RELAXED);
}

/* bcopy(x: *bf16, y: *bf16, n: i32), grid (n): y[i] = x[i] (bits). */
EXPORT void bcopy_v0(void **args, const KilnHostProgram *p) {
  int32_t i = p->program_id[0];
  PTR(uint16_t, 1)[i] = PTR(const uint16_t, 0)[i];
}

/* scale(x: *f64, s: f64, n: i64), grid (n): x[i] *= s, in place. */
EXPORT void scale_v0(void **args, const KilnHostProgram *p) {
  PTR(double, 0)[p->program_id[0]] *= VAL(double, 1);
}

/* spin<DELAY>(acc: *f32, n: i32, micros: i32), grid (1): burns DELAY x
 * micros microseconds of its thread's CPU time (not wall time: a machine
 * under load stretches every variant alike), then acc[i] = 2 * acc[i] + 1
 * for i < n (in place, so a tuner that does not restore it shows). Variant
 * v has DELAY 6, 1, 3, 10 (spin_v1 is the fastest, then spin_v2); there
 * is no spin_v4 (its load fails). */
static void spin(void **args, const KilnHostProgram *p, int64_t delay) {
  float *acc = PTR(float, 0);
  int32_t n = VAL(int32_t, 1);
  int64_t wait = delay * VAL(int32_t, 2) * 1000;
  struct timespec t0, t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
  do
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  while ((t.tv_sec - t0.tv_sec) * 1000000000LL + (t.tv_nsec - t0.tv_nsec) <
         wait);
  for (int32_t i = 0; i < n; ++i)
    acc[i] = 2 * acc[i] + 1;
}
EXPORT void spin_v0(void **a, const KilnHostProgram *p) { spin(a, p, 6); }
EXPORT void spin_v1(void **a, const KilnHostProgram *p) { spin(a, p, 1); }
EXPORT void spin_v2(void **a, const KilnHostProgram *p) { spin(a, p, 3); }
EXPORT void spin_v3(void **a, const KilnHostProgram *p) { spin(a, p, 10); }
