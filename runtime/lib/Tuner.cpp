//===- Tuner.cpp - Choosing a variant by measuring it ---------------------===//
//
// The runtime tuner (docs/tuning.md). A launch with several candidates
// looks up its (kernel hash, device, key bucket) in the tuning database;
// in Full mode it first measures the candidates the database lacks:
//
//   the stream synchronizes; every buffer the kernel may write is copied
//   aside; per candidate: a warm-up launch, then timed launches (device
//   events around each), each after the saved buffers are copied back and
//   (on a GPU) the L2 cache is flushed by a 256 MiB memset; the median
//   counts. A candidate that fails to load or launch is left out with a
//   warning. At the end the buffers are copied back once more, so the
//   real launch sees the caller's inputs.
//
//===----------------------------------------------------------------------===//
#include "Internal.h"
#include "TuningDb.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace kiln::rt;
using namespace kiln::rt::detail;

//===----------------------------------------------------------------------===//
// Process-wide settings
//===----------------------------------------------------------------------===//

namespace {

struct Settings {
  std::mutex Mutex;
  std::optional<TuningMode> Mode;
  std::optional<std::string> DbPath;
  WarningHandler Warn;
  bool EnvWarned = false;
  std::shared_ptr<TuningDbImpl> Db;
  std::string DbOpenedAt;
};

/// Never destroyed: launches may run during static destruction.
Settings &settings() {
  static Settings *S = new Settings();
  return *S;
}

std::string envOr(const char *Name, const std::string &Fallback = "") {
  const char *V = std::getenv(Name);
  return V && *V ? std::string(V) : Fallback;
}

} // namespace

/// The modes' names, indexed by TuningMode.
constexpr std::string_view kModeNames[] = {"off", "cached", "full"};

std::string_view kiln::rt::tuningModeName(TuningMode Mode) {
  return kModeNames[size_t(Mode)];
}

std::optional<TuningMode> kiln::rt::parseTuningMode(std::string_view Text) {
  for (size_t I = 0; I < std::size(kModeNames); ++I)
    if (Text == kModeNames[I])
      return TuningMode(I);
  return std::nullopt;
}

std::string_view kiln::rt::choiceSourceName(ChoiceSource S) {
  switch (S) {
  case ChoiceSource::Only:
    return "only candidate";
  case ChoiceSource::Pinned:
    return "pinned";
  case ChoiceSource::Default:
    return "default";
  case ChoiceSource::Database:
    return "tuning database";
  case ChoiceSource::Measured:
    return "measured";
  case ChoiceSource::Table:
    return "shipped table";
  }
  return "default";
}

TuningMode kiln::rt::tuningMode() {
  Settings &S = settings();
  std::string Env;
  {
    std::lock_guard<std::mutex> Lock(S.Mutex);
    if (S.Mode)
      return *S.Mode;
    Env = envOr("KILN_TUNING");
    if (Env.empty())
      return TuningMode::Full;
    if (std::optional<TuningMode> M = parseTuningMode(Env))
      return *M;
    if (S.EnvWarned)
      return TuningMode::Full;
    S.EnvWarned = true;
  }
  warn("KILN_TUNING='" + Env.substr(0, 64) +
       "' is not off, cached or full; tuning stays full");
  return TuningMode::Full;
}

void kiln::rt::setTuningMode(TuningMode Mode) {
  std::lock_guard<std::mutex> Lock(settings().Mutex);
  settings().Mode = Mode;
}

std::string kiln::rt::tuningDatabasePath() {
  {
    std::lock_guard<std::mutex> Lock(settings().Mutex);
    if (settings().DbPath)
      return *settings().DbPath;
  }
  std::string Dir = envOr("KILN_CACHE_DIR");
  if (Dir.empty()) {
    std::string Xdg = envOr("XDG_CACHE_HOME");
    std::string Home = envOr("HOME");
    if (!Xdg.empty())
      Dir = Xdg + "/kiln";
    else if (!Home.empty())
      Dir = Home + "/.cache/kiln";
    else
      return ":memory:";
  }
  return Dir + "/tuning.db";
}

