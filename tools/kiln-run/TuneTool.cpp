//===- TuneTool.cpp - Tuning sweeps, merge and export ---------------------===//
//
//   TOOL tune SOURCE --kernel NAME --shapes "M=..,N=..;M=..,.." [--set A=V]
//             [--buffer P=EXPR]... [--device D] [--shard I/N] [--db FILE]
//             [--remeasure]
//   TOOL tune merge A.db B.db... -o OUT.db
//   TOOL tune export [--db FILE] [--kernel NAME] -o TABLE.json
//
// A sweep makes its own random inputs for every point (never zeros), tunes
// the kernel there with Kernel::tune (which records every candidate's time
// in the database), and prints one table row per point. docs/tuning.md.
//
//===----------------------------------------------------------------------===//

#include "TuneTool.h"
#include "RunReport.h"

#include "kiln/runtime.h"
#include "kiln/tuning_db.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace kiln::rt;
using namespace kiln::runtool;

namespace {

constexpr int kExitUser = 1;
constexpr int kExitEnv = 2;

struct TuneOptionsCli {
  std::string Tool;
  std::string Source;
  std::string Kernel;
  std::string Shapes;
  std::vector<std::string> Sets;
  std::vector<std::pair<std::string, std::string>> Buffers;
  std::string Device = "auto";
  std::string Db;
  unsigned Shard = 0, Shards = 1;
  bool Remeasure = false;
  std::string Output;
  std::vector<std::string> Inputs; ///< merge
};

struct Reporter {
  std::string Tool;
  int operator()(int Code, const std::string &Message) const {
    std::fprintf(stderr, "%s tune: error: %s\n", Tool.c_str(),
                 Message.c_str());
    return Code;
  }
  int operator()(const Error &E) const {
    bool Env = E.code() == ErrorCode::IO || E.code() == ErrorCode::Driver ||
               E.code() == ErrorCode::OutOfMemory ||
               E.code() == ErrorCode::UnsupportedDevice;
    return (*this)(Env ? kExitEnv : kExitUser, E.message());
  }
};

/// "A=1,B=2" into pairs; false on an item without '='.
bool splitAssignments(const std::string &Text,
                      std::vector<std::pair<std::string, std::string>> &Out,
                      std::string &Bad) {
  size_t Start = 0;
  while (Start <= Text.size()) {
    size_t Comma = Text.find(',', Start);
    std::string Item = Text.substr(
        Start, Comma == std::string::npos ? std::string::npos : Comma - Start);
    Start = Comma == std::string::npos ? Text.size() + 1 : Comma + 1;
    auto Trim = [](std::string S) {
      size_t B = S.find_first_not_of(" \t"), E = S.find_last_not_of(" \t");
      return B == std::string::npos ? std::string() : S.substr(B, E - B + 1);
    };
    Item = Trim(Item);
    if (Item.empty())
      continue;
    size_t Eq = Item.find('=');
    if (Eq == std::string::npos || Eq == 0 || Eq + 1 == Item.size()) {
      Bad = Item;
      return false;
    }
    Out.emplace_back(Trim(Item.substr(0, Eq)), Trim(Item.substr(Eq + 1)));
  }
  return true;
}

/// Random bits of one element of type T: floats uniform in [-1, 1] with
/// no zeros, integers in [1, 8], bools true.
uint64_t randomBits(ScalarType T, std::mt19937_64 &Rng) {
  if (isFloatType(T)) {
    std::uniform_real_distribution<double> U(-1.0, 1.0);
    double V = U(Rng);
    if (std::fabs(V) < 1.0 / 64)
      V = V < 0 ? -0.5 : 0.5;
    return toFloatBits(T, V);
  }
  if (T == ScalarType::Bool)
    return 1;
  return std::uniform_int_distribution<uint64_t>(1, 8)(Rng);
}

std::string usageText(const std::string &Tool) {
  std::string T = Tool + " tune";
  return fmt::format(
      R"(USAGE:
  {0} SOURCE --kernel NAME --shapes "A=1,B=2;A=3,B=4" [options]
                                      measure every variant at each point
  {0} merge A.db B.db... -o OUT.db   merge tuning databases
  {0} export [--db FILE] [--kernel NAME] -o TABLE.json
                                      the winner of every (kernel, device,
                                      key bucket) as JSON

  SOURCE is a bundle ({1}){2}.

TUNE OPTIONS:
  --kernel NAME         the kernel to tune
  --shapes "A=V,...;..."
                        the points: each gives scalar arguments, separated
                        by ';'
  --set A=V,...         scalar arguments common to every point (repeatable)
  --buffer P=EXPR       pointer argument P gets EXPR elements: + - * / ( ),
                        numbers and scalar argument names, e.g. 'M*K'
                        (repeatable; every pointer argument needs one)
  --device DEVICE       auto (default), host, cuda[:N], hip[:N], emu:<arch>
  --shard I/N           only the points whose index is I modulo N (0 <= I
                        < N): one shard per process, GPU or cluster job;
                        then '{0} merge'
  --db FILE             the tuning database (default: $KILN_CACHE_DIR/
                        tuning.db, else $XDG_CACHE_HOME/kiln/tuning.db,
                        else ~/.cache/kiln/tuning.db)
  --remeasure           measure every variant again, even those the
                        database has

  Inputs are random (floats in [-1, 1] without zeros, integers in [1, 8]);
  every point's table row shows the winner, its time, the runner-up and
  the spread (slowest over fastest). Progress goes to standard error: a
  bar on a terminal, one line per point otherwise.
)",
      T,
      Tool == "kiln" ? "a .kpack file, or a .tile file compiled for the host "
                       "and --targets"
                     : "a .kpack file",
      Tool == "kiln" ? "" : "; 'kiln tune' also takes .tile files");
}

