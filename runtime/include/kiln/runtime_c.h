/*===- kiln/runtime_c.h - The Kiln runtime C API --------------------------===*
 *
 * A C API over libkiln_runtime for FFI users (Python ctypes, Rust, ...).
 * Objects are opaque handles. Every fallible function returns a
 * kiln_status; on failure, kiln_last_error() returns the message of the
 * last failing call made on the calling thread (thread-local; it stays
 * valid until the next failing call on that thread). Nothing aborts:
 * a NULL handle or out-pointer gives KILN_ERROR_INVALID_ARGUMENT.
 *
 * Lifetimes: buffers, streams, events and modules keep their device alive,
 * so they may be released in any order. A kiln_kernel belongs to its module
 * and is valid until kiln_module_unload. Strings returned by the API are
 * valid as long as the object they describe.
 *
 * See docs/runtime.md.
 *===----------------------------------------------------------------------===*/
#ifndef KILN_RUNTIME_C_H
#define KILN_RUNTIME_C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Same values as kiln::rt::ErrorCode. */
typedef enum kiln_status {
  KILN_SUCCESS = 0,
  KILN_ERROR_INVALID_ARGUMENT = 1,
  KILN_ERROR_NOT_FOUND = 2,
  KILN_ERROR_INVALID_BUNDLE = 3,
  KILN_ERROR_UNSUPPORTED_VERSION = 4,
  KILN_ERROR_NO_IMAGE = 5,
  KILN_ERROR_LAUNCH_REFUSED = 6,
  KILN_ERROR_KERNEL_TRAPPED = 7,
  KILN_ERROR_UNSUPPORTED_DEVICE = 8,
  KILN_ERROR_IO = 9,
  KILN_ERROR_DRIVER = 10,
  KILN_ERROR_OUT_OF_MEMORY = 11
} kiln_status;

/* Scalar types: the values of KilnScalarKind (kiln/host_abi.h). */
enum {
  KILN_TYPE_BOOL = 0, KILN_TYPE_I8, KILN_TYPE_I16, KILN_TYPE_I32,
  KILN_TYPE_I64, KILN_TYPE_U8, KILN_TYPE_U16, KILN_TYPE_U32, KILN_TYPE_U64,
  KILN_TYPE_F16, KILN_TYPE_BF16, KILN_TYPE_F32, KILN_TYPE_F64,
  KILN_TYPE_F8E4M3, KILN_TYPE_F8E5M2,
  /* A pointer argument whose element type is not checked. */
  KILN_TYPE_ANY = -1
};

typedef struct kiln_device kiln_device;
typedef struct kiln_buffer kiln_buffer;
typedef struct kiln_stream kiln_stream;
typedef struct kiln_event kiln_event;
typedef struct kiln_module kiln_module;
typedef struct kiln_kernel kiln_kernel;

/* The message of the last failing call on this thread ("" if none). */
const char *kiln_last_error(void);
/* "KILN_ERROR_NOT_FOUND", ... */
const char *kiln_status_name(kiln_status status);

/*--- Devices ---------------------------------------------------------------*/

/* spec: "auto" (CUDA device 0 if there is one, else the host), "host",
 * "cuda[:N]", "hip[:N]" (NULL means "auto"). */
kiln_status kiln_device_open(const char *spec, kiln_device **out);
void kiln_device_close(kiln_device *device);
/* "host", "cuda:0". */
const char *kiln_device_name(const kiln_device *device);
/* "host (16 threads)". */
const char *kiln_device_description(const kiln_device *device);
/* Kernel print() lines go to callback(user, line) instead of stdout;
 * callback NULL restores stdout. Called concurrently-safe (serialized). */
kiln_status kiln_device_set_print_callback(
    kiln_device *device, void (*callback)(void *user, const char *line),
    void *user);

/*--- Memory ----------------------------------------------------------------*/

kiln_status kiln_buffer_alloc(kiln_device *device, size_t bytes,
                              kiln_buffer **out);
void kiln_buffer_free(kiln_buffer *buffer);
/* The device address (for the host device, a host address). A GPU address
 * must not be dereferenced on the host: use kiln_copy_to_host. */
void *kiln_buffer_pointer(const kiln_buffer *buffer);
size_t kiln_buffer_size(const kiln_buffer *buffer);

/*--- Streams and events ----------------------------------------------------*/

kiln_status kiln_stream_create(kiln_device *device, kiln_stream **out);
void kiln_stream_destroy(kiln_stream *stream);
kiln_status kiln_stream_synchronize(kiln_stream *stream);
kiln_status kiln_copy_to_device(kiln_stream *stream, kiln_buffer *dst,
                                size_t dst_offset, const void *src,
                                size_t bytes);
kiln_status kiln_copy_to_host(kiln_stream *stream, void *dst,
                              const kiln_buffer *src, size_t src_offset,
                              size_t bytes);
kiln_status kiln_fill(kiln_stream *stream, kiln_buffer *dst, size_t offset,
                      uint8_t value, size_t bytes);

kiln_status kiln_event_create(kiln_device *device, kiln_event **out);
void kiln_event_destroy(kiln_event *event);
kiln_status kiln_event_record(kiln_event *event, kiln_stream *stream);
kiln_status kiln_event_synchronize(kiln_event *event);
kiln_status kiln_event_elapsed_ms(const kiln_event *start,
                                  const kiln_event *end, double *ms);

