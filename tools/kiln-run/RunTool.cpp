//===- RunTool.cpp - Run a kernel of a bundle on .npy inputs --------------===//
//
//   kiln-run BUNDLE --kernel NAME [--device auto|host|cuda[:N]|hip[:N]]
//            [--config P=V,...] [--out-dir DIR] ARG=VALUE...
//
// A pointer argument takes a .npy file, a scalar a literal. After the run
// every pointer argument's buffer is written to DIR/ARG.npy (bf16 as
// float32); input files are never modified. Links only libkiln_runtime, so
// that bundles run on machines without the compiler. `kiln run` (the
// compiler driver) reuses this code on a bundle it compiled in memory.
//
// Exit codes: 0 success, 1 user error (command line, arguments, .npy files,
// bundle, launch refused, kernel trap), 2 environment error (a file cannot
// be read or written, the device or its driver is unavailable).
//
//===----------------------------------------------------------------------===//

#include "RunTool.h"

#include "kiln/npy.h"
#include "kiln/runtime.h"

#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

using namespace kiln::rt;

#ifndef KILN_VERSION
#define KILN_VERSION "0.0.0"
#endif

namespace {

constexpr int kExitUser = 1;
constexpr int kExitEnv = 2;

const char *const kUsage = R"(OVERVIEW: kiln-run - run a kernel of a Kiln bundle on .npy inputs

USAGE:
  kiln-run BUNDLE --kernel NAME [options] ARG=VALUE...

  Every runtime parameter of the kernel is given as NAME=VALUE: a pointer
  parameter takes a .npy file (its dtype must match the parameter; a bf16
  parameter takes float32, rounded to nearest even, or uint16 raw bits), a
  scalar takes a literal (42, -1, 0x10, 1.5, true). After the run every
  pointer argument's buffer is written to DIR/NAME.npy (bf16 as float32).

OPTIONS:
  --kernel NAME         the kernel to run
  --device DEVICE       auto (default: CUDA device 0 if there is one and the
                        bundle has code for it, else the host), host,
                        cuda[:N] or hip[:N]
  --config P=V,...      run the variant with these const param values
  --out-dir DIR         where to write the outputs (default: .)
  --help, --version
)";

struct Options {
  std::string Bundle;
  /// When set (kiln run), the bundle's bytes; `Bundle` is then its label.
  const std::string *BundleBytes = nullptr;
  std::string Kernel;
  std::string Device = "auto";
  std::string Config;
  bool HaveConfig = false;
  std::string OutDir = ".";
  std::vector<std::pair<std::string, std::string>> Args;
};

std::string ToolName = "kiln-run";

int report(int Code, const std::string &Message) {
  std::fprintf(stderr, "%s: error: %s\n", ToolName.c_str(), Message.c_str());
  return Code;
}

int report(const Error &E) {
  switch (E.code()) {
  case ErrorCode::IO:
  case ErrorCode::UnsupportedDevice:
  case ErrorCode::Driver:
  case ErrorCode::OutOfMemory:
    return report(kExitEnv, E.message());
  default:
    return report(kExitUser, E.message());
  }
}