void kiln::rt::setTuningDatabase(std::string Path) {
  std::lock_guard<std::mutex> Lock(settings().Mutex);
  if (Path.empty())
    settings().DbPath.reset();
  else
    settings().DbPath = std::move(Path);
}

void kiln::rt::setWarningHandler(WarningHandler Handler) {
  std::lock_guard<std::mutex> Lock(settings().Mutex);
  settings().Warn = std::move(Handler);
}

void kiln::rt::detail::warn(const std::string &Message) {
  WarningHandler H;
  {
    std::lock_guard<std::mutex> Lock(settings().Mutex);
    H = settings().Warn;
  }
  if (H)
    H(Message);
  else
    std::fprintf(stderr, "kiln: warning: %s\n", Message.c_str());
}

namespace {

/// The process's database at the current path (reopened when it changes);
/// what opening it warns about goes to `Pending`.
std::shared_ptr<TuningDbImpl>
processDatabase(std::vector<std::string> &Pending) {
  std::string Path = tuningDatabasePath();
  Settings &S = settings();
  {
    std::lock_guard<std::mutex> Lock(S.Mutex);
    if (S.Db && S.DbOpenedAt == Path)
      return S.Db;
  }
  // Opened outside the settings lock (opening takes a while).
  std::shared_ptr<TuningDbImpl> Db = openProcessDatabase(
      Path, [&](const std::string &M) { Pending.push_back(M); });
  std::lock_guard<std::mutex> Lock(S.Mutex);
  if (!S.Db || S.DbOpenedAt != Path) {
    S.Db = Db;
    S.DbOpenedAt = Path;
  }
  return S.Db;
}

//===----------------------------------------------------------------------===//
// Keys
//===----------------------------------------------------------------------===//

/// The next power of two at or above |V|, with V's sign (0 stays 0).
int64_t bucketOf(int64_t V) {
  if (V == 0)
    return 0;
  uint64_t M = V < 0 ? uint64_t(0) - uint64_t(V) : uint64_t(V);
  uint64_t P = 1;
  while (P < M && P < (uint64_t(1) << 62))
    P <<= 1;
  return V < 0 ? -int64_t(P) : int64_t(P);
}

/// "M=4096, N=4096, K=4096": each key argument's bucket.
std::string bucketText(const KernelInfo &K, const std::vector<Arg> &Args) {
  std::string Out;
  for (size_t N = 0; N < K.Key.size(); ++N)
    for (size_t I = 0; I < K.Params.size(); ++I)
      if (K.Params[I].Name == K.Key[N]) {
        int64_t V = isSignedType(Args[I].type()) ? Args[I].asInt64()
                                                 : int64_t(std::min<uint64_t>(
                                                       Args[I].bits(),
                                                       uint64_t(1) << 62));
        bool Exact = N < K.KeyExact.size() && K.KeyExact[N];
        Out += (Out.empty() ? "" : ", ") + K.Key[N] + "=" +
               std::to_string(Exact ? V : bucketOf(V));
      }
  return Out;
}

} // namespace

/// "NVIDIA H100 80GB HBM3 / sm_90 / driver 13000"; the host adds its
/// thread count (it changes the timings).
std::string kiln::rt::detail::tuningDeviceKey(const DeviceImpl &D) {
  DeviceProperties P = D.properties();
  std::string Out = P.Model + " / " + P.Arch;
  if (P.Kind == DeviceKind::Host || P.Kind == DeviceKind::Emulator)
    Out += " / " + std::to_string(P.ComputeUnits) + " threads";
  if (P.DriverVersion)
    Out += " / driver " + std::to_string(P.DriverVersion);
  return Out;
}

