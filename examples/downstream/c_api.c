/* Runs vector_add and softmax through the C API (kiln/runtime_c.h), the
 * way another language's FFI would: the bundles come from the C accessors
 * that the generated header declares (kiln_bundle_<namespace>__<file>), the
 * arguments are kiln_arg values. Results are checked against a plain C
 * reference computed in double; outputs are poisoned first.
 *
 * Exit code 0 when every result is within its tolerance. */
#include "example_kernels.h"

#include <kiln/runtime_c.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHECK(call)                                                          \
  do {                                                                       \
    kiln_status status_ = (call);                                            \
    if (status_ != KILN_SUCCESS) {                                           \
      fprintf(stderr, "%s: %s: %s\n", #call, kiln_status_name(status_),     \
              kiln_last_error());                                            \
      return 1;                                                              \
    }                                                                        \
  } while (0)

/* A uniform float in [-4, 4) from a small LCG (C has no portable one). */
static unsigned long long state;
static float uniform(void) {
  state = state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (float)((state >> 40) * 0x1p-24) * 8.0f - 4.0f;
}

static int run_vector_add(kiln_device *dev, kiln_stream *stream) {
  const int n = 100003;
  size_t size, bytes = (size_t)n * sizeof(float);
  const void *bundle = kiln_bundle_examples__vector_add(&size);
  kiln_module *module;
  kiln_kernel *kernel;
  kiln_buffer *x, *y, *z;
  float *hx = malloc(bytes), *hy = malloc(bytes), *hz = malloc(bytes);
  double worst = 0;
  int i, bad = 0;
  if (!hx || !hy || !hz)
    return 1;
  for (i = 0; i < n; ++i) {
    hx[i] = uniform();
    hy[i] = uniform();
  }
  CHECK(kiln_module_load_memory(dev, bundle, size, &module));
  CHECK(kiln_module_get_kernel(module, "vector_add", &kernel));
  CHECK(kiln_buffer_alloc(dev, bytes, &x));
  CHECK(kiln_buffer_alloc(dev, bytes, &y));
  CHECK(kiln_buffer_alloc(dev, bytes, &z));
  CHECK(kiln_copy_to_device(stream, x, 0, hx, bytes));
  CHECK(kiln_copy_to_device(stream, y, 0, hy, bytes));
  CHECK(kiln_fill(stream, z, 0, 0xff, bytes));
  {
    kiln_arg args[4];
    args[0] = kiln_arg_pointer(kiln_buffer_pointer(x), KILN_TYPE_F32);
    args[1] = kiln_arg_pointer(kiln_buffer_pointer(y), KILN_TYPE_F32);
    args[2] = kiln_arg_pointer(kiln_buffer_pointer(z), KILN_TYPE_F32);
    args[3] = kiln_arg_i32(n);
    CHECK(kiln_launch(kernel, stream, args, 4, NULL, NULL));
  }
  CHECK(kiln_copy_to_host(stream, hz, z, 0, bytes));
  CHECK(kiln_stream_synchronize(stream));
  for (i = 0; i < n; ++i) {
    double want = (double)hx[i] + (double)hy[i];
    double err = fabs(hz[i] - want);
    if (!(err <= 0x1p-24 * fabs(want)))
      ++bad;
    if (!(err <= worst))
      worst = err;
  }
  printf("  vector_add    %8d values, max abs error %.3g: %s\n", n, worst,
         bad ? "FAIL" : "ok");
  kiln_buffer_free(x);
  kiln_buffer_free(y);
  kiln_buffer_free(z);
  kiln_module_unload(module);
  free(hx);
  free(hy);
  free(hz);
  return bad != 0;
}