//===----------------------------------------------------------------------===//
// merge and export
//===----------------------------------------------------------------------===//

int runMerge(const TuneOptionsCli &O, const Reporter &Fail) {
  if (O.Inputs.empty())
    return Fail(kExitUser, "merge: no input database given");
  if (O.Output.empty())
    return Fail(kExitUser, "merge: no output given: use -o OUT.db");
  Expected<TuningDatabase> Out = TuningDatabase::open(O.Output);
  if (!Out)
    return Fail(Out.error());
  size_t Total = 0;
  for (const std::string &In : O.Inputs) {
    Expected<TuningDatabase> Db = TuningDatabase::open(In, /*Create=*/false);
    if (!Db)
      return Fail(Db.error());
    Expected<std::vector<TuningRow>> Rows = Db->rows();
    if (!Rows)
      return Fail(Rows.error());
    if (Error E = Out->merge(*Rows))
      return Fail(E);
    Total += Rows->size();
    std::fprintf(stderr, "%s tune merge: %zu rows from %s\n", O.Tool.c_str(),
                 Rows->size(), In.c_str());
  }
  Expected<std::vector<TuningRow>> All = Out->rows();
  if (!All)
    return Fail(All.error());
  std::printf("%s: %zu rows (%zu read)\n", O.Output.c_str(), All->size(),
              Total);
  return 0;
}