namespace {

double median(std::vector<double> V) {
  std::sort(V.begin(), V.end());
  size_t N = V.size();
  return N % 2 ? V[N / 2] : 0.5 * (V[N / 2 - 1] + V[N / 2]);
}

//===----------------------------------------------------------------------===//
// Measuring
//===----------------------------------------------------------------------===//

/// The buffers a kernel may write, copied aside on the device.
class SavedBuffers {
public:
  SavedBuffers(DeviceImpl &D, StreamImpl &S) : D(D), S(S) {}
  ~SavedBuffers() {
    if (Copy)
      D.release(Copy);
  }

  Error save(const KernelInfo &K, const std::vector<Arg> &Args) {
    size_t Total = 0;
    for (size_t I = 0; I < K.Params.size(); ++I) {
      if (!K.Params[I].Written || !Args[I].address())
        continue;
      size_t Bytes = Args[I].bufferBytes();
      if (!Bytes) {
        std::optional<std::pair<uintptr_t, size_t>> Range =
            D.allocationOf(Args[I].address());
        if (!Range)
          return Error(ErrorCode::InvalidArgument,
                       "cannot tune kernel '" + K.Name + "': argument '" +
                           K.Params[I].Name +
                           "', which it may write, is an address this "
                           "device did not allocate, so it cannot be saved "
                           "and restored around the measurements (pass a "
                           "Buffer)");
        Bytes = Range->first + Range->second - uintptr_t(Args[I].address());
      }
      Parts.push_back({const_cast<void *>(Args[I].address()), Total, Bytes});
      Total += Bytes;
    }
    if (!Total)
      return Error::success();
    Expected<void *> P = D.allocate(Total);
    if (!P)
      return Error(P.error().code(), "cannot tune kernel '" + K.Name +
                                         "': saving the buffers it may "
                                         "write: " +
                                         P.error().message());
    Copy = *P;
    for (const Part &Pt : Parts)
      if (Error E = D.copy(S, static_cast<char *>(Copy) + Pt.Offset, Pt.Buffer,
                           Pt.Bytes, CopyKind::DeviceToDevice))
        return E;
    return Error::success();
  }

  Error restore() {
    for (const Part &Pt : Parts)
      if (Error E = D.copy(S, Pt.Buffer, static_cast<char *>(Copy) + Pt.Offset,
                           Pt.Bytes, CopyKind::DeviceToDevice))
        return E;
    return Error::success();
  }

private:
  struct Part {
    void *Buffer;
    size_t Offset, Bytes;
  };
  DeviceImpl &D;
  StreamImpl &S;
  std::vector<Part> Parts;
  void *Copy = nullptr;
};

/// A device buffer that a memset evicts the GPU's L2 with (none on the
/// host device or the emulator: their caches are the CPU's).
class CacheFlusher {
public:
  CacheFlusher(DeviceImpl &D, StreamImpl &S) : D(D), S(S) {
    DeviceProperties P = D.properties();
    if (P.Kind != DeviceKind::Cuda && P.Kind != DeviceKind::Hip)
      return;
    Bytes = size_t(256) << 20;
    if (P.MemoryBytes)
      Bytes = std::min<size_t>(Bytes, P.MemoryBytes / 16);
    Expected<void *> B = D.allocate(Bytes);
    if (B)
      Buffer = *B;
  }
  ~CacheFlusher() {
    if (Buffer)
      D.release(Buffer);
  }
  Error flush() {
    return Buffer ? D.fill(S, Buffer, 0, Bytes) : Error::success();
  }

private:
  DeviceImpl &D;
  StreamImpl &S;
  void *Buffer = nullptr;
  size_t Bytes = 0;
};

struct Measurer {
  ModuleImpl &M;
  unsigned Kernel;
  StreamImpl &S;
  const std::vector<Arg> &Args;
  const TuneOptions &Options;

