//===- RunTool.cpp - Run a kernel of a bundle on .npy inputs --------------===//
//
//   kiln-run BUNDLE --kernel NAME [--device auto|host|cuda[:N]|hip[:N]]
//            [--config P=V,...] [--out-dir DIR] [--check]
//            [--bench[=N] [--flops EXPR] [--peak-tflops X]] ARG=VALUE...
//   kiln-run --list-devices
//
// A pointer argument takes a .npy file, a scalar a literal. After the run
// every pointer argument's buffer is written to DIR/ARG.npy (bf16 and fp8
// as float32); input files are never modified. --check runs the kernel again
// on the host from fresh copies of the inputs and compares every pointer
// argument; --bench times N more launches with device events (docs/cli.md).
// Links only libkiln_runtime, so that bundles run on machines without the
// compiler. `kiln run` (the compiler driver) reuses this code on a bundle
// it compiled in memory.
//
// Exit codes: 0 success, 1 user error (command line, arguments, .npy files,
// bundle, launch refused, kernel trap), 2 environment error (a file cannot
// be read or written, the device or its driver is unavailable).
//
//===----------------------------------------------------------------------===//

#include "RunTool.h"
#include "RunReport.h"
#include "TuneTool.h"

#include "kiln/npy.h"
#include "kiln/runtime.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace kiln::rt;
using namespace kiln::runtool;

#ifndef KILN_VERSION
#define KILN_VERSION "0.0.0"
#endif

namespace {

constexpr int kExitUser = 1;
constexpr int kExitEnv = 2;

const char *const kUsage = R"(OVERVIEW: kiln-run - run a kernel of a Kiln bundle on .npy inputs

USAGE:
  kiln-run BUNDLE --kernel NAME [options] ARG=VALUE...
  kiln-run tune BUNDLE --kernel NAME --shapes ... (kiln-run tune --help)
  kiln-run --list-devices

  Every runtime parameter of the kernel is given as NAME=VALUE: a pointer
  parameter takes a .npy file (its dtype must match the parameter; a bf16
  parameter takes float32, rounded to nearest even, or uint16 raw bits; an
  f8e4m3/f8e5m2 one float32, rounded and saturated, or uint8 raw bits), a
  scalar takes a literal (42, -1, 0x10, 1.5, true). After the run every
  pointer argument's buffer is written to DIR/NAME.npy (bf16 and fp8 as
  float32).

OPTIONS:
  --kernel NAME         the kernel to run
  --device DEVICE       auto (default: CUDA device 0 if there is one, else
                        HIP device 0 if there is one, and the bundle has
                        code for it; else the host), host,
                        cuda[:N], hip[:N], or emu:<arch> (the CPU emulator
                        of a GPU: images compiled with --targets=emu:<arch>)
  --config P=V,...      run the variant with these const param values
  --out-dir DIR         where to write the outputs (default: .; they are
                        those of the first launch)
  --check               run the kernel on the host too, from fresh copies of
                        the inputs (same arguments, same variant), and
                        compare every pointer argument with it: a table of
                        the largest absolute and relative differences; exit
                        code 1 when an element a differs from the host's b
                        by more than atol + rtol*|b|: f32 rtol 1e-5, atol
                        1e-6; f16/bf16 1e-2, 1e-3; f64 1e-12, 1e-13;
                        f8e4m3 0.125, 1e-2; f8e5m2 0.25, 1e-2;
                        integers and bool exactly; NaN equals NaN only. On
                        the host device both runs are on the host (a
                        determinism check). Needs host images in the bundle
                        (kiln compile --targets=...,host)
  --bench[=N]           then warm up (3 launches and 50 ms at least) and
                        time N launches (default 100) with device events;
                        print the median, min and max ms per launch, GB/s
                        (counting each pointer argument's buffer once: a
                        lower bound of the traffic) and its share of the
                        device's peak, and TFLOP/s with --flops
  --flops EXPR          FLOPs per launch for --bench: + - * / ( ), numbers
                        and scalar argument names, e.g. '2*M*N*K'
  --peak-tflops X       the device's peak TFLOP/s, for --bench's share of it
  --list-devices        list the devices this machine has, one per line
                        (host, then cuda:0, cuda:1, ..., then hip:0, ...),
                        and exit; why there is no CUDA or HIP device goes
                        to standard error
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
  /// --check: compare with a run on the host.
  bool Check = false;
  /// --bench[=N]: timed launches; 0 without --bench.
  unsigned BenchRuns = 0;
  std::string FlopsText;
  bool HaveFlops = false;
  std::optional<FlopsExpr> Flops;
  std::string PeakText;
  bool HavePeak = false;
  double PeakTflops = 0;
};