static int run_softmax(kiln_device *dev, kiln_stream *stream) {
  enum { rows = 19, cols = 700, stride = 704 };
  size_t size, bytes = (size_t)rows * stride * sizeof(float);
  const void *bundle = kiln_bundle_examples__softmax(&size);
  kiln_module *module;
  kiln_kernel *kernel;
  kiln_buffer *x, *y;
  float *hx = malloc(bytes), *hy = malloc(bytes);
  double worst = 0;
  int r, c, bad = 0;
  if (!hx || !hy)
    return 1;
  for (r = 0; r < rows * stride; ++r)
    hx[r] = uniform();
  CHECK(kiln_module_load_memory(dev, bundle, size, &module));
  CHECK(kiln_module_get_kernel(module, "softmax", &kernel));
  CHECK(kiln_buffer_alloc(dev, bytes, &x));
  CHECK(kiln_buffer_alloc(dev, bytes, &y));
  CHECK(kiln_copy_to_device(stream, x, 0, hx, bytes));
  CHECK(kiln_fill(stream, y, 0, 0xff, bytes));
  {
    kiln_arg args[5];
    kiln_launch_info info;
    args[0] = kiln_arg_pointer(kiln_buffer_pointer(x), KILN_TYPE_F32);
    args[1] = kiln_arg_pointer(kiln_buffer_pointer(y), KILN_TYPE_F32);
    args[2] = kiln_arg_i32(rows);
    args[3] = kiln_arg_i32(cols);
    args[4] = kiln_arg_i32(stride);
    CHECK(kiln_launch(kernel, stream, args, 5, NULL, &info));
    printf("  softmax ran variant %s (%s)\n",
           kiln_kernel_variant_name(kernel, info.variant),
           kiln_kernel_variant_config(kernel, info.variant));
  }
  CHECK(kiln_copy_to_host(stream, hy, y, 0, bytes));
  CHECK(kiln_stream_synchronize(stream));
  for (r = 0; r < rows; ++r) {
    const float *row = hx + (size_t)r * stride;
    double max = -INFINITY, sum = 0;
    for (c = 0; c < cols; ++c)
      max = fmax(max, row[c]);
    for (c = 0; c < cols; ++c)
      sum += exp(row[c] - max);
    for (c = 0; c < stride; ++c) {
      float got = hy[(size_t)r * stride + c];
      if (c >= cols) {
        bad += !isnan(got); /* the tail must stay poisoned */
        continue;
      }
      double want = exp(row[c] - max) / sum;
      double err = fabs(got - want);
      if (!(err <= 1e-6 + 1e-5 * want))
        ++bad;
      if (!(err <= worst))
        worst = err;
    }
  }
  printf("  softmax       %8d values, max abs error %.3g: %s\n", rows * cols,
         worst, bad ? "FAIL" : "ok");
  kiln_buffer_free(x);
  kiln_buffer_free(y);
  kiln_module_unload(module);
  free(hx);
  free(hy);
  return bad != 0;
}

int main(void) {
  kiln_device *dev;
  kiln_stream *stream;
  int failures;
  state = (unsigned long long)time(NULL);
  CHECK(kiln_device_open("auto", &dev));
  {
    /* A GPU that the kernels were not compiled for (TARGETS): the host. */
    size_t size;
    const void *bundle = kiln_bundle_examples__vector_add(&size);
    kiln_module *probe;
    kiln_status status = kiln_module_load_memory(dev, bundle, size, &probe);
    if (status == KILN_ERROR_NO_IMAGE) {
      printf("note: %s; running on the host\n", kiln_last_error());
      kiln_device_close(dev);
      CHECK(kiln_device_open("host", &dev));
    } else if (status == KILN_SUCCESS) {
      kiln_module_unload(probe);
    }
  }
  CHECK(kiln_stream_create(dev, &stream));
  printf("device %s, seed %llu\n", kiln_device_description(dev), state);
  failures = run_vector_add(dev, stream) + run_softmax(dev, stream);
  kiln_stream_destroy(stream);
  kiln_device_close(dev);
  printf("%s\n", failures ? "FAILED" : "all results match the reference");
  return failures != 0;
}