  /// Times one candidate: the median of its launches, in milliseconds.
  Expected<VariantTiming> measure(const Candidate &C, SavedBuffers &Saved,
                                  CacheFlusher &Flush, EventImpl &Start,
                                  EventImpl &End, double Best) {
    const KernelInfo &K = M.TheBundle.kernels()[Kernel];
    LaunchOptions Pin;
    Pin.Variant = K.Variants[C.Position].Index;
    size_t Position, Slot;
    Expected<LaunchPlan> Plan =
        planLaunch(M, Kernel, Args, Pin, Position, Slot);
    if (!Plan)
      return Plan.takeError();
    if (Plan->programs() == 0)
      return Error(ErrorCode::LaunchRefused,
                   "its grid is empty for these arguments");
    Candidate Exact{Position, Slot};
    // A variant whose code object and grid are those of one measured
    // already (the host's variants that differ only in warps or stages)
    // takes its time: the same launch would be timed again.
    const ImageInfo &Img =
        K.Variants[Position]
            .Images[M.Kernels[Kernel].Variants[Position].Images[Slot].Index];
    // Resources (threads, shared memory) change a GPU launch too.
    std::array<int64_t, 6> CodeKey = {
        int64_t(Img.Offset), int64_t(Img.Size),
        int64_t(std::hash<std::string>()(Img.Resources)), Plan->Grid[0],
        Plan->Grid[1], Plan->Grid[2]};
    if (auto It = ByCode.find(CodeKey); It != ByCode.end()) {
      VariantTiming T = It->second;
      T.Variant = K.Variants[C.Position].Index;
      T.Config = K.variantConfig(K.Variants[C.Position]);
      return T;
    }
    DeviceImpl &D = *M.Device;
    // Warm-up (loads the code object).
    if (Error E = Saved.restore())
      return E;
    if (Error E = launchPlanned(M, Kernel, S, Exact, Args, *Plan))
      return E;
    if (Error E = D.synchronize(S))
      return E;
    std::vector<double> Times;
    unsigned Repeats = 3;
    for (unsigned R = 0; R < Repeats; ++R) {
      if (Error E = Saved.restore())
        return E;
      if (Error E = Flush.flush())
        return E;
      if (Error E = D.record(S, Start))
        return E;
      if (Error E = launchPlanned(M, Kernel, S, Exact, Args, *Plan))
        return E;
      if (Error E = D.record(S, End))
        return E;
      if (Error E = D.synchronize(End))
        return E;
      Expected<double> Ms = D.elapsedMilliseconds(Start, End);
      if (!Ms)
        return Ms.takeError();
      Times.push_back(std::max(*Ms, 0.0));
      if (R == 0) {
        // Enough launches for about TargetMilliseconds of kernel time; one
        // for a launch that alone takes five times that (its noise is
        // small beside it), and for a candidate three times slower than
        // the best so far.
        double First = std::max(Times[0], 1e-4);
        Repeats = unsigned(std::clamp(Options.TargetMilliseconds / First, 3.0,
                                      50.0));
        if (First > 5 * Options.TargetMilliseconds ||
            (Best > 0 && First > 3 * Best))
          Repeats = 1;
      }
    }
    VariantTiming T;
    T.Variant = K.Variants[C.Position].Index;
    T.Config = K.variantConfig(K.Variants[C.Position]);
    T.Milliseconds = median(Times);
    T.Repeats = unsigned(Times.size());
    T.MeasuredNow = true;
    ByCode[CodeKey] = T;
    return T;
  }