constexpr unsigned kDefaultBenchRuns = 100;
constexpr unsigned kMaxBenchRuns = 100000;

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
    if (A == "--check") {
      O.Check = true;
      continue;
    }
    if (A == "--bench" || A.compare(0, 8, "--bench=") == 0) {
      O.BenchRuns = kDefaultBenchRuns;
      if (A == "--bench")
        continue;
      std::string N = A.substr(8);
      char *End = nullptr;
      errno = 0;
      unsigned long long Runs = N.empty() || !std::isdigit((unsigned char)N[0])
                                    ? 0
                                    : std::strtoull(N.c_str(), &End, 10);
      if (Runs == 0 || *End || errno == ERANGE || Runs > kMaxBenchRuns)
        return report(kExitUser,
                      "--bench=N takes a number of timed launches from 1 to " +
                          std::to_string(kMaxBenchRuns) + ", found '" + N +
                          "'");
      O.BenchRuns = unsigned(Runs);
      continue;
    }
    const char *Flags[] = {"--kernel",  "--device", "--config",
                           "--out-dir", "--flops",  "--peak-tflops"};
    std::string *Targets[] = {&O.Kernel, &O.Device,    &O.Config,
                              &O.OutDir, &O.FlopsText, &O.PeakText};
    bool Matched = false;
    for (int F = 0; F < 6 && !Matched; ++F) {
      if (!Value(Flags[F], V))
        continue;
      if (V == "\x01")
        return report(kExitUser, std::string(Flags[F]) + " needs a value");
      *Targets[F] = V;
      O.HaveConfig |= F == 2;
      O.HaveFlops |= F == 4;
      O.HavePeak |= F == 5;
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
      return report(kExitUser,
                    "expected NAME=VALUE, found '" + A + "'" +
                        (std::string(Argv[I - 1]) == "--bench"
                             ? " (the number of launches is given as "
                               "--bench=N)"
                             : ""));
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
  if ((O.HaveFlops || O.HavePeak) && !O.BenchRuns)
    return report(kExitUser,
                  std::string(O.HaveFlops ? "--flops" : "--peak-tflops") +
                      " applies to --bench; add --bench[=N]");
  if (O.HavePeak) {
    char *End = nullptr;
    const char *Text = O.PeakText.c_str();
    O.PeakTflops = std::strtod(Text, &End);
    if (O.PeakText.empty() || *End || std::isspace((unsigned char)Text[0]) ||
        !std::isfinite(O.PeakTflops) || !(O.PeakTflops > 0))
      return report(kExitUser, "--peak-tflops needs a positive number of "
                               "TFLOP/s, found '" +
                                   O.PeakText + "'");
  }
  if (O.HaveFlops) {
    Expected<FlopsExpr> E = FlopsExpr::parse(O.FlopsText);
    if (!E)
      return report(kExitUser,
                    "--flops '" + O.FlopsText + "': " + E.error().message());
    O.Flops = std::move(*E);
  }
  return -1;
}