/// Parses the command line; returns -1 to go on, else an exit code.
int parseOptions(int Argc, char **Argv, Options &O) {
  for (int I = 1; I < Argc; ++I) {
    std::string A = Argv[I];
    auto Value = [&](const char *Flag, std::string &Out) -> bool {
      std::string Prefix = std::string(Flag) + "=";
      if (A.compare(0, Prefix.size(), Prefix) == 0) {
        Out = A.substr(Prefix.size());
        return true;
      }
      if (A != Flag)
        return false;
      if (I + 1 >= Argc) {
        Out = "\x01"; // marks a missing value
        return true;
      }
      Out = Argv[++I];
      return true;
    };
    std::string V;
    if (A == "--help" || A == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (A == "--version") {
      std::printf("kiln-run %s\n", KILN_VERSION);
      return 0;
    }
    const char *Flags[] = {"--kernel", "--device", "--config", "--out-dir"};
    std::string *Targets[] = {&O.Kernel, &O.Device, &O.Config, &O.OutDir};
    bool Matched = false;
    for (int F = 0; F < 4 && !Matched; ++F) {
      if (!Value(Flags[F], V))
        continue;
      if (V == "\x01")
        return report(kExitUser, std::string(Flags[F]) + " needs a value");
      *Targets[F] = V;
      O.HaveConfig |= F == 2;
      Matched = true;
    }
    if (Matched)
      continue;
    if (A.size() > 1 && A[0] == '-')
      return report(kExitUser, "unknown option '" + A + "'; see kiln-run --help");
    if (O.Bundle.empty() && !O.BundleBytes) {
      O.Bundle = A;
      continue;
    }
    size_t Eq = A.find('=');
    if (Eq == std::string::npos || Eq == 0)
      return report(kExitUser, "expected NAME=VALUE, found '" + A + "'");
    std::string Name = A.substr(0, Eq);
    for (const auto &Seen : O.Args)
      if (Seen.first == Name)
        return report(kExitUser, "argument '" + Name + "' is given twice");
    O.Args.emplace_back(Name, A.substr(Eq + 1));
  }
  if (O.Bundle.empty())
    return report(kExitUser, "no bundle given; usage: kiln-run BUNDLE "
                             "--kernel NAME ARG=VALUE... (see --help)");
  if (O.Kernel.empty())
    return report(kExitUser, "no kernel given: use --kernel NAME");
  if (O.OutDir.empty())
    return report(kExitUser, "--out-dir needs a directory");
  return -1;
}

/// Parses a scalar literal for parameter P.
Expected<Arg> parseScalar(const ParamInfo &P, const std::string &Text) {
  ScalarType T = P.Type.Element;
  std::string What = "argument '" + P.Name + "' (" + P.Type.str() + "): ";
  auto Bad = [&](const std::string &Why) {
    return Error(ErrorCode::InvalidArgument, What + Why);
  };
  if (T == ScalarType::Bool) {
    if (Text == "true" || Text == "1")
      return Arg::boolean(true);
    if (Text == "false" || Text == "0")
      return Arg::boolean(false);
    return Bad("'" + Text + "' is not a bool (true, false, 1 or 0)");
  }
  if (isIntegerType(T)) {
    bool Negative = !Text.empty() && Text[0] == '-';
    std::string Digits = Text.substr(Negative ? 1 : 0);
    int Base = 10;
    if (Digits.size() > 2 && Digits[0] == '0' &&
        (Digits[1] == 'x' || Digits[1] == 'X')) {
      Base = 16;
      Digits = Digits.substr(2);
    }
    if (Digits.empty() || Digits[0] == '-' || Digits[0] == '+' ||
        std::isspace((unsigned char)Digits[0]))
      return Bad("'" + Text + "' is not an integer");
    char *End = nullptr;
    errno = 0;
    unsigned long long Magnitude = std::strtoull(Digits.c_str(), &End, Base);
    if (*End)
      return Bad("'" + Text + "' is not an integer");
    unsigned Bits = unsigned(8 * typeSize(T));
    std::string Range = "'" + Text + "' does not fit in " +
                        std::string(typeName(T));
    if (errno == ERANGE)
      return Bad(Range);
    if (isSignedType(T)) {
      uint64_t Limit = uint64_t(1) << (Bits - 1); // |min|
      if (Negative ? Magnitude > Limit : Magnitude > Limit - 1)
        return Bad(Range);
      uint64_t V = Negative ? 0 - uint64_t(Magnitude) : uint64_t(Magnitude);
      return Arg::scalarBits(T, V);
    }
    if (Negative && Magnitude != 0)
      return Bad(Range);
    if (Bits < 64 && Magnitude >> Bits)
      return Bad(Range);
    return Arg::scalarBits(T, Magnitude);
  }
  char *End = nullptr;
  errno = 0;
  double D = std::strtod(Text.c_str(), &End);
  if (Text.empty() || *End || std::isspace((unsigned char)Text[0]))
    return Bad("'" + Text + "' is not a number");
  std::string Range = "'" + Text + "' is out of range for " +
                      std::string(typeName(T));
  if (errno == ERANGE && std::isinf(D))
    return Bad(Range);
  if (T == ScalarType::F64)
    return Arg::f64(D);
  float F = float(D);
  if (std::isfinite(D) && std::isinf(F))
    return Bad(Range);
  Arg A = T == ScalarType::F32   ? Arg::f32(F)
          : T == ScalarType::F16 ? Arg::f16(F)
                                 : Arg::bf16(F);
  bool Inf = T == ScalarType::F16 ? std::isinf(halfToFloat(uint16_t(A.bits())))
             : T == ScalarType::BF16
                 ? std::isinf(bf16ToFloat(uint16_t(A.bits())))
                 : false;
  if (std::isfinite(D) && Inf)
    return Bad(Range);
  return A;
}

/// A pointer argument: its buffer and where its data came from.
struct PointerArg {
  size_t Param;
  std::string Input;
  std::vector<int64_t> Shape;
  Buffer Buf;
};

bool sameFile(const std::string &A, const std::string &B) {
  struct stat SA, SB;
  return ::stat(A.c_str(), &SA) == 0 && ::stat(B.c_str(), &SB) == 0 &&
         SA.st_dev == SB.st_dev && SA.st_ino == SB.st_ino;
}

Expected<Module> loadBundle(Device &Dev, const Options &O) {
  return O.BundleBytes ? Dev.loadModuleMemory(O.BundleBytes->data(),
                                              O.BundleBytes->size(), O.Bundle)
                       : Dev.loadModuleFile(O.Bundle);
}

/// True if `--device auto` chose a GPU for which the bundle, or the kernel,
/// has no code object: the host may have one.
bool gpuHasNoImage(const Options &O, const Device &Dev,
                   const Expected<Module> &Mod) {
  if ((!O.Device.empty() && O.Device != "auto") ||
      Dev.kind() == DeviceKind::Host)
    return false;
  if (!Mod)
    return Mod.error().code() == ErrorCode::NoImage;
  Expected<Kernel> K = Mod->kernel(O.Kernel);
  return !K && K.error().code() == ErrorCode::NoImage;
}

int run(const Options &O) {
  Expected<Device> Dev = Device::open(O.Device);
  if (!Dev)
    return report(Dev.error());
  Expected<Module> Mod = loadBundle(*Dev, O);
  if (gpuHasNoImage(O, *Dev, Mod)) {
    Dev = Device::open("host");
    if (!Dev)
      return report(Dev.error());
    Mod = loadBundle(*Dev, O);
  }
  if (!Mod)
    return report(Mod.error());
  Expected<Kernel> K = Mod->kernel(O.Kernel);
  if (!K)
    return report(K.error());
  const KernelInfo &Info = K->info();

  LaunchOptions Launch;
  if (O.HaveConfig) {
    auto Config = parseConfig(O.Config);
    if (!Config)
      return report(kExitUser, "--config: " + Config.error().message());
    Launch.Config = std::move(*Config);
  }

  // Every argument must name a parameter, and every parameter be given.
  std::vector<std::string> ParamNames;
  for (const ParamInfo &P : Info.Params)
    ParamNames.push_back(P.Name);
  for (const auto &[Name, Value] : O.Args) {
    bool Known = false;
    for (const std::string &P : ParamNames)
      Known |= P == Name;
    if (!Known) {
      std::string Near = nearestName(Name, ParamNames);
      return report(kExitUser,
                    "kernel '" + Info.Name + "' has no parameter '" + Name +
                        "'" +
                        (Near.empty() ? "" : "; did you mean '" + Near + "'?"));
    }
  }

  Expected<Stream> S = Dev->createStream();
  if (!S)
    return report(S.error());
  std::vector<Arg> Args;
  std::vector<PointerArg> Pointers;
  // The arguments given are checked first, then that none is missing.
  std::vector<std::string> Missing;
  for (size_t I = 0; I < Info.Params.size(); ++I) {
    const ParamInfo &P = Info.Params[I];
    const std::string *Value = nullptr;
    for (const auto &A : O.Args)
      if (A.first == P.Name)
        Value = &A.second;
    if (!Value) {
      Missing.push_back("'" + P.Name + "'");
      continue;
    }
    if (!P.Type.IsPointer) {
      if (Value->size() > 4 && Value->substr(Value->size() - 4) == ".npy")
        return report(kExitUser, "argument '" + P.Name + "' is a scalar (" +
                                     P.Type.str() + "): give a literal, not '" +
                                     *Value + "'");
      Expected<Arg> A = parseScalar(P, *Value);
      if (!A)
        return report(A.error());
      Args.push_back(*A);
      continue;
    }
    Expected<NpyArray> Array = readNpyFile(*Value);
    if (!Array)
      return report(Array.error());
    Expected<std::vector<uint8_t>> Bytes = convertForParam(
        *Array, P.Type.Element,
        "argument '" + P.Name + "' ('" + *Value + "')");
    if (!Bytes)
      return report(Bytes.error());
    Expected<Buffer> Buf = Dev->allocate(Bytes->size());
    if (!Buf)
      return report(Buf.error());
    if (Error E = S->copyToDevice(*Buf, 0, Bytes->data(), Bytes->size()))
      return report(E);
    Args.push_back(Arg::pointer(*Buf, P.Type.Element));
    Pointers.push_back({I, *Value, Array->Shape, std::move(*Buf)});
  }

  if (!Missing.empty()) {
    std::string Sig, List;
    for (const ParamInfo &Q : Info.Params)
      Sig += (Sig.empty() ? "" : ", ") + Q.Name + ": " + Q.Type.str();
    for (const std::string &M : Missing)
      List += (List.empty() ? "" : ", ") + M;
    return report(kExitUser, std::string("missing argument") +
                                 (Missing.size() > 1 ? "s " : " ") + List +
                                 " (kernel " + Info.Name + "(" + Sig + "))");
  }

  // Refuse up front to overwrite an input with an output.
  if (::mkdir(O.OutDir.c_str(), 0777) != 0 && errno != EEXIST)
    return report(kExitEnv, "cannot create output directory '" + O.OutDir +
                                "': " + std::strerror(errno));
  struct stat DirStat;
  if (::stat(O.OutDir.c_str(), &DirStat) != 0 || !S_ISDIR(DirStat.st_mode))
    return report(kExitEnv, "output directory '" + O.OutDir +
                                "' is not a directory");
  for (const PointerArg &Out : Pointers) {
    std::string Path = O.OutDir + "/" + Info.Params[Out.Param].Name + ".npy";
    for (const PointerArg &In : Pointers)
      if (sameFile(Path, In.Input))
        return report(kExitUser, "the output '" + Path +
                                     "' would overwrite the input of "
                                     "argument '" +
                                     Info.Params[In.Param].Name +
                                     "'; choose another --out-dir");
  }

  std::printf("device: %s\n", Dev->description().c_str());
  std::fflush(stdout);
  Expected<Event> Start = Dev->createEvent();
  Expected<Event> End = Dev->createEvent();
  if (!Start)
    return report(Start.error());
  if (!End)
    return report(End.error());
  // Plan first (all the argument checks), and load the chosen variant's
  // code object outside the timed region.
  Expected<LaunchPlan> Planned = K->plan(Args, Launch);
  if (!Planned)
    return report(Planned.error());
  if (Planned->programs() != 0)
    if (Error E = K->load(*Planned))
      return report(E);
  if (Error E = S->record(*Start))
    return report(E);
  Expected<LaunchPlan> Plan = K->launch(*S, Args, Launch);
  if (!Plan)
    return report(Plan.error());
  if (Error E = S->record(*End))
    return report(E);
  if (Error E = S->synchronize())
    return report(E);
  Expected<double> Ms = Event::elapsedMilliseconds(*Start, *End);
  if (!Ms)
    return report(Ms.error());
  if (Plan->Config.empty())
    std::printf("variant: %s\n", Plan->VariantName.c_str());
  else
    std::printf("variant: %s (%s)\n", Plan->VariantName.c_str(),
                Plan->Config.c_str());
  std::printf("time: %.3f ms\n", *Ms);
  std::fflush(stdout);

  for (PointerArg &Out : Pointers) {
    const ParamInfo &P = Info.Params[Out.Param];
    std::vector<uint8_t> Bytes(Out.Buf.size());
    if (Error E = S->copyToHost(Bytes.data(), Out.Buf, 0, Bytes.size()))
      return report(E);
    if (Error E = S->synchronize())
      return report(E);
    NpyArray Array = convertForOutput(Bytes.data(), P.Type.Element, Out.Shape);
    if (Error E = writeNpyFile(O.OutDir + "/" + P.Name + ".npy", Array))
      return report(E);
  }
  return 0;
}

} // namespace

int kiln::runtool::runBundleTool(int Argc, char **Argv) {
  Options O;
  int Code = parseOptions(Argc, Argv, O);
  if (Code >= 0)
    return Code;
  return run(O);
}

int kiln::runtool::runInMemoryBundle(const std::string &Tool,
                                     const std::string &Bundle,
                                     const std::string &Label, int Argc,
                                     char **Argv) {
  ToolName = Tool;
  Options O;
  O.BundleBytes = &Bundle;
  O.Bundle = Label;
  int Code = parseOptions(Argc, Argv, O);
  if (Code >= 0)
    return Code;
  return run(O);
}
