//===- CApi.cpp - The C API over the C++ runtime --------------------------===//
//
// Each handle wraps the C++ object; each entry point checks its pointers,
// catches anything C++ could throw (allocation failures), stores the
// message of a failure in a thread-local string and returns its code.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.h"
#include "kiln/runtime_c.h"

#include <memory>
#include <new>
#include <string>
#include <vector>

using namespace kiln::rt;

struct kiln_device {
  Device Dev;
  std::string Name, Description;
};
struct kiln_buffer {
  Buffer Buf;
};
struct kiln_stream {
  Stream S;
};
struct kiln_event {
  Event E;
};
struct kiln_kernel {
  Kernel K;
  std::vector<std::string> VariantNames, VariantConfigs;
};
struct kiln_module {
  Module M;
  std::vector<std::string> Names;
  std::vector<std::unique_ptr<kiln_kernel>> Kernels; ///< by index, lazily
};

namespace {

thread_local std::string LastError;

kiln_status fail(const Error &E) {
  LastError = E.message();
  return kiln_status(E.code());
}

kiln_status invalid(const char *Function, const char *What) {
  LastError = std::string(Function) + ": " + What;
  return KILN_ERROR_INVALID_ARGUMENT;
}

template <typename Fn> kiln_status guarded(const char *Function, Fn &&Body) {
  try {
    return Body();
  } catch (const std::bad_alloc &) {
    LastError = std::string(Function) + ": out of memory";
    return KILN_ERROR_OUT_OF_MEMORY;
  } catch (...) {
    LastError = std::string(Function) + ": internal error";
    return KILN_ERROR_DRIVER;
  }
}

bool validType(int32_t T) { return T >= 0 && T <= int32_t(ScalarType::F8E5M2); }

kiln_status convertArgs(const char *Function, const kiln_arg *Args,
                        size_t NumArgs, std::vector<Arg> &Out) {
  if (NumArgs && !Args)
    return invalid(Function, "args is NULL");
  for (size_t I = 0; I < NumArgs; ++I) {
    const kiln_arg &A = Args[I];
    if (A.is_pointer) {
      if (A.type != KILN_TYPE_ANY && !validType(A.type))
        return invalid(Function, ("argument " + std::to_string(I) +
                                  " has an invalid type code")
                                     .c_str());
      Out.push_back(Arg::pointer(A.value.pointer,
                                 A.type == KILN_TYPE_ANY
                                     ? std::nullopt
                                     : std::optional<ScalarType>(
                                           ScalarType(A.type))));
      continue;
    }
    if (!validType(A.type))
      return invalid(Function, ("argument " + std::to_string(I) +
                                " has an invalid type code")
                                   .c_str());
    Out.push_back(Arg::scalarBits(ScalarType(A.type), A.value.bits));
  }
  return KILN_SUCCESS;
}

kiln_status convertOptions(const kiln_launch_options *Options,
                           LaunchOptions &Out) {
  if (!Options)
    return KILN_SUCCESS;
  if (Options->config) {
    auto Config = parseConfig(Options->config);
    if (!Config)
      return fail(Config.error());
    Out.Config = std::move(*Config);
  }
  if (Options->variant >= 0) {
    if (Options->variant > int64_t(UINT32_MAX))
      return invalid("kiln_launch", "variant index out of range");
    Out.Variant = unsigned(Options->variant);
  }
  return KILN_SUCCESS;
}

void fillInfo(const LaunchPlan &Plan, kiln_launch_info *Info) {
  if (!Info)
    return;
  Info->variant = Plan.Variant;
  for (int I = 0; I < 3; ++I)
    Info->grid[I] = Plan.Grid[I];
}

kiln_status wrapModule(Expected<Module> M, kiln_module **Out) {
  if (!M)
    return fail(M.error());
  auto *W = new kiln_module{std::move(*M), {}, {}};
  W->Names = W->M.kernelNames();
  W->Kernels.resize(W->Names.size());
  *Out = W;
  return KILN_SUCCESS;
}

} // namespace

