/*===- CApiSmoke.c - The C API, used from C -------------------------------===*
 *
 * Compiled as C (so runtime_c.h must be valid C): runs vadd of a bundle
 * held in memory and checks the result. Called by CApiTest.cpp.
 *===----------------------------------------------------------------------===*/

#include "kiln/runtime_c.h"

#include <stdio.h>
#include <string.h>

#define CHECK(call)                                                            \
  do {                                                                         \
    kiln_status s_ = (call);                                                   \
    if (s_ != KILN_SUCCESS) {                                                  \
      snprintf(message, size, "%s: %s: %s", #call, kiln_status_name(s_),       \
               kiln_last_error());                                             \
      goto done;                                                               \
    }                                                                          \
  } while (0)

int kiln_c_smoke(const void *bundle, size_t bundle_size, char *message,
                 size_t size) {
  int ok = 0;
  kiln_device *dev = NULL;
  kiln_module *mod = NULL;
  kiln_kernel *k = NULL;
  kiln_stream *s = NULL;
  kiln_buffer *x = NULL;
  float in[10], out[10];
  int i;
  kiln_arg args[4];
  kiln_launch_options opts = {"BLOCK=8", -1};
  kiln_launch_info info;
  message[0] = 0;
  for (i = 0; i < 10; ++i)
    in[i] = (float)i;
  CHECK(kiln_device_open("host", &dev));
  CHECK(kiln_module_load_memory(dev, bundle, bundle_size, &mod));
  CHECK(kiln_module_get_kernel(mod, "vadd", &k));
  CHECK(kiln_stream_create(dev, &s));
  CHECK(kiln_buffer_alloc(dev, sizeof(in), &x));
  CHECK(kiln_copy_to_device(s, x, 0, in, sizeof(in)));
  args[0] = kiln_arg_pointer(kiln_buffer_pointer(x), KILN_TYPE_F32);
  args[1] = kiln_arg_pointer(kiln_buffer_pointer(x), KILN_TYPE_ANY);
  args[2] = kiln_arg_pointer(kiln_buffer_pointer(x), KILN_TYPE_F32);
  args[3] = kiln_arg_i32(10);
  CHECK(kiln_launch(k, s, args, 4, &opts, &info));
  CHECK(kiln_copy_to_host(s, out, x, 0, sizeof(out)));
  CHECK(kiln_stream_synchronize(s));
  for (i = 0; i < 10; ++i)
    if (out[i] != 2.0f * (float)i) {
      snprintf(message, size, "out[%d] = %g", i, out[i]);
      goto done;
    }
  if (info.variant != 1 || info.grid[0] != 2) {
    snprintf(message, size, "variant %u, grid %lld", info.variant,
             (long long)info.grid[0]);
    goto done;
  }
  ok = 1;
done:
  kiln_buffer_free(x);
  kiln_stream_destroy(s);
  kiln_module_unload(mod);
  kiln_device_close(dev);
  return ok;
}