/*--- Modules and kernels ---------------------------------------------------*/

kiln_status kiln_module_load_file(kiln_device *device, const char *path,
                                  kiln_module **out);
/* The bytes are copied; `data` may be freed after the call. */
kiln_status kiln_module_load_memory(kiln_device *device, const void *data,
                                    size_t size, kiln_module **out);
void kiln_module_unload(kiln_module *module);
size_t kiln_module_kernel_count(const kiln_module *module);
/* NULL if index is out of range. */
const char *kiln_module_kernel_name(const kiln_module *module, size_t index);
kiln_status kiln_module_get_kernel(kiln_module *module, const char *name,
                                   kiln_kernel **out);

typedef struct kiln_param_info {
  const char *name;
  int32_t is_pointer;
  int32_t type; /* the scalar type, or the pointee type of a pointer */
  int64_t div;  /* @div(N); 0 if none */
  int64_t align;/* @align(N); 0 if none */
} kiln_param_info;

size_t kiln_kernel_param_count(const kiln_kernel *kernel);
kiln_status kiln_kernel_param(const kiln_kernel *kernel, size_t index,
                              kiln_param_info *out);
size_t kiln_kernel_variant_count(const kiln_kernel *kernel);
/* "softmax_v3" and "BLOCK=1024, warps=4, stages=2"; NULL if out of range. */
const char *kiln_kernel_variant_name(const kiln_kernel *kernel, size_t index);
const char *kiln_kernel_variant_config(const kiln_kernel *kernel,
                                       size_t index);

/*--- Launch ----------------------------------------------------------------*/

typedef struct kiln_arg {
  int32_t is_pointer;
  int32_t type; /* a KILN_TYPE_*; for a pointer, the pointee or ANY */
  union {
    const void *pointer;
    uint64_t bits; /* a scalar's natural representation, zero-extended */
  } value;
} kiln_arg;

typedef struct kiln_launch_options {
  const char *config; /* "BLOCK=1024,warps=4" or NULL */
  int64_t variant;    /* a variant index, or -1 */
} kiln_launch_options;

typedef struct kiln_launch_info {
  uint32_t variant;
  int64_t grid[3];
} kiln_launch_info;

/* Checks the arguments and picks the variant without launching.
 * options and info may be NULL. */
kiln_status kiln_kernel_plan(const kiln_kernel *kernel, const kiln_arg *args,
                             size_t num_args,
                             const kiln_launch_options *options,
                             kiln_launch_info *info);
kiln_status kiln_launch(const kiln_kernel *kernel, kiln_stream *stream,
                        const kiln_arg *args, size_t num_args,
                        const kiln_launch_options *options,
                        kiln_launch_info *info);

/* Tuning (docs/tuning.md): the values of kiln::rt::TuningMode. */
enum { KILN_TUNING_OFF = 0, KILN_TUNING_CACHED = 1, KILN_TUNING_FULL = 2 };
/* Sets the process-wide tuning mode (what KILN_TUNING sets otherwise). */
kiln_status kiln_set_tuning_mode(int mode);
/* The process-wide tuning mode, a KILN_TUNING_* value. */
int kiln_get_tuning_mode(void);
/* The tuning database file; NULL or "" goes back to the default location
 * ($KILN_CACHE_DIR/tuning.db, ...); ":memory:" keeps it in the process. */
kiln_status kiln_set_tuning_database(const char *path);

/* Argument constructors. */
static inline kiln_arg kiln_arg_pointer(const void *p, int32_t element) {
  kiln_arg a;
  a.is_pointer = 1;
  a.type = element;
  a.value.pointer = p;
  return a;
}
static inline kiln_arg kiln_arg_scalar(int32_t type, uint64_t bits) {
  kiln_arg a;
  a.is_pointer = 0;
  a.type = type;
  a.value.bits = bits;
  return a;
}
static inline kiln_arg kiln_arg_bool(int v) {
  return kiln_arg_scalar(KILN_TYPE_BOOL, v ? 1u : 0u);
}
static inline kiln_arg kiln_arg_i32(int32_t v) {
  return kiln_arg_scalar(KILN_TYPE_I32, (uint32_t)v);
}
static inline kiln_arg kiln_arg_i64(int64_t v) {
  return kiln_arg_scalar(KILN_TYPE_I64, (uint64_t)v);
}
static inline kiln_arg kiln_arg_u32(uint32_t v) {
  return kiln_arg_scalar(KILN_TYPE_U32, v);
}
static inline kiln_arg kiln_arg_u64(uint64_t v) {
  return kiln_arg_scalar(KILN_TYPE_U64, v);
}
static inline kiln_arg kiln_arg_f32(float v) {
  union { float f; uint32_t u; } pun;
  pun.f = v;
  return kiln_arg_scalar(KILN_TYPE_F32, pun.u);
}
static inline kiln_arg kiln_arg_f64(double v) {
  union { double f; uint64_t u; } pun;
  pun.f = v;
  return kiln_arg_scalar(KILN_TYPE_F64, pun.u);
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_RUNTIME_C_H */
