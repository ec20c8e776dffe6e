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
#include <array>
#include <cctype>
#include <cerrno>
#include <iterator>
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
  std::string Sweep;  ///< --sweep FILE
  std::string Report; ///< --report FILE.svg
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
std::string trim(const std::string &S) {
  size_t B = S.find_first_not_of(" \t"), E = S.find_last_not_of(" \t");
  return B == std::string::npos ? std::string() : S.substr(B, E - B + 1);
}

/// The non-empty items of `Text` between `Sep`s, trimmed.
std::vector<std::string> splitList(const std::string &Text, char Sep) {
  std::vector<std::string> Out;
  size_t Start = 0;
  while (Start <= Text.size()) {
    size_t End = Text.find(Sep, Start);
    if (End == std::string::npos)
      End = Text.size();
    if (std::string Item = trim(Text.substr(Start, End - Start)); !Item.empty())
      Out.push_back(std::move(Item));
    Start = End + 1;
  }
  return Out;
}

/// Writes `Text` to `Path` through a temporary file renamed over it, so
/// that a failure leaves no half-written file; "" or what went wrong.
std::string writeFileAtomically(const std::string &Path,
                                const std::string &Text) {
  std::string Tmp = Path + ".tmp";
  {
    std::ofstream F(Tmp, std::ios::binary | std::ios::trunc);
    F << Text;
    if (!F.flush()) {
      std::remove(Tmp.c_str());
      return "cannot write '" + Path + "'";
    }
  }
  if (std::rename(Tmp.c_str(), Path.c_str()) != 0) {
    std::string Why = std::strerror(errno);
    std::remove(Tmp.c_str());
    return "cannot write '" + Path + "': " + Why;
  }
  return "";
}