int runExport(const TuneOptionsCli &O, const Reporter &Fail) {
  if (O.Output.empty())
    return Fail(kExitUser, "export: no output given: use -o TABLE.json");
  std::string Path = O.Db.empty() ? tuningDatabasePath() : O.Db;
  Expected<TuningDatabase> Db = TuningDatabase::open(Path, /*Create=*/false);
  if (!Db)
    return Fail(Db.error());
  Expected<std::vector<TuningRow>> Rows = Db->rows();
  if (!Rows)
    return Fail(Rows.error());
  // (kernel hash, device, bucket) -> its rows, fastest first (rows()
  // orders them so).
  std::map<std::tuple<std::string, std::string, std::string>,
           std::vector<const TuningRow *>>
      Groups;
  for (const TuningRow &R : *Rows)
    if (O.Kernel.empty() || R.Kernel == O.Kernel)
      Groups[{R.KernelHash, R.Device, R.Bucket}].push_back(&R);
  nlohmann::ordered_json Entries = nlohmann::ordered_json::array();
  for (auto &[Key, Group] : Groups) {
    std::sort(Group.begin(), Group.end(),
              [](const TuningRow *A, const TuningRow *B) {
                return A->Milliseconds < B->Milliseconds;
              });
    nlohmann::ordered_json Times = nlohmann::ordered_json::object();
    for (const TuningRow *R : Group)
      Times[R->Variant] = R->Milliseconds;
    Entries.push_back({{"kernel", Group.front()->Kernel},
                       {"hash", std::get<0>(Key)},
                       {"device", std::get<1>(Key)},
                       {"bucket", std::get<2>(Key)},
                       {"winner", Group.front()->Variant},
                       {"milliseconds", Group.front()->Milliseconds},
                       {"variants", std::move(Times)}});
  }
  nlohmann::ordered_json Table = {{"format", "kiln-tuning-table"},
                                  {"version", 1},
                                  {"database", Path},
                                  {"entries", std::move(Entries)}};
  std::string Text = Table.dump(2) + "\n";
  std::string Tmp = O.Output + ".tmp";
  {
    std::ofstream F(Tmp, std::ios::binary | std::ios::trunc);
    F << Text;
    if (!F.flush())
      return Fail(kExitEnv, "cannot write '" + O.Output + "'");
  }
  if (std::rename(Tmp.c_str(), O.Output.c_str()) != 0) {
    std::remove(Tmp.c_str());
    return Fail(kExitEnv, "cannot write '" + O.Output + "': " +
                              std::strerror(errno));
  }
  std::printf("%s: %zu entries\n", O.Output.c_str(), Groups.size());
  return 0;
}

//===----------------------------------------------------------------------===//
// Sweeps
//===----------------------------------------------------------------------===//

/// One point's arguments and buffers.
struct Point {
  std::string Label; ///< "M=4096, N=4096"
  std::vector<std::pair<std::string, std::string>> Scalars;
};

struct Row {
  std::string Shape, Winner, Time, RunnerUp, Spread, Measured;
};

/// Checks the sweep's names against the kernel: every scalar given once,
/// every pointer with a --buffer; an error lists what is missing.
std::optional<int> checkNames(const TuneOptionsCli &O, const KernelInfo &K,
                              const std::vector<Point> &Points,
                              const std::map<std::string, FlopsExpr> &Counts,
                              const Reporter &Fail) {
  std::vector<std::string> Scalars, Pointers;
  for (const ParamInfo &P : K.Params)
    (P.Type.IsPointer ? Pointers : Scalars).push_back(P.Name);
  auto Known = [&](const std::string &N, const std::vector<std::string> &In) {
    return std::find(In.begin(), In.end(), N) != In.end();
  };
  for (const Point &Pt : Points)
    for (const auto &[Name, Value] : Pt.Scalars)
      if (!Known(Name, Scalars)) {
        std::string Near = nearestName(Name, Scalars);
        return Fail(kExitUser,
                    "kernel '" + K.Name + "' has no scalar argument '" + Name +
                        "'" + (Near.empty() ? "" : "; did you mean '" + Near +
                                                       "'?") +
                        " (scalar arguments: " + fmt::format("{}", fmt::join(Scalars, ", ")) +
                        ")");
      }
  for (const Point &Pt : Points) {
    std::vector<std::string> Missing;
    for (const std::string &S : Scalars) {
      bool Given = false;
      for (const auto &A : Pt.Scalars)
        Given |= A.first == S;
      if (!Given)
        Missing.push_back(S);
    }
    if (!Missing.empty())
      return Fail(kExitUser,
                  fmt::format("point '{}' does not give the scalar argument{} "
                              "{} (use --shapes or --set)",
                              Pt.Label, Missing.size() == 1 ? "" : "s",
                              fmt::join(Missing, ", ")));
  }
  std::vector<std::string> NoBuffer;
  for (const std::string &P : Pointers)
    if (!Counts.count(P))
      NoBuffer.push_back(P);
  if (!NoBuffer.empty())
    return Fail(kExitUser,
                fmt::format("no --buffer for the pointer argument{} {} (e.g. "
                            "--buffer {}=N: its element count)",
                            NoBuffer.size() == 1 ? "" : "s",
                            fmt::join(NoBuffer, ", "), NoBuffer.front()));
  for (const auto &[Name, Expr] : Counts) {
    if (!Known(Name, Pointers)) {
      std::string Near = nearestName(Name, Pointers);
      return Fail(kExitUser,
                  "--buffer names '" + Name + "', which is not a pointer "
                  "argument of '" + K.Name + "'" +
                      (Near.empty() ? "" : "; did you mean '" + Near + "'?"));
    }
    for (const std::string &N : Expr.names())
      if (!Known(N, Scalars))
        return Fail(kExitUser, "--buffer " + Name + "='" + Expr.text() +
                                   "': '" + N +
                                   "' is not a scalar argument of '" + K.Name +
                                   "'");
  }
  return std::nullopt;
}