  /// Times by (code object, grid), for variants that share one.
  std::map<std::array<int64_t, 6>, VariantTiming> ByCode;
};

/// Reads a bucket from the database once per module.
void loadBucket(KernelTuning &KT, const KernelInfo &K, const std::string &Dev,
                const std::string &Bucket, std::vector<std::string> &Pending) {
  if (KT.Loaded.count(Bucket))
    return;
  std::shared_ptr<TuningDbImpl> Db = processDatabase(Pending);
  if (!Db) {
    KT.Loaded.insert(Bucket);
    return;
  }
  Expected<std::vector<TuningRow>> Rows = Db->rows(K.Hash, Dev, Bucket);
  if (!Rows) {
    // Not marked loaded: a later launch tries again.
    Pending.push_back(Rows.error().message());
    return;
  }
  KT.Loaded.insert(Bucket);
  for (const TuningRow &R : *Rows) {
    // Only variants of this bundle (a database may know more).
    for (const VariantInfo &V : K.Variants)
      if (K.variantConfig(V) == R.Variant) {
        VariantTiming T;
        T.Variant = V.Index;
        T.Config = R.Variant;
        T.Milliseconds = R.Milliseconds;
        T.Repeats = R.Repeats;
        KT.Known[Bucket][R.Variant] = T;
      }
  }
}

/// Measures `Missing` (Full mode), records them in the module and the
/// database; failures are warned about and remembered.
/// `Fatal` is set when the failure came after launches that may have
/// changed the caller's buffers (they could not be restored).
Error measureMissing(ModuleImpl &M, unsigned Kernel, StreamImpl &S,
                     const std::vector<Arg> &Args,
                     const std::vector<Candidate> &Missing,
                     const TuneOptions &Options, const std::string &Dev,
                     const std::string &Bucket, TuneResult &Result,
                     std::vector<std::string> &Pending, bool &Fatal) {
  const KernelInfo &K = M.TheBundle.kernels()[Kernel];
  KernelTuning &KT = *M.Tuning[Kernel];
  DeviceImpl &D = *M.Device;
  // The copies are in stream order: after the work already queued.
  SavedBuffers Saved(D, S);
  if (Error E = Saved.save(K, Args)) {
    // Not measurable here (a raw address): this bucket is not tried again.
    KT.Unmeasurable.insert(Bucket);
    return E;
  }
  CacheFlusher Flush(D, S);
  Expected<std::unique_ptr<EventImpl>> Start = D.createEvent();
  if (!Start)
    return Start.takeError();
  Expected<std::unique_ptr<EventImpl>> End = D.createEvent();
  if (!End)
    return End.takeError();

  double Best = 0;
  for (const auto &[Config, T] : KT.Known[Bucket])
    if (Best == 0 || T.Milliseconds < Best)
      Best = T.Milliseconds;
  Measurer Me{M, Kernel, S, Args, Options, {}};
  std::vector<TuningRow> Rows;
  for (const Candidate &C : Missing) {
    std::string Config = K.variantConfig(K.Variants[C.Position]);
    Expected<VariantTiming> T = Me.measure(C, Saved, Flush, **Start, **End,
                                           Best);
    if (!T) {
      std::string Why = K.Name + " (" + Config + "): " + T.error().message();
      Pending.push_back("tuning: left out " + Why);
      Result.Failures.push_back(Config + ": " + T.error().message());
      KT.Failed.insert({Bucket, Config});
      KT.Known[Bucket].erase(Config);
      // A failed launch may leave the stream with an error; later
      // candidates report their own.
      continue;
    }
    ++Result.MeasuredNow;
    if (Best == 0 || T->Milliseconds < Best)
      Best = T->Milliseconds;
    KT.Known[Bucket][Config] = *T;
    TuningRow Row;
    Row.KernelHash = K.Hash;
    Row.Kernel = K.Name;
    Row.Variant = Config;
    Row.Device = Dev;
    Row.Bucket = Bucket;
    Row.Milliseconds = T->Milliseconds;
    Row.Repeats = T->Repeats;
    Row.MeasuredAt = tuningTimestamp();
    Rows.push_back(std::move(Row));
  }
  Error Restored = Saved.restore();
  if (!Restored)
    Restored = D.synchronize(S);
  if (Restored) {
    Fatal = true;
    return Error(Restored.code(),
                 "tuning kernel '" + K.Name + "': the buffers it may write "
                 "could not be restored after the measurements: " +
                     Restored.message());
  }
  if (!Rows.empty())
    if (std::shared_ptr<TuningDbImpl> Db = processDatabase(Pending))
      if (Error E = Db->write(Rows, /*Merge=*/false))
        Pending.push_back(E.message() + " (the times are kept in this process)");
  return Error::success();
}

/// The shared work of chooseByTuning and tuneKernel.
/// Warnings are collected while the kernel's tuning lock is held and sent
/// after it is released: a handler may launch again.
class PendingWarnings {
public:
  ~PendingWarnings() {
    for (const std::string &W : List)
      warn(W);
  }
  std::vector<std::string> List;
};

/// `Bucket` is bucketText's for Args. A launch (`FromLaunch`) does not
/// measure a bucket whose arguments could not be saved before; an explicit
/// Kernel::tune tries again (and reports why it cannot).
Expected<TuneResult> decide(ModuleImpl &M, unsigned Kernel, StreamImpl &S,
                            const std::vector<Arg> &Args,
                            const std::vector<Candidate> &Candidates,
                            const std::string &Bucket, bool Measure,
                            bool FromLaunch, TuneOptions Options,
                            size_t &Winner, bool &Fatal) {
  auto Began = std::chrono::steady_clock::now();
  const KernelInfo &K = M.TheBundle.kernels()[Kernel];
  KernelTuning &KT = *M.Tuning[Kernel];
  TuneResult Result;
  Result.Bucket = Bucket;
  Result.DeviceKey = M.TuningDeviceKey;
  Result.Candidates = unsigned(Candidates.size());
  if (!(Options.TargetMilliseconds > 0) ||
      !std::isfinite(Options.TargetMilliseconds))
    Options.TargetMilliseconds = TuneOptions().TargetMilliseconds;

  PendingWarnings Pending; // sent after the lock below is released
  std::lock_guard<std::mutex> Lock(KT.Mutex);
  loadBucket(KT, K, Result.DeviceKey, Result.Bucket, Pending.List);
  std::map<std::string, VariantTiming> &Known = KT.Known[Result.Bucket];
  if (FromLaunch && KT.Unmeasurable.count(Bucket))
    Measure = false;
  if (Measure) {
    std::vector<Candidate> Missing;
    for (const Candidate &C : Candidates) {
      std::string Config = K.variantConfig(K.Variants[C.Position]);
      if (Options.Remeasure ||
          (!Known.count(Config) && !KT.Failed.count({Result.Bucket, Config})))
        Missing.push_back(C);
    }
    if (!Missing.empty())
      if (Error E = measureMissing(M, Kernel, S, Args, Missing, Options,
                                   Result.DeviceKey, Result.Bucket, Result,
                                   Pending.List, Fatal))
        return E;
  }
  Winner = Candidates.front().Position;
  double Best = -1;
  for (const Candidate &C : Candidates) {
    auto It = Known.find(K.variantConfig(K.Variants[C.Position]));
    if (It == Known.end())
      continue;
    Result.Timings.push_back(It->second);
    if (Best < 0 || It->second.Milliseconds < Best) {
      Best = It->second.Milliseconds;
      Winner = C.Position;
    }
  }
  std::sort(Result.Timings.begin(), Result.Timings.end(),
            [](const VariantTiming &A, const VariantTiming &B) {
              return A.Milliseconds != B.Milliseconds
                         ? A.Milliseconds < B.Milliseconds
                         : A.Variant < B.Variant;
            });
  Result.Seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - Began)
                       .count();
  return Result;
}