bool splitAssignments(const std::string &Text,
                      std::vector<std::pair<std::string, std::string>> &Out,
                      std::string &Bad) {
  for (const std::string &Item : splitList(Text, ',')) {
    size_t Eq = Item.find('=');
    if (Eq == std::string::npos || Eq == 0 || Eq + 1 == Item.size()) {
      Bad = Item;
      return false;
    }
    Out.emplace_back(trim(Item.substr(0, Eq)), trim(Item.substr(Eq + 1)));
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
  {0} --sweep SWEEP.json [options]   the same for many kernels at once
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
  --sweep FILE          a sweep file: {{"sweeps": [{{"source": "matmul.kpack",
                        "kernel": "matmul", "shapes": ["M=64,N=64,K=64", ...],
                        "set": {{"lda": 64}}, "buffers": {{"a": "M*K"}},
                        "targets": ["host"], "pins": {{"warps": 4}}}}, ...]}}
                        (docs/tuning.md); --shard counts the points of all
                        its sweeps
  --report FILE.svg     draw the sweep: per kernel, every variant's time over
                        the best at each point, coloured, the winner outlined
  --targets=T,... , -D NAME=VALUE
                        for a .tile SOURCE: its targets (default host) and
                        pins, as kiln compile takes them

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
  if (std::string Why = writeFileAtomically(O.Output, Table.dump(2) + "\n");
      !Why.empty())
    return Fail(kExitEnv, Why);
  std::printf("%s: %zu entries\n", O.Output.c_str(), Groups.size());
  return 0;
}

//===----------------------------------------------------------------------===//
// Sweeps
//===----------------------------------------------------------------------===//

/// One point's scalar arguments.
struct Point {
  std::string Label; ///< "M=4096, N=4096"
  std::vector<std::pair<std::string, std::string>> Scalars;
};

/// One kernel's part of a sweep: from the command line or a sweep file.
struct SweepSpec {
  std::string Source; ///< a bundle, or a .tile file (compiled by `kiln`)
  std::string Kernel;
  std::vector<Point> Points;
  std::map<std::string, FlopsExpr> Counts;
  std::vector<std::string> Targets;                  ///< .tile sources only
  std::vector<std::pair<std::string, int64_t>> Pins; ///< .tile sources only
  std::string Where; ///< "sweep.json, sweep 2: " or "" (for messages)
};

/// One point's outcome.
struct PointResult {
  size_t Spec = 0;
  std::string Label;
  std::optional<TuneResult> Result;
  std::string Error;
};

struct Row {
  std::string Kernel, Shape, Winner, Time, RunnerUp, Spread, Measured;
};

/// Splits `Shapes` (';' between points) into points and adds `Common` to
/// each; "" on success, else what is wrong.
std::string makePoints(const std::vector<std::string> &Shapes,
                       const std::vector<std::pair<std::string, std::string>>
                           &Common,
                       std::vector<Point> &Out) {
  for (size_t A = 0; A < Common.size(); ++A)
    for (size_t B = 0; B < A; ++B)
      if (Common[A].first == Common[B].first)
        return "--set gives '" + Common[A].first + "' twice";
  std::vector<std::string> Items = Shapes;
  if (Items.empty())
    Items.push_back("");
  for (const std::string &Item : Items) {
    Point P;
    std::string Bad;
    if (!splitAssignments(Item, P.Scalars, Bad))
      return "--shapes: '" + Bad + "' is not NAME=VALUE";
    if (P.Scalars.empty() && Shapes.size() > 0 && !Item.empty())
      continue;
    for (size_t A = 0; A < P.Scalars.size(); ++A)
      for (size_t B = 0; B < A; ++B)
        if (P.Scalars[A].first == P.Scalars[B].first)
          return "--shapes: a point gives '" + P.Scalars[A].first + "' twice";
    std::vector<std::string> Parts;
    for (const auto &[N, V] : P.Scalars)
      Parts.push_back(N + "=" + V);
    P.Label = Parts.empty() ? "(--set only)"
                            : fmt::format("{}", fmt::join(Parts, ", "));
    for (const auto &C : Common) {
      for (const auto &A : P.Scalars)
        if (A.first == C.first)
          return "'" + C.first + "' is given by both --set and --shapes ('" +
                 P.Label + "')";
      P.Scalars.push_back(C);
    }
    Out.push_back(std::move(P));
  }
  if (Out.empty())
    return "--shapes gives no point";
  return "";
}

/// Parses the --buffer texts; "" on success.
std::string makeCounts(
    const std::vector<std::pair<std::string, std::string>> &Texts,
    std::map<std::string, FlopsExpr> &Counts) {
  for (const auto &[Name, Text] : Texts) {
    Expected<FlopsExpr> E = FlopsExpr::parse(Text);
    if (!E)
      return "--buffer " + Name + "='" + Text + "': " + E.error().message();
    if (!Counts.emplace(Name, std::move(*E)).second)
      return "--buffer names '" + Name + "' twice";
  }
  return "";
}

/// Reads a sweep file (docs/tuning.md, "Sweep files"); "" on success.
std::string readSweepFile(const std::string &Path,
                          std::vector<SweepSpec> &Specs) {
  std::ifstream F(Path, std::ios::binary);
  if (!F)
    return "cannot read sweep file '" + Path + "': " + std::strerror(errno);
  std::string Text((std::istreambuf_iterator<char>(F)),
                   std::istreambuf_iterator<char>());
  nlohmann::ordered_json J = nlohmann::ordered_json::parse(Text, nullptr, false);
  if (J.is_discarded())
    return "sweep file '" + Path + "' is not valid JSON";
  if (!J.is_object() || !J.contains("sweeps") || !J["sweeps"].is_array() ||
      J["sweeps"].empty())
    return "sweep file '" + Path +
           "' needs a non-empty \"sweeps\" array (docs/tuning.md)";
  std::string Dir;
  if (size_t Slash = Path.rfind('/'); Slash != std::string::npos)
    Dir = Path.substr(0, Slash + 1);
  size_t Index = 0;
  for (const nlohmann::ordered_json &S : J["sweeps"]) {
    SweepSpec Spec;
    Spec.Where = fmt::format("{}, sweep {}: ", Path, Index++);
    auto Bad = [&](const std::string &Why) { return Spec.Where + Why; };
    if (!S.is_object())
      return Bad("not an object");
    static const std::set<std::string> Keys = {
        "source", "kernel", "shapes", "set", "buffers", "targets", "pins"};
    for (auto It = S.begin(); It != S.end(); ++It)
      if (!Keys.count(It.key()))
        return Bad("unknown key '" + It.key() +
                   "' (keys: source, kernel, shapes, set, buffers, targets, "
                   "pins)");
    auto String = [&](const char *Key, std::string &Out) {
      if (!S.contains(Key) || !S[Key].is_string() ||
          S[Key].get<std::string>().empty())
        return false;
      Out = S[Key].get<std::string>();
      return true;
    };
    if (!String("source", Spec.Source))
      return Bad("needs a string \"source\" (a bundle or a .tile file)");
    if (Spec.Source[0] != '/')
      Spec.Source = Dir + Spec.Source;
    if (!String("kernel", Spec.Kernel))
      return Bad("needs a string \"kernel\"");
    // "A=1,B=2" strings or {"A": 1} objects; values as written.
    auto Assignments = [&](const nlohmann::ordered_json &V, std::string &Out) {
      if (V.is_string()) {
        Out = V.get<std::string>();
        return true;
      }
      if (!V.is_object())
        return false;
      std::vector<std::string> Parts;
      for (auto It = V.begin(); It != V.end(); ++It) {
        if (It->is_string())
          Parts.push_back(It.key() + "=" + It->get<std::string>());
        else if (It->is_number() || It->is_boolean())
          Parts.push_back(It.key() + "=" + It->dump());
        else
          return false;
      }
      Out = fmt::format("{}", fmt::join(Parts, ","));
      return true;
    };
    std::vector<std::string> Shapes;
    if (S.contains("shapes")) {
      if (!S["shapes"].is_array())
        return Bad("\"shapes\" must be an array of points");
      for (const nlohmann::ordered_json &P : S["shapes"]) {
        std::string Item;
        if (!Assignments(P, Item))
          return Bad("a point of \"shapes\" is not \"A=1,B=2\" or "
                     "{\"A\": 1, \"B\": 2}");
        Shapes.push_back(Item);
      }
    }
    std::vector<std::pair<std::string, std::string>> Common;
    if (S.contains("set")) {
      std::string Item, BadItem;
      if (!Assignments(S["set"], Item) ||
          !splitAssignments(Item, Common, BadItem))
        return Bad("\"set\" is not \"A=1,B=2\" or {\"A\": 1, \"B\": 2}");
    }
    if (std::string E = makePoints(Shapes, Common, Spec.Points); !E.empty())
      return Bad(E);
    std::vector<std::pair<std::string, std::string>> Buffers;
    if (S.contains("buffers")) {
      if (!S["buffers"].is_object())
        return Bad("\"buffers\" must map pointer arguments to element "
                   "counts ({\"a\": \"M*K\"})");
      for (auto It = S["buffers"].begin(); It != S["buffers"].end(); ++It) {
        if (It->is_string())
          Buffers.emplace_back(It.key(), It->get<std::string>());
        else if (It->is_number_integer())
          Buffers.emplace_back(It.key(), It->dump());
        else
          return Bad("buffer '" + It.key() + "' needs an expression string");
      }
    }
    if (std::string E = makeCounts(Buffers, Spec.Counts); !E.empty())
      return Bad(E);
    if (S.contains("targets")) {
      const nlohmann::ordered_json &T = S["targets"];
      if (T.is_string())
        Spec.Targets.push_back(T.get<std::string>());
      else if (T.is_array() && std::all_of(T.begin(), T.end(),
                                           [](const nlohmann::ordered_json &X) {
                                             return X.is_string();
                                           }))
        for (const nlohmann::ordered_json &X : T)
          Spec.Targets.push_back(X.get<std::string>());
      else
        return Bad("\"targets\" must be a string or an array of strings");
    }
    if (S.contains("pins")) {
      if (!S["pins"].is_object())
        return Bad("\"pins\" must map const params to integers");
      for (auto It = S["pins"].begin(); It != S["pins"].end(); ++It) {
        if (!It->is_number_integer())
          return Bad("pin '" + It.key() + "' must be an integer");
        Spec.Pins.emplace_back(It.key(), It->get<int64_t>());
      }
    }
    Specs.push_back(std::move(Spec));
  }
  return "";
}

/// Checks a spec's names against its kernel: every scalar given, every
/// pointer with a buffer; "" on success, else what is missing.
std::string checkNames(const SweepSpec &Spec, const KernelInfo &K) {
  std::vector<std::string> Scalars, Pointers;
  for (const ParamInfo &P : K.Params)
    (P.Type.IsPointer ? Pointers : Scalars).push_back(P.Name);
  auto Known = [&](const std::string &N, const std::vector<std::string> &In) {
    return std::find(In.begin(), In.end(), N) != In.end();
  };
  for (const Point &Pt : Spec.Points)
    for (const auto &[Name, Value] : Pt.Scalars)
      if (!Known(Name, Scalars)) {
        std::string Near = nearestName(Name, Scalars);
        return "kernel '" + K.Name + "' has no scalar argument '" + Name +
               "'" + (Near.empty() ? "" : "; did you mean '" + Near + "'?") +
               " (scalar arguments: " +
               fmt::format("{}", fmt::join(Scalars, ", ")) + ")";
      }
  for (const Point &Pt : Spec.Points) {
    std::vector<std::string> Missing;
    for (const std::string &S : Scalars) {
      bool Given = false;
      for (const auto &A : Pt.Scalars)
        Given |= A.first == S;
      if (!Given)
        Missing.push_back(S);
    }
    if (!Missing.empty())
      return fmt::format("point '{}' does not give the scalar argument{} {} "
                         "(use --shapes or --set)",
                         Pt.Label, Missing.size() == 1 ? "" : "s",
                         fmt::join(Missing, ", "));
  }
  std::vector<std::string> NoBuffer;
  for (const std::string &P : Pointers)
    if (!Spec.Counts.count(P))
      NoBuffer.push_back(P);
  if (!NoBuffer.empty())
    return fmt::format("no --buffer for the pointer argument{} {} (e.g. "
                       "--buffer {}=N: its element count)",
                       NoBuffer.size() == 1 ? "" : "s",
                       fmt::join(NoBuffer, ", "), NoBuffer.front());
  for (const auto &[Name, Expr] : Spec.Counts) {
    if (!Known(Name, Pointers)) {
      std::string Near = nearestName(Name, Pointers);
      return "--buffer names '" + Name + "', which is not a pointer "
             "argument of '" + K.Name + "'" +
             (Near.empty() ? "" : "; did you mean '" + Near + "'?");
    }
    for (const std::string &N : Expr.names())
      if (!Known(N, Scalars))
        return "--buffer " + Name + "='" + Expr.text() + "': '" + N +
               "' is not a scalar argument of '" + K.Name + "'";
  }
  return "";
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

/// Makes the arguments of one point (random buffers); "" on success.
std::string makeArgs(const SweepSpec &Spec, const Point &Pt,
                     const KernelInfo &Info, Device &Dev, Stream &S,
                     std::mt19937_64 &Rng, std::vector<Arg> &Args,
                     std::vector<Buffer> &Buffers) {
  Args.assign(Info.Params.size(), Arg::i32(0));
  std::map<std::string, double> Values;
  for (size_t P = 0; P < Info.Params.size(); ++P) {
    const ParamInfo &Param = Info.Params[P];
    if (Param.Type.IsPointer)
      continue;
    for (const auto &[Name, Text] : Pt.Scalars)
      if (Name == Param.Name) {
        Expected<Arg> A = parseScalar(Param, Text);
        if (!A)
          return A.error().message();
        Args[P] = *A;
        Values[Name] = isFloatType(A->type()) ? floatValue(A->type(), A->bits())
                       : isSignedType(A->type()) ? double(A->asInt64())
                                                 : double(A->bits());
      }
  }
  for (size_t P = 0; P < Info.Params.size(); ++P) {
    const ParamInfo &Param = Info.Params[P];
    if (!Param.Type.IsPointer)
      continue;
    const FlopsExpr &E = Spec.Counts.at(Param.Name);
    Expected<double> N = E.evaluate(Values);
    if (!N)
      return "--buffer " + Param.Name + "='" + E.text() +
             "': " + N.error().message();
    if (!std::isfinite(*N) || *N < 1 || *N > 1e12 || *N != std::floor(*N))
      return "--buffer " + Param.Name + "='" + E.text() + "' gives " +
             formatShort(*N) + " elements (a whole number from 1 is needed)";
    size_t Count = size_t(*N), Size = typeSize(Param.Type.Element);
    Expected<Buffer> B = Dev.allocate(Count * Size);
    if (!B)
      return "--buffer " + Param.Name + ": " + B.error().message();
    // Filled in chunks of at most 64 MiB from the host.
    size_t Chunk = std::min<size_t>(Count, (size_t(64) << 20) / Size);
    std::vector<uint8_t> Host;
    try {
      Host.resize(Chunk * Size);
    } catch (const std::bad_alloc &) {
      return "--buffer " + Param.Name + ": out of host memory";
    }
    for (size_t Done = 0; Done < Count; Done += Chunk) {
      size_t M = std::min(Chunk, Count - Done);
      for (size_t J = 0; J < M; ++J) {
        uint64_t Bits = randomBits(Param.Type.Element, Rng);
        std::memcpy(Host.data() + J * Size, &Bits, Size);
      }
      if (Error Err = S.copyToDevice(*B, Done * Size, Host.data(), M * Size))
        return Err.message();
      if (Error Err = S.synchronize())
        return Err.message();
    }
    Args[P] = Arg::pointer(*B, Param.Type.Element);
    Buffers.push_back(std::move(*B));
  }
  return "";
}

/// "&amp;" and friends.
std::string xml(const std::string &Text) {
  std::string Out;
  for (char C : Text)
    switch (C) {
    case '&': Out += "&amp;"; break;
    case '<': Out += "&lt;"; break;
    case '>': Out += "&gt;"; break;
    case '"': Out += "&quot;"; break;
    default: Out += C;
    }
  return Out;
}

/// The colour of a time `Ratio` times the point's best: green at 1,
/// yellow at sqrt(3), red from 3 on (log scale).
std::string ratioColour(double Ratio) {
  double X = std::clamp(std::log(std::max(Ratio, 1.0)) / std::log(3.0), 0.0,
                        1.0);
  struct Rgb {
    double R, G, B;
  } Green{46, 160, 67}, Yellow{250, 204, 60}, Red{214, 39, 40};
  Rgb A = X < 0.5 ? Green : Yellow, B = X < 0.5 ? Yellow : Red;
  double T = X < 0.5 ? X * 2 : (X - 0.5) * 2;
  return fmt::format("rgb({},{},{})", int(A.R + (B.R - A.R) * T),
                     int(A.G + (B.G - A.G) * T), int(A.B + (B.B - A.B) * T));
}

/// The sweep as a picture: per kernel, a grid of variants (rows, best
/// first) by points (columns), each cell coloured by its time over the
/// point's best, the winner outlined, the milliseconds on hover.
std::string svgReport(const std::vector<SweepSpec> &Specs,
                      const std::vector<PointResult> &Results,
                      const std::string &DeviceText) {
  constexpr int CellW = 118, CellH = 20, Top = 64, Gap = 36, CharW = 7;
  std::string Body;
  int Y = Top, Width = 640;
  for (size_t K = 0; K < Specs.size(); ++K) {
    std::vector<const PointResult *> Cols;
    for (const PointResult &R : Results)
      if (R.Spec == K)
        Cols.push_back(&R);
    if (Cols.empty())
      continue;
    // Rows: every variant with a time, by the geometric mean of its ratios.
    std::map<std::string, std::pair<double, int>> Score;
    for (const PointResult *R : Cols)
      if (R->Result && !R->Result->Timings.empty()) {
        double Best = std::max(R->Result->Timings.front().Milliseconds, 1e-9);
        for (const VariantTiming &T : R->Result->Timings) {
          auto &[Sum, N] = Score[T.Config];
          Sum += std::log(std::max(T.Milliseconds, 1e-9) / Best);
          ++N;
        }
      }
    std::vector<std::string> Rows;
    for (const auto &[Config, S] : Score)
      Rows.push_back(Config);
    // Best on average (over the points where a variant ran) first.
    std::sort(Rows.begin(), Rows.end(),
              [&](const std::string &A, const std::string &B) {
                const auto &SA = Score[A], &SB = Score[B];
                double MA = SA.first / SA.second, MB = SB.first / SB.second;
                return MA != MB ? MA < MB : A < B;
              });
    size_t LabelChars = 10;
    for (const std::string &R : Rows)
      LabelChars = std::max(LabelChars, R.size());
    int Left = int(LabelChars) * CharW + 16;
    Body += fmt::format("<text x=\"8\" y=\"{}\" class=\"kernel\">{}</text>\n",
                        Y, xml(Specs[K].Kernel));
    Y += 10;
    // Column heads: the point's label, one assignment per line.
    int HeadLines = 1;
    for (const PointResult *R : Cols)
      HeadLines = std::max<int>(
          HeadLines, int(std::count(R->Label.begin(), R->Label.end(), ',')) + 1);
    HeadLines = std::min(HeadLines, 6);
    for (size_t C = 0; C < Cols.size(); ++C) {
      int X = Left + int(C) * CellW;
      std::string Label = Cols[C]->Label;
      std::vector<std::string> Lines;
      size_t Start = 0;
      while (Start < Label.size() && int(Lines.size()) < HeadLines) {
        size_t Comma = Label.find(", ", Start);
        Lines.push_back(Label.substr(Start, Comma == std::string::npos
                                                ? std::string::npos
                                                : Comma - Start));
        Start = Comma == std::string::npos ? Label.size() : Comma + 2;
      }
      for (size_t L = 0; L < Lines.size(); ++L)
        Body += fmt::format(
            "<text x=\"{}\" y=\"{}\" class=\"head\">{}</text>\n", X + CellW / 2,
            Y + 12 + int(L) * 12, xml(Lines[L]));
    }
    Y += HeadLines * 12 + 8;
    for (size_t Row = 0; Row < Rows.size(); ++Row) {
      int RY = Y + int(Row) * CellH;
      Body += fmt::format(
          "<text x=\"{}\" y=\"{}\" class=\"row\">{}</text>\n", Left - 8,
          RY + CellH - 6, xml(Rows[Row]));
      for (size_t C = 0; C < Cols.size(); ++C) {
        int X = Left + int(C) * CellW;
        const PointResult &R = *Cols[C];
        const VariantTiming *T = nullptr;
        if (R.Result)
          for (const VariantTiming &V : R.Result->Timings)
            if (V.Config == Rows[Row])
              T = &V;
        if (!T) {
          Body += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" "
                              "height=\"{}\" class=\"none\"><title>{}: not a "
                              "candidate here, or it failed</title></rect>\n",
                              X, RY, CellW - 2, CellH - 2, xml(Rows[Row]));
          continue;
        }
        double Best = std::max(R.Result->Timings.front().Milliseconds, 1e-9);
        double Ratio = std::max(T->Milliseconds, 1e-9) / Best;
        bool Winner = T == &R.Result->Timings.front();
        Body += fmt::format(
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"{}>"
            "<title>{} at {}: {:.4f} ms ({:.2f}x the best)</title></rect>\n",
            X, RY, CellW - 2, CellH - 2, ratioColour(Ratio),
            Winner ? " class=\"win\"" : "", xml(Rows[Row]), xml(R.Label),
            T->Milliseconds, Ratio);
        Body += fmt::format(
            "<text x=\"{}\" y=\"{}\" class=\"{}\">{}</text>\n",
            X + (CellW - 2) / 2, RY + CellH - 6, Winner ? "cellwin" : "cell",
            Winner ? fmt::format("{:.3f} ms", T->Milliseconds)
                   : fmt::format("{:.2f}x", Ratio));
      }
    }
    Y += int(Rows.size()) * CellH + Gap;
    Width = std::max(Width, Left + int(Cols.size()) * CellW + 16);
  }
  // Legend.
  std::string Legend;
  int LX = 8, LY = Y - Gap + 24;
  const double Marks[] = {1.0, 1.25, 1.5, 2.0, 3.0};
  for (size_t I = 0; I < 5; ++I)
    Legend += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"56\" height=\"14\" fill=\"{}\"/>"
        "<text x=\"{}\" y=\"{}\" class=\"cell\">{}</text>\n",
        LX + int(I) * 58, LY, ratioColour(Marks[I]), LX + int(I) * 58 + 28,
        LY + 11, I == 4 ? "3x+" : fmt::format("{:.2f}x", Marks[I]));
  Legend += fmt::format("<text x=\"{}\" y=\"{}\" class=\"note\">a cell: "
                        "the variant's time over the fastest at that shape "
                        "(hover it for milliseconds)</text>\n"
                        "<text x=\"{}\" y=\"{}\" class=\"note\">outlined: "
                        "the winner, with its time; gray: not a candidate "
                        "there (or it failed)</text>\n",
                        LX, LY + 30, LX, LY + 44);
  Width = std::max(Width, LX + 5 * 58 + 8);
  Width = std::max(Width, 440);
  int Height = LY + 56;
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"DejaVu Sans, Helvetica, Arial, "
      "sans-serif\">\n"
      "<style>\n"
      ".title{{font-size:16px;font-weight:bold}} .sub{{font-size:11px;fill:#555}}"
      " .kernel{{font-size:14px;font-weight:bold}} .head{{font-size:10px;"
      "text-anchor:middle;fill:#333}} .row{{font-size:11px;text-anchor:end;"
      "font-family:DejaVu Sans Mono,monospace}} .cell{{font-size:10px;"
      "text-anchor:middle}} .cellwin{{font-size:10px;text-anchor:middle;"
      "font-weight:bold}} .note{{font-size:10px;fill:#555}} .none{{fill:#e4e4e4}}"
      " .win{{stroke:#000;stroke-width:2}}\n"
      "</style>\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n"
      "<text x=\"8\" y=\"22\" class=\"title\">kiln tune: time per variant per "
      "shape</text>\n"
      "<text x=\"8\" y=\"40\" class=\"sub\">{2}</text>\n{3}{4}</svg>\n",
      Width, Height, xml(DeviceText), Body, Legend);
}

