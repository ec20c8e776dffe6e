/* The generated header compiles as C: its C part declares the bundle's
 * accessor, the C++ part is skipped. */
#include "types.h"

#include <kiln/runtime_c.h>

kiln_status load(kiln_device *device, kiln_module **module) {
  size_t size;
  const void *bytes = kiln_bundle_t__u__types(&size);
  return kiln_module_load_memory(device, bytes, size, module);
}