extern "C" {

const char *kiln_last_error(void) { return LastError.c_str(); }

const char *kiln_status_name(kiln_status Status) {
  static const char *const Names[] = {
      "KILN_SUCCESS",
      "KILN_ERROR_INVALID_ARGUMENT",
      "KILN_ERROR_NOT_FOUND",
      "KILN_ERROR_INVALID_BUNDLE",
      "KILN_ERROR_UNSUPPORTED_VERSION",
      "KILN_ERROR_NO_IMAGE",
      "KILN_ERROR_LAUNCH_REFUSED",
      "KILN_ERROR_KERNEL_TRAPPED",
      "KILN_ERROR_UNSUPPORTED_DEVICE",
      "KILN_ERROR_IO",
      "KILN_ERROR_DRIVER",
      "KILN_ERROR_OUT_OF_MEMORY",
  };
  unsigned I = unsigned(Status);
  return I < sizeof(Names) / sizeof(Names[0]) ? Names[I] : "KILN_UNKNOWN";
}

kiln_status kiln_device_open(const char *Spec, kiln_device **Out) {
  return guarded("kiln_device_open", [&] {
    if (!Out)
      return invalid("kiln_device_open", "out is NULL");
    Expected<Device> D = Device::open(Spec ? Spec : "auto");
    if (!D)
      return fail(D.error());
    auto *W = new kiln_device{std::move(*D), {}, {}};
    W->Name = W->Dev.name();
    W->Description = W->Dev.description();
    *Out = W;
    return KILN_SUCCESS;
  });
}

void kiln_device_close(kiln_device *D) { delete D; }
const char *kiln_device_name(const kiln_device *D) {
  return D ? D->Name.c_str() : "";
}
const char *kiln_device_description(const kiln_device *D) {
  return D ? D->Description.c_str() : "";
}

kiln_status kiln_device_set_print_callback(kiln_device *D,
                                           void (*Callback)(void *,
                                                            const char *),
                                           void *User) {
  return guarded("kiln_device_set_print_callback", [&] {
    if (!D)
      return invalid("kiln_device_set_print_callback", "device is NULL");
    if (!Callback)
      D->Dev.setPrintHandler(nullptr);
    else
      D->Dev.setPrintHandler(
          [Callback, User](const std::string &Line) {
            Callback(User, Line.c_str());
          });
    return KILN_SUCCESS;
  });
}

kiln_status kiln_buffer_alloc(kiln_device *D, size_t Bytes,
                              kiln_buffer **Out) {
  return guarded("kiln_buffer_alloc", [&] {
    if (!D || !Out)
      return invalid("kiln_buffer_alloc", "device or out is NULL");
    Expected<Buffer> B = D->Dev.allocate(Bytes);
    if (!B)
      return fail(B.error());
    *Out = new kiln_buffer{std::move(*B)};
    return KILN_SUCCESS;
  });
}

void kiln_buffer_free(kiln_buffer *B) { delete B; }
void *kiln_buffer_pointer(const kiln_buffer *B) {
  return B ? B->Buf.data() : nullptr;
}
size_t kiln_buffer_size(const kiln_buffer *B) { return B ? B->Buf.size() : 0; }

kiln_status kiln_stream_create(kiln_device *D, kiln_stream **Out) {
  return guarded("kiln_stream_create", [&] {
    if (!D || !Out)
      return invalid("kiln_stream_create", "device or out is NULL");
    Expected<Stream> S = D->Dev.createStream();
    if (!S)
      return fail(S.error());
    *Out = new kiln_stream{std::move(*S)};
    return KILN_SUCCESS;
  });
}

void kiln_stream_destroy(kiln_stream *S) { delete S; }

kiln_status kiln_stream_synchronize(kiln_stream *S) {
  return guarded("kiln_stream_synchronize", [&] {
    if (!S)
      return invalid("kiln_stream_synchronize", "stream is NULL");
    if (Error E = S->S.synchronize())
      return fail(E);
    return KILN_SUCCESS;
  });
}

kiln_status kiln_copy_to_device(kiln_stream *S, kiln_buffer *Dst,
                                size_t DstOffset, const void *Src,
                                size_t Bytes) {
  return guarded("kiln_copy_to_device", [&] {
    if (!S || !Dst)
      return invalid("kiln_copy_to_device", "stream or buffer is NULL");
    if (Error E = S->S.copyToDevice(Dst->Buf, DstOffset, Src, Bytes))
      return fail(E);
    return KILN_SUCCESS;
  });
}

kiln_status kiln_copy_to_host(kiln_stream *S, void *Dst,
                              const kiln_buffer *Src, size_t SrcOffset,
                              size_t Bytes) {
  return guarded("kiln_copy_to_host", [&] {
    if (!S || !Src)
      return invalid("kiln_copy_to_host", "stream or buffer is NULL");
    if (Error E = S->S.copyToHost(Dst, Src->Buf, SrcOffset, Bytes))
      return fail(E);
    return KILN_SUCCESS;
  });
}

kiln_status kiln_fill(kiln_stream *S, kiln_buffer *Dst, size_t Offset,
                      uint8_t Value, size_t Bytes) {
  return guarded("kiln_fill", [&] {
    if (!S || !Dst)
      return invalid("kiln_fill", "stream or buffer is NULL");
    if (Error E = S->S.fill(Dst->Buf, Offset, Value, Bytes))
      return fail(E);
    return KILN_SUCCESS;
  });
}

kiln_status kiln_event_create(kiln_device *D, kiln_event **Out) {
  return guarded("kiln_event_create", [&] {
    if (!D || !Out)
      return invalid("kiln_event_create", "device or out is NULL");
    Expected<Event> E = D->Dev.createEvent();
    if (!E)
      return fail(E.error());
    *Out = new kiln_event{std::move(*E)};
    return KILN_SUCCESS;
  });
}

void kiln_event_destroy(kiln_event *E) { delete E; }

kiln_status kiln_event_record(kiln_event *E, kiln_stream *S) {
  return guarded("kiln_event_record", [&] {
    if (!E || !S)
      return invalid("kiln_event_record", "event or stream is NULL");
    if (Error Err = S->S.record(E->E))
      return fail(Err);
    return KILN_SUCCESS;
  });
}

kiln_status kiln_event_synchronize(kiln_event *E) {
  return guarded("kiln_event_synchronize", [&] {
    if (!E)
      return invalid("kiln_event_synchronize", "event is NULL");
    if (Error Err = E->E.synchronize())
      return fail(Err);
    return KILN_SUCCESS;
  });
}

kiln_status kiln_event_elapsed_ms(const kiln_event *Start,
                                  const kiln_event *End, double *Ms) {
  return guarded("kiln_event_elapsed_ms", [&] {
    if (!Start || !End || !Ms)
      return invalid("kiln_event_elapsed_ms", "an argument is NULL");
    Expected<double> T = Event::elapsedMilliseconds(Start->E, End->E);
    if (!T)
      return fail(T.error());
    *Ms = *T;
    return KILN_SUCCESS;
  });
}

kiln_status kiln_module_load_file(kiln_device *D, const char *Path,
                                  kiln_module **Out) {
  return guarded("kiln_module_load_file", [&] {
    if (!D || !Path || !Out)
      return invalid("kiln_module_load_file", "an argument is NULL");
    return wrapModule(D->Dev.loadModuleFile(Path), Out);
  });
}

kiln_status kiln_module_load_memory(kiln_device *D, const void *Data,
                                    size_t Size, kiln_module **Out) {
  return guarded("kiln_module_load_memory", [&] {
    if (!D || (!Data && Size) || !Out)
      return invalid("kiln_module_load_memory", "an argument is NULL");
    return wrapModule(D->Dev.loadModuleMemory(Data, Size), Out);
  });
}

void kiln_module_unload(kiln_module *M) { delete M; }

size_t kiln_module_kernel_count(const kiln_module *M) {
  return M ? M->Names.size() : 0;
}

const char *kiln_module_kernel_name(const kiln_module *M, size_t Index) {
  if (!M || Index >= M->Names.size())
    return nullptr;
  return M->Names[Index].c_str();
}

kiln_status kiln_module_get_kernel(kiln_module *M, const char *Name,
                                   kiln_kernel **Out) {
  return guarded("kiln_module_get_kernel", [&] {
    if (!M || !Name || !Out)
      return invalid("kiln_module_get_kernel", "an argument is NULL");
    Expected<Kernel> K = M->M.kernel(Name);
    if (!K)
      return fail(K.error());
    size_t Index = 0;
    while (M->Names[Index] != Name)
      ++Index;
    if (!M->Kernels[Index]) {
      auto W = std::make_unique<kiln_kernel>(kiln_kernel{*K, {}, {}});
      for (const VariantInfo &V : K->info().Variants) {
        W->VariantNames.push_back(K->info().variantName(V));
        W->VariantConfigs.push_back(K->info().variantConfig(V));
      }
      M->Kernels[Index] = std::move(W);
    }
    *Out = M->Kernels[Index].get();
    return KILN_SUCCESS;
  });
}

size_t kiln_kernel_param_count(const kiln_kernel *K) {
  return K ? K->K.info().Params.size() : 0;
}

kiln_status kiln_kernel_param(const kiln_kernel *K, size_t Index,
                              kiln_param_info *Out) {
  if (!K || !Out)
    return invalid("kiln_kernel_param", "kernel or out is NULL");
  const std::vector<ParamInfo> &Params = K->K.info().Params;
  if (Index >= Params.size())
    return invalid("kiln_kernel_param", "index out of range");
  const ParamInfo &P = Params[Index];
  Out->name = P.Name.c_str();
  Out->is_pointer = P.Type.IsPointer;
  Out->type = int32_t(P.Type.Element);
  Out->div = P.Div;
  Out->align = P.Align;
  return KILN_SUCCESS;
}

size_t kiln_kernel_variant_count(const kiln_kernel *K) {
  return K ? K->VariantNames.size() : 0;
}

const char *kiln_kernel_variant_name(const kiln_kernel *K, size_t Index) {
  if (!K || Index >= K->VariantNames.size())
    return nullptr;
  return K->VariantNames[Index].c_str();
}

const char *kiln_kernel_variant_config(const kiln_kernel *K, size_t Index) {
  if (!K || Index >= K->VariantConfigs.size())
    return nullptr;
  return K->VariantConfigs[Index].c_str();
}

kiln_status kiln_kernel_plan(const kiln_kernel *K, const kiln_arg *Args,
                             size_t NumArgs, const kiln_launch_options *Options,
                             kiln_launch_info *Info) {
  return guarded("kiln_kernel_plan", [&] {
    if (!K)
      return invalid("kiln_kernel_plan", "kernel is NULL");
    std::vector<Arg> Converted;
    LaunchOptions Opts;
    if (kiln_status S = convertArgs("kiln_kernel_plan", Args, NumArgs,
                                    Converted))
      return S;
    if (kiln_status S = convertOptions(Options, Opts))
      return S;
    Expected<LaunchPlan> Plan = K->K.plan(Converted, Opts);
    if (!Plan)
      return fail(Plan.error());
    fillInfo(*Plan, Info);
    return KILN_SUCCESS;
  });
}

kiln_status kiln_launch(const kiln_kernel *K, kiln_stream *S,
                        const kiln_arg *Args, size_t NumArgs,
                        const kiln_launch_options *Options,
                        kiln_launch_info *Info) {
  return guarded("kiln_launch", [&] {
    if (!K || !S)
      return invalid("kiln_launch", "kernel or stream is NULL");
    std::vector<Arg> Converted;
    LaunchOptions Opts;
    if (kiln_status St = convertArgs("kiln_launch", Args, NumArgs, Converted))
      return St;
    if (kiln_status St = convertOptions(Options, Opts))
      return St;
    Expected<LaunchPlan> Plan = K->K.launch(S->S, Converted, Opts);
    if (!Plan)
      return fail(Plan.error());
    fillInfo(*Plan, Info);
    return KILN_SUCCESS;
  });
}

} // extern "C"

kiln_status kiln_set_tuning_mode(int Mode) {
  return guarded("kiln_set_tuning_mode", [&] {
    if (Mode < KILN_TUNING_OFF || Mode > KILN_TUNING_FULL)
      return invalid("kiln_set_tuning_mode",
                     ("mode " + std::to_string(Mode) +
                      " is not KILN_TUNING_OFF, _CACHED or _FULL")
                         .c_str());
    setTuningMode(TuningMode(Mode));
    return KILN_SUCCESS;
  });
}

int kiln_get_tuning_mode(void) { return int(tuningMode()); }

kiln_status kiln_set_tuning_database(const char *Path) {
  return guarded("kiln_set_tuning_database", [&] {
    setTuningDatabase(Path ? Path : "");
    return KILN_SUCCESS;
  });
}