int runSweep(const TuneOptionsCli &O, std::vector<SweepSpec> Specs,
             const TileCompiler *Compile, const Reporter &Fail) {
  if (!O.Db.empty())
    setTuningDatabase(O.Db);
  Expected<Device> Dev = Device::open(O.Device);
  if (!Dev)
    return Fail(Dev.error());
  Expected<Stream> S = Dev->createStream();
  if (!S)
    return Fail(S.error());

  // Every spec's kernel, loaded (and its names checked) before any point
  // runs.
  std::vector<Module> Modules;
  std::vector<Kernel> Kernels;
  for (const SweepSpec &Spec : Specs) {
    Expected<Module> Mod = Error(ErrorCode::NotFound, "");
    bool Tile = Spec.Source.size() > 5 &&
                Spec.Source.compare(Spec.Source.size() - 5, 5, ".tile") == 0;
    if (Tile) {
      if (!Compile)
        return Fail(kExitUser,
                    Spec.Where + "'" + Spec.Source + "' is a .tile file: " +
                        O.Tool + " runs bundles only (compile it with kiln "
                                 "compile, or use kiln tune)");
      Expected<std::string> Bytes =
          (*Compile)(Spec.Source, Spec.Kernel, Spec.Targets, Spec.Pins);
      if (!Bytes)
        return Bytes.error().message().empty() ? kExitUser
                                               : Fail(Bytes.error());
      std::string Label = Spec.Source.substr(Spec.Source.rfind('/') + 1) +
                          " (compiled)";
      Mod = Dev->loadModuleMemory(Bytes->data(), Bytes->size(), Label);
    } else {
      if (!Spec.Targets.empty() || !Spec.Pins.empty())
        return Fail(kExitUser, Spec.Where + "targets and pins (--targets, "
                                            "-D) apply to .tile sources only");
      Mod = Dev->loadModuleFile(Spec.Source);
    }
    if (!Mod)
      return Fail(Mod.error().code() == ErrorCode::IO ? kExitEnv : kExitUser,
                  Spec.Where + Mod.error().message());
    Expected<Kernel> K = Mod->kernel(Spec.Kernel);
    if (!K)
      return Fail(kExitUser, Spec.Where + K.error().message());
    if (std::string Why = checkNames(Spec, K->info()); !Why.empty())
      return Fail(kExitUser, Spec.Where + Why);
    Modules.push_back(*Mod);
    Kernels.push_back(*K);
  }

  size_t Total = 0, Mine = 0;
  for (const SweepSpec &Spec : Specs)
    for (size_t I = 0; I < Spec.Points.size(); ++I, ++Total)
      Mine += Total % O.Shards == O.Shard;
  std::string Names;
  for (const SweepSpec &Spec : Specs)
    Names += (Names.empty() ? "" : ", ") + Spec.Kernel;
  std::printf("tuning %s on %s, %zu point%s, database %s%s\n", Names.c_str(),
              Dev->description().c_str(), Mine, Mine == 1 ? "" : "s",
              tuningDatabasePath().c_str(),
              O.Shards > 1
                  ? fmt::format(", shard {}/{} of {} points", O.Shard,
                                O.Shards, Total)
                        .c_str()
                  : "");
  if (Specs.size() == 1)
    std::printf("%zu variant%s\n", Kernels[0].info().Variants.size(),
                Kernels[0].info().Variants.size() == 1 ? "" : "s");
  std::fflush(stdout);

  bool Terminal = isatty(2);
  std::mt19937_64 Rng(std::random_device{}());
  std::vector<PointResult> Results;
  std::vector<Row> Rows;
  int Code = 0;
  size_t Done = 0, Global = 0;
  for (size_t K = 0; K < Specs.size(); ++K) {
    const SweepSpec &Spec = Specs[K];
    const KernelInfo &Info = Kernels[K].info();
    for (const Point &Pt : Spec.Points) {
      if (Global++ % O.Shards != O.Shard)
        continue;
      std::string Label = Specs.size() > 1 ? Spec.Kernel + ": " + Pt.Label
                                           : Pt.Label;
      progress(Terminal, Done, Mine, Label, "");
      PointResult PR;
      PR.Spec = K;
      PR.Label = Pt.Label;
      auto PointFailed = [&](const std::string &Why) {
        Code = kExitUser;
        progress(Terminal, ++Done, Mine, Label, "failed");
        std::fprintf(stderr, "%s tune: error: %s: %s\n", O.Tool.c_str(),
                     Label.c_str(), Why.c_str());
        Rows.push_back({Spec.Kernel, Pt.Label, "failed", "-", "-", "-", "-"});
        PR.Error = Why;
        Results.push_back(std::move(PR));
      };
      std::vector<Arg> Args;
      std::vector<Buffer> Buffers;
      if (std::string Why =
              makeArgs(Spec, Pt, Info, *Dev, *S, Rng, Args, Buffers);
          !Why.empty()) {
        PointFailed(Why);
        continue;
      }
      TuneOptions TO;
      TO.Remeasure = O.Remeasure;
      Expected<TuneResult> R = Kernels[K].tune(*S, Args, TO);
      if (!R) {
        PointFailed(R.error().message());
        continue;
      }
      if (R->Timings.empty()) {
        PointFailed("no variant could be measured" +
                    (R->Failures.empty() ? std::string()
                                         : ": " + R->Failures.front()));
        continue;
      }
      Row Out;
      Out.Kernel = Spec.Kernel;
      Out.Shape = Pt.Label;
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
      progress(Terminal, ++Done, Mine, Label,
               fmt::format("{} {} ms ({} measured, {:.2f} s)", Out.Winner,
                           Out.Time, R->MeasuredNow, R->Seconds));
      Rows.push_back(std::move(Out));
      PR.Result = std::move(*R);
      Results.push_back(std::move(PR));
    }
  }

  // The table (a kernel column when the sweep has several kernels).
  bool ManyKernels = Specs.size() > 1;
  Row Head{"kernel", "shape", "winner", "ms", "runner-up", "spread",
           "measured"};
  size_t W[7] = {};
  auto Fields = [](const Row &R) {
    return std::array<const std::string *, 7>{&R.Kernel,   &R.Shape,
                                              &R.Winner,   &R.Time,
                                              &R.RunnerUp, &R.Spread,
                                              &R.Measured};
  };
  for (const Row *R : {&Head})
    for (int C = 0; C < 7; ++C)
      W[C] = std::max(W[C], Fields(*R)[C]->size());
  for (const Row &R : Rows)
    for (int C = 0; C < 7; ++C)
      W[C] = std::max(W[C], Fields(R)[C]->size());
  auto Print = [&](const Row &R) {
    std::string Line =
        fmt::format("{:<{}}  {:<{}}  {:>{}}  {:<{}}  {:>{}}  {:<{}}", R.Shape,
                    W[1], R.Winner, W[2], R.Time, W[3], R.RunnerUp, W[4],
                    R.Spread, W[5], R.Measured, W[6]);
    if (ManyKernels)
      Line = fmt::format("{:<{}}  ", R.Kernel, W[0]) + Line;
    std::printf("%s\n", Line.c_str());
  };
  Print(Head);
  Row Rule;
  std::string *Dashes[7] = {&Rule.Kernel,   &Rule.Shape,  &Rule.Winner,
                            &Rule.Time,     &Rule.RunnerUp, &Rule.Spread,
                            &Rule.Measured};
  for (int C = 0; C < 7; ++C)
    *Dashes[C] = std::string(W[C], '-');
  Print(Rule);
  for (const Row &R : Rows)
    Print(R);

  if (!O.Report.empty()) {
    if (std::string Why = writeFileAtomically(
            O.Report, svgReport(Specs, Results, Dev->description()));
        !Why.empty())
      return Fail(kExitEnv, Why);
    std::printf("report: %s\n", O.Report.c_str());
  }
  return Code;
}

} // namespace