/// "NVIDIA H100 80GB HBM3 / sm_90": a device key without the driver
/// version or the host's thread count, which a shipped table may have been
/// measured with.
std::string deviceModel(const std::string &Key) {
  size_t First = Key.find(" / ");
  if (First == std::string::npos)
    return Key;
  size_t Second = Key.find(" / ", First + 3);
  return Key.substr(0, Second);
}

/// log2 of a bucket value's magnitude (buckets are powers of two), with
/// 0 and the sign kept apart.
double bucketLog(int64_t V) {
  if (V == 0)
    return -1000;
  double L = std::log2(std::fabs(double(V)));
  return V < 0 ? -L - 2000 : L;
}

/// "M=4096, N=16" -> {M: 4096, N: 16}.
std::map<std::string, int64_t> parseBucket(const std::string &B) {
  std::map<std::string, int64_t> Out;
  size_t Start = 0;
  while (Start < B.size()) {
    size_t Comma = B.find(", ", Start);
    std::string Item = B.substr(Start, Comma == std::string::npos
                                           ? std::string::npos
                                           : Comma - Start);
    Start = Comma == std::string::npos ? B.size() : Comma + 2;
    size_t Eq = Item.find('=');
    if (Eq != std::string::npos)
      Out[Item.substr(0, Eq)] = std::strtoll(Item.c_str() + Eq + 1, nullptr, 10);
  }
  return Out;
}