/// The progress line of point I of N.
void progress(bool Terminal, size_t I, size_t N, const std::string &Label,
              const std::string &Status) {
  if (Terminal) {
    constexpr size_t Width = 24;
    size_t Done = N ? I * Width / N : Width;
    std::string Bar = std::string(Done, '=') +
                      (Done < Width ? ">" + std::string(Width - Done - 1, ' ')
                                    : "");
    std::fprintf(stderr, "\r\033[K[%s] %zu/%zu %s %s", Bar.c_str(), I, N,
                 Label.c_str(), Status.c_str());
    if (I == N)
      std::fprintf(stderr, "\n");
  } else if (!Status.empty()) {
    std::fprintf(stderr, "tune: [%zu/%zu] %s: %s\n", I, N, Label.c_str(),
                 Status.c_str());
  }
  std::fflush(stderr);
}

int runSweep(const TuneOptionsCli &O, const std::string *InMemory,
             const std::string &Label, const Reporter &Fail) {
  if (O.Kernel.empty())
    return Fail(kExitUser, "no kernel given: use --kernel NAME");
  if (O.Shapes.empty() && O.Sets.empty())
    return Fail(kExitUser, "no points given: use --shapes \"A=1,B=2;...\"");
  // The points.
  std::vector<std::pair<std::string, std::string>> Common;
  for (const std::string &S : O.Sets) {
    std::string Bad;
    if (!splitAssignments(S, Common, Bad))
      return Fail(kExitUser, "--set: '" + Bad + "' is not NAME=VALUE");
  }
  for (size_t A = 0; A < Common.size(); ++A)
    for (size_t B = 0; B < A; ++B)
      if (Common[A].first == Common[B].first)
        return Fail(kExitUser, "--set gives '" + Common[A].first + "' twice");
  std::vector<Point> Points;
  size_t Start = 0;
  std::string Shapes = O.Shapes.empty() ? std::string(";") : O.Shapes;
  while (Start <= Shapes.size()) {
    size_t Semi = Shapes.find(';', Start);
    std::string Item = Shapes.substr(
        Start, Semi == std::string::npos ? std::string::npos : Semi - Start);
    Start = Semi == std::string::npos ? Shapes.size() + 1 : Semi + 1;
    Point P;
    std::string Bad;
    if (!splitAssignments(Item, P.Scalars, Bad))
      return Fail(kExitUser, "--shapes: '" + Bad + "' is not NAME=VALUE");
    if (P.Scalars.empty() && !O.Shapes.empty())
      continue;
    for (size_t A = 0; A < P.Scalars.size(); ++A)
      for (size_t B = 0; B < A; ++B)
        if (P.Scalars[A].first == P.Scalars[B].first)
          return Fail(kExitUser, "--shapes: a point gives '" +
                                     P.Scalars[A].first + "' twice");
    std::vector<std::string> Parts;
    for (const auto &[N, V] : P.Scalars)
      Parts.push_back(N + "=" + V);
    P.Label = Parts.empty() ? "(--set only)"
                            : fmt::format("{}", fmt::join(Parts, ", "));
    for (const auto &C : Common) {
      bool Shadowed = false;
      for (const auto &A : P.Scalars)
        Shadowed |= A.first == C.first;
      if (Shadowed)
        return Fail(kExitUser, "'" + C.first + "' is given by both --set and "
                               "--shapes ('" + P.Label + "')");
      P.Scalars.push_back(C);
    }
    Points.push_back(std::move(P));
    if (O.Shapes.empty())
      break;
  }
  if (Points.empty())
    return Fail(kExitUser, "--shapes gives no point");
  std::map<std::string, FlopsExpr> Counts;
  for (const auto &[Name, Text] : O.Buffers) {
    Expected<FlopsExpr> E = FlopsExpr::parse(Text);
    if (!E)
      return Fail(kExitUser, "--buffer " + Name + "='" + Text +
                                 "': " + E.error().message());
    if (!Counts.emplace(Name, std::move(*E)).second)
      return Fail(kExitUser, "--buffer names '" + Name + "' twice");
  }

  // The device, the bundle, the kernel.
  if (!O.Db.empty())
    setTuningDatabase(O.Db);
  Expected<Device> Dev = Device::open(O.Device);
  if (!Dev)
    return Fail(Dev.error());
  Expected<Module> Mod =
      InMemory ? Dev->loadModuleMemory(InMemory->data(), InMemory->size(), Label)
               : Dev->loadModuleFile(O.Source);
  if (!Mod)
    return Fail(Mod.error());
  Expected<Kernel> K = Mod->kernel(O.Kernel);
  if (!K)
    return Fail(K.error());
  const KernelInfo &Info = K->info();
  if (auto Rc = checkNames(O, Info, Points, Counts, Fail))
    return *Rc;
  Expected<Stream> S = Dev->createStream();
  if (!S)
    return Fail(S.error());

  std::printf("tuning %s on %s, %zu variant%s, database %s%s\n",
              Info.Name.c_str(), Dev->description().c_str(),
              Info.Variants.size(), Info.Variants.size() == 1 ? "" : "s",
              tuningDatabasePath().c_str(),
              O.Shards > 1
                  ? fmt::format(", shard {}/{}", O.Shard, O.Shards).c_str()
                  : "");
  std::fflush(stdout);

  bool Terminal = isatty(2);
  std::mt19937_64 Rng(std::random_device{}());
  std::vector<Row> Rows;
  int Code = 0;
  size_t Mine = 0;
  for (size_t I = 0; I < Points.size(); ++I)
    Mine += I % O.Shards == O.Shard;
  size_t Done = 0;
  for (size_t I = 0; I < Points.size(); ++I) {
    if (I % O.Shards != O.Shard)
      continue;
    const Point &Pt = Points[I];
    progress(Terminal, Done, Mine, Pt.Label, "");
    auto PointFailed = [&](const std::string &Why) {
      Code = kExitUser;
      progress(Terminal, ++Done, Mine, Pt.Label, "failed");
      std::fprintf(stderr, "%s tune: error: %s: %s\n", O.Tool.c_str(),
                   Pt.Label.c_str(), Why.c_str());
      Rows.push_back({Pt.Label, "failed", "-", "-", "-", "-"});
    };
    // Scalars first (buffer sizes read them), then the buffers.
    std::vector<Arg> Args(Info.Params.size(), Arg::i32(0));
    std::map<std::string, double> Values;
    std::string Bad;
    for (size_t P = 0; P < Info.Params.size() && Bad.empty(); ++P) {
      const ParamInfo &Param = Info.Params[P];
      if (Param.Type.IsPointer)
        continue;
      for (const auto &[Name, Text] : Pt.Scalars)
        if (Name == Param.Name) {
          Expected<Arg> A = parseScalar(Param, Text);
          if (!A) {
            Bad = A.error().message();
            break;
          }
          Args[P] = *A;
          Values[Name] = isFloatType(A->type())
                             ? floatValue(A->type(), A->bits())
                         : isSignedType(A->type()) ? double(A->asInt64())
                                                   : double(A->bits());
        }
    }
    if (!Bad.empty()) {
      PointFailed(Bad);
      continue;
    }
    std::vector<Buffer> Buffers;
    for (size_t P = 0; P < Info.Params.size() && Bad.empty(); ++P) {
      const ParamInfo &Param = Info.Params[P];
      if (!Param.Type.IsPointer)
        continue;
      const FlopsExpr &E = Counts.at(Param.Name);
      Expected<double> N = E.evaluate(Values);
      if (!N) {
        Bad = "--buffer " + Param.Name + "='" + E.text() +
              "': " + N.error().message();
        break;
      }
      if (!std::isfinite(*N) || *N < 1 || *N > 1e12 ||
          *N != std::floor(*N)) {
        Bad = "--buffer " + Param.Name + "='" + E.text() + "' gives " +
              formatShort(*N) + " elements (a whole number from 1 is needed)";
        break;
      }
      size_t Count = size_t(*N), Size = typeSize(Param.Type.Element);
      Expected<Buffer> B = Dev->allocate(Count * Size);
      if (!B) {
        Bad = "--buffer " + Param.Name + ": " + B.error().message();
        break;
      }
      // Filled in chunks of at most 64 MiB from the host.
      size_t Chunk = std::min<size_t>(Count, (size_t(64) << 20) / Size);
      std::vector<uint8_t> Host;
      try {
        Host.resize(Chunk * Size);
      } catch (const std::bad_alloc &) {
        Bad = "--buffer " + Param.Name + ": out of host memory";
        break;
      }
      for (size_t Done = 0; Done < Count && Bad.empty(); Done += Chunk) {
        size_t N = std::min(Chunk, Count - Done);
        for (size_t J = 0; J < N; ++J) {
          uint64_t Bits = randomBits(Param.Type.Element, Rng);
          std::memcpy(Host.data() + J * Size, &Bits, Size);
        }
        if (Error Err = S->copyToDevice(*B, Done * Size, Host.data(), N * Size))
          Bad = Err.message();
      }
      if (Error Err = S->synchronize())
        Bad = Err.message();
      if (!Bad.empty())
        break;
      Args[P] = Arg::pointer(*B, Param.Type.Element);
      Buffers.push_back(std::move(*B));
    }
    if (!Bad.empty()) {
      PointFailed(Bad);
      continue;
    }
    TuneOptions TO;
    TO.Remeasure = O.Remeasure;
    Expected<TuneResult> R = K->tune(*S, Args, TO);
    if (!R) {
      PointFailed(R.error().message());
      continue;
    }
    Row Out;
    Out.Shape = Pt.Label;
    if (R->Timings.empty()) {
      PointFailed("no variant could be measured" +
                  (R->Failures.empty() ? std::string()
                                       : ": " + R->Failures.front()));
      continue;
    }
    const VariantTiming &Best = R->Timings.front();
    Out.Winner = Best.Config;
    Out.Time = fmt::format("{:.4f}", Best.Milliseconds);
    // Ratios over a time of at least a nanosecond.
    double BestMs = std::max(Best.Milliseconds, 1e-6);
    Out.RunnerUp =
        R->Timings.size() > 1
            ? fmt::format("{} (+{:.1f}%)", R->Timings[1].Config,
                          100.0 * (R->Timings[1].Milliseconds / BestMs - 1))
            : "-";
    Out.Spread =
        fmt::format("{:.2f}x", R->Timings.back().Milliseconds / BestMs);
    Out.Measured = fmt::format("{} of {}{}", R->MeasuredNow, R->Candidates,
                               R->Failures.empty()
                                   ? ""
                                   : fmt::format(", {} failed",
                                                 R->Failures.size()));
    progress(Terminal, ++Done, Mine, Pt.Label,
             fmt::format("{} {} ms ({} measured, {:.2f} s)", Out.Winner,
                         Out.Time, R->MeasuredNow, R->Seconds));
    Rows.push_back(std::move(Out));
  }

  // The table.
  Row Head{"shape", "winner", "ms", "runner-up", "spread", "measured"};
  size_t W[6] = {};
  auto Widen = [&](const Row &R) {
    const std::string *F[6] = {&R.Shape,    &R.Winner, &R.Time,
                               &R.RunnerUp, &R.Spread, &R.Measured};
    for (int C = 0; C < 6; ++C)
      W[C] = std::max(W[C], F[C]->size());
  };
  Widen(Head);
  for (const Row &R : Rows)
    Widen(R);
  auto Print = [&](const Row &R) {
    std::printf("%s\n", fmt::format("{:<{}}  {:<{}}  {:>{}}  {:<{}}  {:>{}}  "
                                    "{:<{}}",
                                    R.Shape, W[0], R.Winner, W[1], R.Time,
                                    W[2], R.RunnerUp, W[3], R.Spread, W[4],
                                    R.Measured, W[5])
                            .c_str());
  };
  Print(Head);
  Print({std::string(W[0], '-'), std::string(W[1], '-'),
         std::string(W[2], '-'), std::string(W[3], '-'),
         std::string(W[4], '-'), std::string(W[5], '-')});
  for (const Row &R : Rows)
    Print(R);
  return Code;
}

} // namespace