std::string kiln::runtool::tuneUsage(const std::string &Tool) {
  return usageText(Tool);
}

int kiln::runtool::runTuneTool(const std::string &Tool, int Argc, char **Argv,
                               const TileCompiler *Compile) {
  Reporter Fail{Tool};
  TuneOptionsCli O;
  O.Tool = Tool;
  std::string Mode = "sweep";
  std::vector<std::string> Targets;
  std::vector<std::pair<std::string, int64_t>> Pins;
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
      if (F == "-D" && A.size() > 2 && A.rfind("-D", 0) == 0)
        return A.substr(2);
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
               Is("--shard") || Is("--sweep") || Is("--report") ||
               Is("--targets") || A == "-o" || A.rfind("-D", 0) == 0) {
      std::string Flag = A.rfind("-D", 0) == 0 ? "-D" : A.substr(0, A.find('='));
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
      else if (Flag == "--sweep")
        O.Sweep = *V;
      else if (Flag == "--report")
        O.Report = *V;
      else if (Flag == "--targets") {
        for (std::string &T : splitList(*V, ','))
          Targets.push_back(std::move(T));
      } else if (Flag == "-D") {
        size_t Eq = V->find('=');
        char *End = nullptr;
        long long N = Eq == std::string::npos
                          ? 0
                          : std::strtoll(V->c_str() + Eq + 1, &End, 0);
        if (Eq == std::string::npos || Eq == 0 || !End || *End ||
            Eq + 1 == V->size())
          return Fail(kExitUser, "-D expects NAME=INTEGER, found '" + *V + "'");
        Pins.emplace_back(V->substr(0, Eq), int64_t(N));
      } else if (Flag == "--buffer") {
        size_t Eq = V->find('=');
        if (Eq == std::string::npos || Eq == 0 || Eq + 1 == V->size())
          return Fail(kExitUser, "--buffer expects NAME=EXPR, found '" + *V +
                                     "'");
        O.Buffers.emplace_back(V->substr(0, Eq), V->substr(Eq + 1));
      } else { // --shard
        unsigned Sh = 0, N = 0;
        char Extra;
        if (std::sscanf(V->c_str(), "%u/%u%c", &Sh, &N, &Extra) != 2 ||
            N == 0 || Sh >= N || !std::isdigit((unsigned char)(*V)[0]))
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
    } else if (O.Source.empty() && Mode == "sweep") {
      O.Source = A;
    } else {
      return Fail(kExitUser, "unexpected argument '" + A + "'");
    }
  }
  if (Mode == "merge")
    return runMerge(O, Fail);
  if (Mode == "export")
    return runExport(O, Fail);

  std::vector<SweepSpec> Specs;
  if (!O.Sweep.empty()) {
    if (!O.Source.empty() || !O.Kernel.empty() || !O.Shapes.empty() ||
        !O.Sets.empty() || !O.Buffers.empty() || !Targets.empty() ||
        !Pins.empty())
      return Fail(kExitUser, "--sweep gives the sources, kernels, points, "
                             "buffers, targets and pins: the command line may "
                             "only add --device, --shard, --db, --report and "
                             "--remeasure");
    if (std::string Why = readSweepFile(O.Sweep, Specs); !Why.empty())
      return Fail(kExitUser, Why);
  } else {
    if (O.Source.empty())
      return Fail(kExitUser,
                  "no bundle given (see '" + Tool + " tune --help')");
    if (O.Kernel.empty())
      return Fail(kExitUser, "no kernel given: use --kernel NAME");
    if (O.Shapes.empty() && O.Sets.empty())
      return Fail(kExitUser, "no points given: use --shapes \"A=1,B=2;...\"");
    SweepSpec Spec;
    Spec.Source = O.Source;
    Spec.Kernel = O.Kernel;
    Spec.Targets = Targets;
    Spec.Pins = Pins;
    std::vector<std::pair<std::string, std::string>> Common;
    for (const std::string &Set : O.Sets) {
      std::string Bad;
      if (!splitAssignments(Set, Common, Bad))
        return Fail(kExitUser, "--set: '" + Bad + "' is not NAME=VALUE");
    }
    std::vector<std::string> Shapes = splitList(O.Shapes, ';');
    if (!O.Shapes.empty() && Shapes.empty())
      return Fail(kExitUser, "--shapes gives no point");
    if (std::string Why = makePoints(Shapes, Common, Spec.Points);
        !Why.empty())
      return Fail(kExitUser, Why);
    if (std::string Why = makeCounts(O.Buffers, Spec.Counts); !Why.empty())
      return Fail(kExitUser, Why);
    Specs.push_back(std::move(Spec));
  }
  return runSweep(O, std::move(Specs), Compile, Fail);
}
