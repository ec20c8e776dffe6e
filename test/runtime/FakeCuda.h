/*===- FakeCuda.h - The test doubles of the CUDA driver and HIP -----------===*
 *
 * libfakecuda.so (FakeCuda.cpp) exports the CUDA driver entry points that
 * the runtime's CUDA device uses, so that the device can be tested without
 * a GPU: point KILN_CUDA_DRIVER at it. libfakehip.so (the same source) does
 * the same for HIP (KILN_HIP_RUNTIME), with HIP's names and error codes;
 * its differences are listed at the end. Its behaviour comes from the
 * environment, read at every call:
 *
 *   KILN_FAKE_CUDA          nodevice (cuInit fails with CUDA_ERROR_NO_DEVICE),
 *                           one (default: one "Kiln Fake GPU", sm_90),
 *                           two (a second one, sm_86)
 *   KILN_FAKE_CUDA_DRIVER_VERSION   cuDriverGetVersion (default 12040)
 *   KILN_FAKE_CUDA_LOG      a file to which every launch appends a line:
 *                           "launch F grid=X,Y,Z block=X,Y,Z shared=N"
 *   KILN_FAKE_CUDA_TMAP_FAIL   set: cuTensorMapEncodeTiled fails with
 *                           CUDA_ERROR_INVALID_VALUE
 *
 * Memory is malloc'ed host memory, so copies and fills round-trip; every
 * call that needs a context fails with CUDA_ERROR_INVALID_CONTEXT unless
 * one is current, and device pointers must lie in a live allocation.
 *
 * A code object is accepted if it starts with "KILNFAKE": then lines
 * "NAME [params=N] [tmaps=M] [action=vadd|trap|fail|print|assert]
 * [maxthreads=N]", up to a line "END", declare its functions; tmaps=M: M
 * tensor maps follow the N params (each must point at a 64-byte-aligned map
 * that cuTensorMapEncodeTiled wrote, else the launch fails with
 * CUDA_ERROR_INVALID_VALUE; the launch records their first 8 bytes). Anything else is refused with
 * CUDA_ERROR_INVALID_PTX and a JIT error log. A launch records its
 * function, grid, block, shared memory and the first 8 bytes of each of
 * its N params; action vadd computes z[i] = x[i] + y[i] (f32) for params
 * (x, y, z, n); trap makes the next synchronization fail with
 * CUDA_ERROR_ASSERT (until the primary context is released); fail makes
 * the launch itself fail with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES.
 *
 * libfakehip.so: the variables are KILN_FAKE_HIP (nodevice: hipInit fails
 * with hipErrorInvalidDevice and the count is 0 with hipErrorNoDevice, as
 * ROCm 5.2 does without an AMD GPU; one: an MI300X-like gfx942, wave64;
 * two: also a gfx1100, wave32), KILN_FAKE_HIP_DRIVER_VERSION (default
 * 60241134, HIP 6.2), KILN_FAKE_HIP_LOG, and KILN_FAKE_HIP_ARCH /
 * KILN_FAKE_HIP_ARCH1 (gcnArchName of device 0 / 1; default
 * "gfx942:sramecc+:xnack-" / "gfx1100"), KILN_FAKE_HIP_WAVE (the wavefront
 * size every device reports). The current device is per thread
 * (hipSetDevice, default 0); streams and events belong to the device
 * current at their creation and are refused (hipErrorInvalidHandle) while
 * another is current, as ROCm 7 does. A code object must start with
 * "\x7fELF" followed by the text above (else hipErrorNoBinaryForGpu); a
 * trap leaves hipErrorLaunchFailure until the next hipInit (each device
 * open starts afresh); the default dynamic LDS limit is 64 KiB.
 *
 * libfakecuda11.so (the CUDA fake built with KILN_FAKE_CUDA_NO_TMA) is a
 * driver before CUDA 12: no cuTensorMapEncodeTiled, and version 11080 by
 * default.
 *
 * Both: action=print writes one record into Kiln's print buffer (the
 * hidden argument after the N params: runtime/lib/GpuDevice.h) with the
 * format "fake print: n = %d, half = %g\n", the last param's low 32 bits
 * and half of them; action=assert writes the same, then fails an
 * assertion in program (n, 0, 0) as a compiled AMD kernel does: if the
 * trap word after the records is 0 it claims it, writes a record of
 * "k.tile:3:5: assertion failed: boom (in program %d, %d, %d)\n" and
 * stores the record's offset + 1 there (for n >= 1000 it leaves ~0 there, as
 * a kernel whose message did not fit does).
 *===----------------------------------------------------------------------===*/
#ifndef KILN_TEST_RUNTIME_FAKECUDA_H
#define KILN_TEST_RUNTIME_FAKECUDA_H

#ifdef __cplusplus
extern "C" {
#endif

struct KilnFakeLaunch {
  char Function[128];
  unsigned Grid[3];
  unsigned Block[3];
  unsigned SharedBytes;
  /// The function's CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
  int MaxDynamicShared;
  unsigned NumParams;
  unsigned long long Params[16];
};

/* The arguments of one cuTensorMapEncodeTiled call (dimensions innermost
 * first, as CUDA has them). The fake writes the map as "KTMP", the call's
 * index (u32), then zeros. */
struct KilnFakeTensorMap {
  int DataType;
  unsigned Rank;
  unsigned long long Address;
  unsigned long long Dims[5];
  unsigned long long Strides[4];
  unsigned Box[5];
  unsigned ElementStrides[5];
  int Interleave, Swizzle, L2Promotion, OobFill;
};

/* Test hooks (found with dlsym). */
typedef int (*KilnFakeLastLaunchFn)(struct KilnFakeLaunch *Out);
typedef int (*KilnFakeLaunchCountFn)(void);
typedef void (*KilnFakeLiveFn)(int *Allocations, int *Streams, int *Events,
                               int *Modules, int *Contexts);

/* The last launch; 0 if there was none. */
int kiln_fake_cuda_last_launch(struct KilnFakeLaunch *Out);
/* Launches so far. */
int kiln_fake_cuda_launch_count(void);
/* cuTensorMapEncodeTiled calls so far; the arguments of call `Index`
 * (0-based; 0 if there was no such call). */
int kiln_fake_cuda_tensor_map_count(void);
int kiln_fake_cuda_tensor_map(int Index, struct KilnFakeTensorMap *Out);
/* Live objects: allocations, streams, events, modules, retained contexts. */
void kiln_fake_cuda_live(int *Allocations, int *Streams, int *Events,
                         int *Modules, int *Contexts);

#ifdef __cplusplus
}
#endif

#endif /* KILN_TEST_RUNTIME_FAKECUDA_H */