std::string kiln::runtool::tuneUsage(const std::string &Tool) {
  return usageText(Tool);
}

int kiln::runtool::runTuneTool(const std::string &Tool, int Argc, char **Argv,
                               const std::string *Bundle,
                               const std::string &Label) {
  Reporter Fail{Tool};
  TuneOptionsCli O;
  O.Tool = Tool;
  std::string Mode = "sweep";
  int I = 1;
  if (I < Argc && (std::strcmp(Argv[I], "merge") == 0 ||
                   std::strcmp(Argv[I], "export") == 0))
    Mode = Argv[I++];
  for (; I < Argc; ++I) {
    std::string A = Argv[I];
    auto Value = [&](const char *Flag) -> std::optional<std::string> {
      std::string F = Flag;
      if (A.rfind(F + "=", 0) == 0)
        return A.substr(F.size() + 1);
      // The next argument, unless it is another option.
      if (A == F && I + 1 < Argc && std::strncmp(Argv[I + 1], "--", 2) != 0)
        return std::string(Argv[++I]);
      return std::nullopt;
    };
    auto Is = [&](const char *Flag) {
      return A == Flag || A.rfind(std::string(Flag) + "=", 0) == 0;
    };
    std::optional<std::string> V;
    if (A == "--help" || A == "-h") {
      std::printf("%s", usageText(Tool).c_str());
      return 0;
    } else if (A == "--remeasure") {
      O.Remeasure = true;
    } else if (Is("--kernel") || Is("--shapes") || Is("--set") ||
               Is("--buffer") || Is("--device") || Is("--db") ||
               Is("--shard") || A == "-o") {
      std::string Flag = A.substr(0, A.find('='));
      V = Value(Flag.c_str());
      if (!V || V->empty())
        return Fail(kExitUser, Flag + " needs a value");
      if (Flag == "--kernel")
        O.Kernel = *V;
      else if (Flag == "--shapes")
        O.Shapes = *V;
      else if (Flag == "--set")
        O.Sets.push_back(*V);
      else if (Flag == "--device")
        O.Device = *V;
      else if (Flag == "--db")
        O.Db = *V;
      else if (Flag == "-o")
        O.Output = *V;
      else if (Flag == "--buffer") {
        size_t Eq = V->find('=');
        if (Eq == std::string::npos || Eq == 0 || Eq + 1 == V->size())
          return Fail(kExitUser, "--buffer expects NAME=EXPR, found '" + *V +
                                     "'");
        O.Buffers.emplace_back(V->substr(0, Eq), V->substr(Eq + 1));
      } else { // --shard
        unsigned Sh = 0, N = 0;
        char Extra;
        if (std::sscanf(V->c_str(), "%u/%u%c", &Sh, &N, &Extra) != 2 ||
            N == 0 || Sh >= N)
          return Fail(kExitUser, "--shard expects I/N with 0 <= I < N, found '" +
                                     *V + "'");
        O.Shard = Sh;
        O.Shards = N;
      }
    } else if (!A.empty() && A[0] == '-') {
      return Fail(kExitUser, "unknown option '" + A + "' (see '" + Tool +
                                 " tune --help')");
    } else if (Mode == "merge") {
      O.Inputs.push_back(A);
    } else if (O.Source.empty() && Mode == "sweep" && !Bundle) {
      O.Source = A;
    } else {
      return Fail(kExitUser, "unexpected argument '" + A + "'");
    }
  }
  if (Mode == "merge")
    return runMerge(O, Fail);
  if (Mode == "export")
    return runExport(O, Fail);
  if (!Bundle && O.Source.empty())
    return Fail(kExitUser, "no bundle given (see '" + Tool + " tune --help')");
  return runSweep(O, Bundle, Label, Fail);
}