/// A pointer argument: its buffer and where its data came from.
struct PointerArg {
  size_t Param;
  std::string Input;
  std::vector<int64_t> Shape;
  Buffer Buf;
  /// The input's bytes as the kernel takes them (for --check and --bench,
  /// which start again from them).
  std::vector<uint8_t> Initial;
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

/// An error with a prefix before its message.
Error prefixed(const std::string &Prefix, const Error &E) {
  return Error(E.code(), Prefix + E.message());
}

/// "softmax_v3 (BLOCK=1024, warps=4, stages=2)", or the bare name.
std::string variantText(const LaunchPlan &Plan) {
  return Plan.Config.empty() ? Plan.VariantName
                             : Plan.VariantName + " (" + Plan.Config + ")";
}

/// The names joined with `Sep`.
std::string join(const std::vector<std::string> &Names,
                 const std::string &Sep = ", ") {
  std::string Out;
  for (const std::string &N : Names)
    Out += (Out.empty() ? "" : Sep) + N;
  return Out;
}

/// ", fast path ENTRY (assumes ...)" when the launch runs an image that
/// assumes aligned or divisible arguments or conditions, or loads views
/// with TMA tensor maps, else "".
std::string fastPathText(const KernelInfo &Info, const LaunchPlan &Plan) {
  for (const VariantInfo &V : Info.Variants) {
    if (V.Index != Plan.Variant || Plan.Image >= V.Images.size())
      continue;
    const ImageInfo &I = V.Images[Plan.Image];
    std::vector<std::string> Parts;
    if (!I.Assumes.Align16.empty())
      Parts.push_back("16-byte aligned " + join(I.Assumes.Align16));
    if (!I.Assumes.Div16.empty())
      Parts.push_back("multiples of 16 " + join(I.Assumes.Div16));
    for (const std::string &C : I.Assumes.Holds)
      Parts.push_back(C);
    std::vector<std::string> Mapped;
    for (const TensorMapInfo &M : I.TensorMaps)
      Mapped.push_back(M.Param);
    if (!Mapped.empty())
      Parts.push_back("TMA loads of " + join(Mapped));
    if (Parts.empty())
      return "";
    return ", fast path " + I.Entry + " (" + join(Parts, "; ") + ")";
  }
  return "";
}

/// True for a triple whose code objects run on a host CPU.
bool isHostTriple(const std::string &Triple) {
  for (const char *Gpu : {"nvptx", "amdgcn", "spirv"})
    if (Triple.compare(0, std::strlen(Gpu), Gpu) == 0)
      return false;
  return true;
}

/// The kernel on the host device, for --check's reference run: the run's
/// own when it runs on the host; else the bundle loaded on the host, which
/// must have a host image of the kernel. Returns an exit code on failure.
std::optional<int> openReference(const Options &O, Device &Dev, Module &Mod,
                                 Kernel &K, std::optional<Device> &RefDev,
                                 std::optional<Kernel> &RefK) {
  if (Dev.kind() == DeviceKind::Host) {
    RefDev = Dev;
    RefK = K;
    return std::nullopt;
  }
  const KernelInfo *Info = Mod.bundle().findKernel(O.Kernel);
  std::vector<std::string> Targets;
  bool HostImages = false;
  for (const VariantInfo &V : Info->Variants)
    for (const ImageInfo &I : V.Images) {
      HostImages |= isHostTriple(I.Triple);
      if (std::find(Targets.begin(), Targets.end(), I.Target) == Targets.end())
        Targets.push_back(I.Target);
    }
  if (!HostImages) {
    std::string List;
    for (const std::string &T : Targets)
      List += (List.empty() ? "" : ",") + T;
    return report(kExitUser,
                  "--check needs host images in the bundle: compile with "
                  "--targets=" +
                      List + ",host (kernel '" + O.Kernel + "' in '" +
                      O.Bundle + "' has images for " + List + " only)");
  }
  Expected<Device> Host = Device::open("host");
  if (!Host)
    return report(prefixed("--check: ", Host.error()));
  Expected<Module> HostMod = Host->loadModule(Mod.bundle());
  if (!HostMod)
    return report(
        prefixed("--check: the host cannot run kernel '" + O.Kernel + "': ",
                 HostMod.error()));
  Expected<Kernel> HostK = HostMod->kernel(O.Kernel);
  if (!HostK)
    return report(
        prefixed("--check: the host cannot run kernel '" + O.Kernel + "': ",
                 HostK.error()));
  RefDev = *Host;
  RefK = *HostK;
  return std::nullopt;
}

/// A scalar argument's value as a double, for --flops.
double scalarValue(const Arg &A) {
  uint64_t Bits = A.bits();
  if (isFloatType(A.type()))
    return floatValue(A.type(), Bits);
  return isSignedType(A.type()) ? double(A.asInt64()) : double(Bits);
}

/// Checks that every name of --flops is a scalar parameter.
std::optional<int> checkFlopsNames(const Options &O, const KernelInfo &Info) {
  std::vector<std::string> Scalars, All;
  for (const ParamInfo &P : Info.Params) {
    All.push_back(P.Name);
    if (!P.Type.IsPointer)
      Scalars.push_back(P.Name);
  }
  std::string ScalarList;
  for (const std::string &S : Scalars)
    ScalarList += (ScalarList.empty() ? "" : ", ") + S;
  std::string Takes = Scalars.empty() ? "kernel '" + Info.Name +
                                            "' has no scalar arguments, so the "
                                            "expression can use numbers only"
                                      : "scalar arguments: " + ScalarList;
  std::string What = "--flops '" + O.FlopsText + "': ";
  for (const std::string &Name : O.Flops->names()) {
    const ParamInfo *Found = nullptr;
    for (const ParamInfo &P : Info.Params)
      if (P.Name == Name)
        Found = &P;
    if (!Found) {
      std::string Near = nearestName(Name, Scalars.empty() ? All : Scalars);
      return report(kExitUser,
                    What + "kernel '" + Info.Name + "' has no argument '" +
                        Name + "'" +
                        (Near.empty() ? "" : "; did you mean '" + Near + "'?") +
                        " (" + Takes + ")");
    }
    if (Found->Type.IsPointer)
      return report(kExitUser, What + "'" + Name + "' is a pointer argument (" +
                                   Found->Type.str() + "), not a scalar (" +
                                   Takes + ")");
  }
  return std::nullopt;
}

/// Evaluates --flops over the scalar arguments.
Expected<double> evaluateFlops(const Options &O, const KernelInfo &Info,
                               const std::vector<Arg> &Args) {
  std::map<std::string, double> Values;
  std::string With;
  for (const std::string &Name : O.Flops->names())
    for (size_t I = 0; I < Info.Params.size(); ++I)
      if (Info.Params[I].Name == Name) {
        Values[Name] = scalarValue(Args[I]);
        for (const auto &A : O.Args)
          if (A.first == Name)
            With += (With.empty() ? " (with " : ", ") + Name + "=" + A.second;
      }
  if (!With.empty())
    With += ")";
  std::string What = "--flops '" + O.FlopsText + "'";
  Expected<double> Flops = O.Flops->evaluate(Values);
  if (!Flops)
    return Error(ErrorCode::InvalidArgument,
                 What + ": " + Flops.error().message() + With);
  if (!std::isfinite(*Flops) || *Flops < 0)
    return Error(ErrorCode::InvalidArgument,
                 What + " gives " + formatShort(*Flops) + " FLOPs" + With +
                     "; it must be a count of 0 or more");
  return *Flops;
}

/// Copies every pointer argument's buffer to the host.
Error readBack(Stream &S, const std::vector<Buffer *> &Bufs,
               std::vector<std::vector<uint8_t>> &Out) {
  Out.assign(Bufs.size(), {});
  for (size_t I = 0; I < Bufs.size(); ++I) {
    Out[I].resize(Bufs[I]->size());
    if (Error E = S.copyToHost(Out[I].data(), *Bufs[I], 0, Out[I].size()))
      return E;
  }
  return S.synchronize();
}

/// --check: runs the kernel on the host (`RefDev`, `RefK`) from fresh
/// copies of the inputs and compares every pointer argument with the run's
/// `Results`. Prints a table; `Failure` gets the error message when an
/// argument is beyond its tolerance. Returns an exit code if the reference
/// run itself fails.
std::optional<int> runCheck(const Device &Dev, Device &RefDev, Kernel &RefK,
                            const KernelInfo &Info, std::vector<Arg> Args,
                            const std::vector<PointerArg> &Pointers,
                            const std::vector<std::vector<uint8_t>> &Results,
                            const LaunchPlan &Plan, const LaunchOptions &Launch,
                            std::string &Failure) {
  bool BothHost = Dev.kind() == DeviceKind::Host;
  const std::string What = BothHost ? "--check: the second host run failed: "
                                    : "--check: the reference run on the "
                                      "host failed: ";
  Expected<Stream> S = RefDev.createStream();
  if (!S)
    return report(prefixed(What, S.error()));
  std::vector<Buffer> Bufs;
  for (const PointerArg &P : Pointers) {
    Expected<Buffer> B = RefDev.allocate(P.Initial.size());
    if (!B)
      return report(prefixed(What, B.error()));
    if (Error E = S->copyToDevice(*B, 0, P.Initial.data(), P.Initial.size()))
      return report(prefixed(What, E));
    Args[P.Param] = Arg::pointer(*B, Info.Params[P.Param].Type.Element);
    Bufs.push_back(std::move(*B));
  }
  // The variant the run took; failing that, the same choice as the run.
  LaunchOptions RefLaunch = Launch;
  RefLaunch.Variant = Plan.Variant;
  Expected<LaunchPlan> RefPlan = RefK.plan(Args, RefLaunch);
  if (!RefPlan) {
    RefLaunch = Launch;
    RefPlan = RefK.plan(Args, RefLaunch);
  }
  if (!RefPlan)
    return report(prefixed(What, RefPlan.error()));
  if (RefPlan->programs() != 0)
    if (Error E = RefK.load(*RefPlan))
      return report(prefixed(What, E));
  Expected<LaunchPlan> Ran = RefK.launch(*S, Args, RefLaunch);
  if (!Ran)
    return report(prefixed(What, Ran.error()));
  if (Error E = S->synchronize())
    return report(prefixed(What, E));
  std::vector<Buffer *> BufPtrs;
  for (Buffer &B : Bufs)
    BufPtrs.push_back(&B);
  std::vector<std::vector<uint8_t>> Reference;
  if (Error E = readBack(*S, BufPtrs, Reference))
    return report(prefixed(What, E));

  if (BothHost)
    std::printf("check: both runs were on the host: a second run, variant "
                "%s, compared with the first\n",
                variantText(*Ran).c_str());
  else
    std::printf("check: %s compared with a run on the host (%s), variant %s\n",
                Dev.name().c_str(), RefDev.description().c_str(),
                variantText(*Ran).c_str());
  const std::string NameA = BothHost ? "run 1" : Dev.name();
  const std::string NameB = BothHost ? "run 2" : "host";

  Table T({"argument", "dtype", ">elements", "changed", ">max abs diff",
           ">max rel diff", "worst index", "verdict"});
  std::vector<std::string> Details, Failed;
  for (size_t I = 0; I < Pointers.size(); ++I) {
    const PointerArg &P = Pointers[I];
    const ParamInfo &Param = Info.Params[P.Param];
    ScalarType Type = Param.Type.Element;
    uint64_t N = P.Initial.size() / typeSize(Type);
    Comparison C =
        compareElements(Type, Results[I].data(), Reference[I].data(), N);
    bool Changed = Results[I] != P.Initial || Reference[I] != P.Initial;
    std::string Verdict = "ok";
    if (C.Failures) {
      Verdict =
          "FAIL (" + std::to_string(C.Failures) + " of " + std::to_string(N) +
          (C.NanMismatches ? ", " + std::to_string(C.NanMismatches) + " NaN"
                           : std::string()) +
          ")";
    }
    std::string Worst = C.HasWorst ? formatIndex(C.Worst, P.Shape) : "-";
    T.addRow({Param.Name, std::string(typeName(Type)), std::to_string(N),
              Changed ? "yes" : "no", formatShort(C.MaxAbs),
              formatShort(C.MaxRel), Worst, Verdict});
    if (!C.Failures)
      continue;
    Tolerance Tol = toleranceFor(Type);
    Details.push_back("  " + Param.Name + " at index " + Worst + ": " + NameA +
                      " gives " + C.WorstA + ", " + NameB + " " + C.WorstB +
                      " (" + std::string(typeName(Type)) +
                      " tolerance: " + Tol.str() + ")");
    Failed.push_back("'" + Param.Name + "' (" + std::to_string(C.Failures) +
                     " of " + std::to_string(N) + " elements beyond " +
                     std::string(typeName(Type)) + " tolerance, " + Tol.str() +
                     ")");
  }
  T.print(stdout);
  for (const std::string &D : Details)
    std::printf("%s\n", D.c_str());
  if (Failed.empty()) {
    std::printf("check: passed: every pointer argument is within its "
                "dtype's tolerance\n");
  } else {
    std::string List;
    for (const std::string &F : Failed)
      List += (List.empty() ? "" : "; ") + F;
    Failure = std::string("--check failed: ") +
              (BothHost ? "the two host runs differ: "
                        : Dev.name() + " differs from the host: ") +
              List;
  }
  std::fflush(stdout);
  return std::nullopt;
}

/// --bench: warms up, times O.BenchRuns launches with device events and
/// prints a table. The buffers start again from the inputs.
std::optional<int> runBench(const Options &O, Device &Dev, Stream &S, Kernel &K,
                            const KernelInfo &Info,
                            const std::vector<Arg> &Args,
                            std::vector<PointerArg> &Pointers,
                            const LaunchPlan &Plan, const LaunchOptions &Launch,
                            std::optional<double> Flops) {
  const std::string What = "--bench: ";
  uint64_t Bytes = 0;
  for (PointerArg &P : Pointers) {
    Bytes += P.Buf.size();
    if (Error E = S.copyToDevice(P.Buf, 0, P.Initial.data(), P.Initial.size()))
      return report(prefixed(What, E));
  }
  LaunchOptions Same = Launch;
  Same.Variant = Plan.Variant;

  // Warm-up: at least 3 launches and 50 ms.
  using Clock = std::chrono::steady_clock;
  Clock::time_point WarmStart = Clock::now();
  unsigned Warm = 0;
  while (Warm < 3 || Clock::now() - WarmStart < std::chrono::milliseconds(50)) {
    Expected<LaunchPlan> P = K.launch(S, Args, Same);
    if (!P)
      return report(prefixed(What, P.error()));
    if (Error E = S.synchronize())
      return report(prefixed(What, E));
    ++Warm;
  }

  // Timed launches, back to back, each between two events.
  unsigned N = O.BenchRuns;
  std::vector<Event> Starts, Ends;
  for (unsigned I = 0; I < N; ++I) {
    Expected<Event> A = Dev.createEvent(), B = Dev.createEvent();
    if (!A)
      return report(prefixed(What, A.error()));
    if (!B)
      return report(prefixed(What, B.error()));
    Starts.push_back(std::move(*A));
    Ends.push_back(std::move(*B));
  }
  for (unsigned I = 0; I < N; ++I) {
    if (Error E = S.record(Starts[I]))
      return report(prefixed(What, E));
    Expected<LaunchPlan> P = K.launch(S, Args, Same);
    if (!P)
      return report(prefixed(What, P.error()));
    if (Error E = S.record(Ends[I]))
      return report(prefixed(What, E));
  }
  if (Error E = S.synchronize())
    return report(prefixed(What, E));
  std::vector<double> Ms;
  for (unsigned I = 0; I < N; ++I) {
    Expected<double> T = Event::elapsedMilliseconds(Starts[I], Ends[I]);
    if (!T)
      return report(prefixed(What, T.error()));
    Ms.push_back(*T);
  }
  std::sort(Ms.begin(), Ms.end());
  double Median = N % 2 ? Ms[N / 2] : (Ms[N / 2 - 1] + Ms[N / 2]) / 2;

  // Bytes / ms / 1e6 = GB/s; FLOPs / ms / 1e9 = TFLOP/s.
  double GBs = double(Bytes) / Median / 1e6;
  double PeakGBs = Dev.properties().PeakBandwidthGBs;
  auto Share = [](double V, double Peak) {
    return formatFixed(100 * V / Peak) + "%";
  };
  std::string Tflops = "-", TflopsShare = "-";
  if (Flops) {
    double V = *Flops / Median / 1e9;
    Tflops = formatFixed(V);
    TflopsShare = O.HavePeak ? Share(V, O.PeakTflops) : "n/a";
  }
  std::printf("bench: %u timed launches after %u warm-up launches on %s; "
              "%llu bytes per launch (each pointer argument's buffer once)",
              N, Warm, Dev.name().c_str(), (unsigned long long)Bytes);
  if (Flops) {
    if (*Flops < 1e15 && *Flops == std::floor(*Flops))
      std::printf(", %.0f FLOPs per launch", *Flops);
    else
      std::printf(", %.6g FLOPs per launch", *Flops);
  }
  std::printf("\n");
  Table T({"kernel", "config", ">median ms", ">min ms", ">max ms", ">GB/s",
           ">% peak GB/s", ">TFLOP/s", ">% peak TFLOP/s"});
  T.addRow({Info.Name, Plan.Config.empty() ? "-" : Plan.Config,
            formatFixed(Median), formatFixed(Ms.front()),
            formatFixed(Ms.back()), formatFixed(GBs),
            PeakGBs > 0 ? Share(GBs, PeakGBs) : "n/a", Tflops, TflopsShare});
  T.print(stdout);
  std::fflush(stdout);
  return std::nullopt;
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
  if (O.Flops)
    if (auto Code = checkFlopsNames(O, Info))
      return *Code;

  // --check runs on the host as well: find the kernel there first.
  std::optional<Device> RefDev;
  std::optional<Kernel> RefK;
  if (O.Check)
    if (auto Code = openReference(O, *Dev, *Mod, *K, RefDev, RefK))
      return *Code;

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
    Pointers.push_back(
        {I, *Value, Array->Shape, std::move(*Buf), std::move(*Bytes)});
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
  std::optional<double> Flops;
  if (O.Flops) {
    Expected<double> F = evaluateFlops(O, Info, Args);
    if (!F)
      return report(F.error());
    Flops = *F;
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
  std::printf("variant: %s%s\n", variantText(*Plan).c_str(),
              fastPathText(K->info(), *Plan).c_str());
  // How a tuned launch chose (docs/tuning.md); its time includes the
  // measurements.
  std::string Bucket = Plan->Bucket.empty() ? "" : ", bucket " + Plan->Bucket;
  if (Plan->Source == ChoiceSource::Measured)
    std::printf("tuning: measured %u candidate%s in %.2f s%s\n",
                Plan->Measured, Plan->Measured == 1 ? "" : "s",
                Plan->TuningSeconds, Bucket.c_str());
  else if (Plan->Source == ChoiceSource::Database)
    std::printf("tuning: from the tuning database%s\n", Bucket.c_str());
  else if (Plan->Source == ChoiceSource::Table)
    std::printf("tuning: from the bundle's tuning table%s\n", Bucket.c_str());
  std::printf("time: %.3f ms\n", *Ms);
  std::fflush(stdout);
  // Kernel print lines: those of the first launch only.
  if (O.Check || O.BenchRuns) {
    Dev->setPrintHandler([](const std::string &) {});
    if (RefDev)
      RefDev->setPrintHandler([](const std::string &) {});
  }

  // The outputs are those of this first launch.
  std::vector<Buffer *> Bufs;
  for (PointerArg &P : Pointers)
    Bufs.push_back(&P.Buf);
  std::vector<std::vector<uint8_t>> Results;
  if (Error E = readBack(*S, Bufs, Results))
    return report(E);
  for (size_t I = 0; I < Pointers.size(); ++I) {
    const ParamInfo &P = Info.Params[Pointers[I].Param];
    NpyArray Array =
        convertForOutput(Results[I].data(), P.Type.Element, Pointers[I].Shape);
    if (Error E = writeNpyFile(O.OutDir + "/" + P.Name + ".npy", Array))
      return report(E);
  }

  std::string CheckFailure;
  if (O.Check)
    if (auto Code = runCheck(*Dev, *RefDev, *RefK, Info, Args, Pointers,
                             Results, *Plan, Launch, CheckFailure))
      return *Code;
  if (O.BenchRuns)
    if (auto Code = runBench(O, *Dev, *S, *K, Info, Args, Pointers, *Plan,
                             Launch, Flops))
      return *Code;
  if (!CheckFailure.empty())
    return report(kExitUser, CheckFailure);
  return 0;
}

/// kiln-run --list-devices: one line per device, its description ("host
/// (16 threads)", "cuda:0 (NVIDIA H100 80GB HBM3, sm_90, ...)", "hip:0
/// (AMD Instinct MI300X, gfx942:sramecc+:xnack-, ...)"); for each vendor
/// with no device, a note on standard error says why. Exit code 0 either
/// way (the host is always there), 2 if not even the host opens.
int listDevices() {
  Expected<Device> Host = Device::open("host");
  if (!Host)
    return report(Host.error());
  std::printf("%s\n", Host->description().c_str());
  for (const auto &[Kind, Vendor] :
       {std::pair<std::string, std::string>{"cuda", "CUDA"}, {"hip", "HIP"}})
    for (int N = 0;; ++N) {
      std::string Spec = Kind + ":" + std::to_string(N);
      Expected<Device> D = Device::open(Spec);
      if (!D) {
        // KIND:N past the last device says "KIND:N: only N ... devices":
        // the end of the list, not worth a note.
        const std::string &Why = D.error().message();
        if (N == 0 || Why.find(": only ") == std::string::npos)
          std::fprintf(stderr, "%s: note: %s%s\n", ToolName.c_str(),
                       N == 0 && Why.find("no " + Vendor + " device") ==
                                     std::string::npos
                           ? ("no " + Vendor + " device: ").c_str()
                           : "",
                       Why.c_str());
        break;
      }
      std::printf("%s\n", D->description().c_str());
    }
  std::fflush(stdout);
  return 0;
}

} // namespace

int kiln::runtool::runBundleTool(int Argc, char **Argv) {
  if (Argc > 1 && std::strcmp(Argv[1], "tune") == 0)
    return runTuneTool("kiln-run", Argc - 1, Argv + 1);
  for (int I = 1; I < Argc; ++I)
    if (std::string(Argv[I]) == "--list-devices") {
      if (Argc != 2)
        return report(kExitUser, "--list-devices takes no other arguments");
      return listDevices();
    }
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