/// The shipped table's choice for this device and bucket among the
/// candidates: the entry of this device model (exactly this device key
/// first) in this bucket, else in the nearest bucket (the smallest sum of
/// |log2| distances over the key) whose variant is a candidate.
std::optional<size_t> tableChoice(const KernelInfo &K,
                                  const std::vector<Candidate> &Candidates,
                                  const std::string &DevKey,
                                  const std::string &Bucket) {
  std::string Model = deviceModel(DevKey);
  std::map<std::string, int64_t> Want = parseBucket(Bucket);
  std::optional<size_t> Best;
  double BestScore = 0;
  for (const KernelInfo::TunedChoice &T : K.Tuned) {
    if (deviceModel(T.Device) != Model)
      continue;
    std::optional<size_t> Position;
    for (const Candidate &C : Candidates)
      if (K.variantConfig(K.Variants[C.Position]) == T.Variant)
        Position = C.Position;
    if (!Position)
      continue;
    double Score = T.Device == DevKey ? 0 : 0.5;
    std::map<std::string, int64_t> Have = parseBucket(T.Bucket);
    for (const auto &[Name, V] : Want)
      Score += Have.count(Name)
                   ? std::fabs(bucketLog(V) - bucketLog(Have[Name]))
                   : 1000;
    if (!Best || Score < BestScore) {
      Best = Position;
      BestScore = Score;
    }
  }
  return Best;
}

} // namespace

Expected<TuningChoice> kiln::rt::detail::chooseByTuning(
    ModuleImpl &M, unsigned Kernel, StreamImpl &S, const std::vector<Arg> &Args,
    const std::vector<Candidate> &Candidates, TuningMode Mode, bool &Fatal) {
  size_t Winner = 0;
  TuneOptions Options;
  const KernelInfo &K = M.TheBundle.kernels()[Kernel];
  std::string Bucket = bucketText(K, Args);
  if (!K.Tuned.empty()) {
    // A bundle with a shipped table never measures: the table, else the
    // database's times, else the default.
    TuningChoice C;
    C.Bucket = Bucket;
    if (std::optional<size_t> P =
            tableChoice(K, Candidates, M.TuningDeviceKey, Bucket)) {
      C.Position = *P;
      C.Source = ChoiceSource::Table;
      return C;
    }
    Mode = TuningMode::Cached;
  }
  Expected<TuneResult> R =
      decide(M, Kernel, S, Args, Candidates, Bucket, Mode == TuningMode::Full,
             /*FromLaunch=*/true, Options, Winner, Fatal);
  if (!R)
    return R.takeError();
  TuningChoice C;
  C.Position = Winner;
  C.Bucket = R->Bucket;
  C.Measured = R->MeasuredNow;
  C.Seconds = R->Seconds;
  C.Source = R->Timings.empty() ? ChoiceSource::Default
             : R->MeasuredNow   ? ChoiceSource::Measured
                                : ChoiceSource::Database;
  return C;
}

Expected<TuneResult> kiln::rt::detail::tuneKernel(
    ModuleImpl &M, unsigned Kernel, StreamImpl &S, const std::vector<Arg> &Args,
    const std::vector<Candidate> &Candidates, const TuneOptions &Options) {
  size_t Winner = 0;
  bool Fatal = false;
  return decide(M, Kernel, S, Args, Candidates,
                bucketText(M.TheBundle.kernels()[Kernel], Args),
                /*Measure=*/true, /*FromLaunch=*/false, Options, Winner, Fatal);
}
