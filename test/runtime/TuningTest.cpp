//===- TuningTest.cpp - The runtime tuner and the tuning database ---------===//
//
// On the host device with the spin kernel (TestKernels.c), whose variants
// take 6, 1, 3 and 10 units of CPU time and update their buffer in place: the
// first launch measures, later ones reuse the database; outputs are those
// of an untuned launch; modes; key buckets; a variant added to a tune
// space; corrupt, foreign and unwritable databases; many processes tuning
// into one file at once; a process killed in the middle of a write.
//
// Every other runtime test runs with tuning off and an in-memory database
// (the environment below), so that their variant choices stay fixed.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "kiln/runtime_c.h"
#include "kiln/tuning_db.h"

#include <sqlite3.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char **environ;

using namespace kiln::rt;
using namespace kiln::test;

namespace {

/// Tuning off and no file for every test that does not ask otherwise.
class TuningOffEnvironment : public ::testing::Environment {
public:
  void SetUp() override {
    setTuningMode(TuningMode::Off);
    setTuningDatabase(":memory:");
  }
};
[[maybe_unused]] ::testing::Environment *const TheEnvironment =
    ::testing::AddGlobalTestEnvironment(new TuningOffEnvironment);

/// The time unit of the spin kernel, in microseconds: large enough that a
/// unit dwarfs the launch overhead.
constexpr int32_t kMicros = 400;

class TuningTest : public HostTest {
protected:
  void SetUp() override {
    HostTest::SetUp();
    Dir = tempDir();
    setTuningDatabase(Dir + "/tuning.db");
    setTuningMode(TuningMode::Full);
    setWarningHandler([this](const std::string &M) { Warnings.push_back(M); });
  }
  void TearDown() override {
    setWarningHandler(nullptr);
    setTuningMode(TuningMode::Off);
    setTuningDatabase(":memory:");
  }

  Kernel spin(unsigned Variants = 3) {
    auto M = load({{spinKernel(Variants)}});
    EXPECT_TRUE(M) << M.error().message();
    Modules.push_back(*M);
    auto K = M->kernel("spin");
    EXPECT_TRUE(K) << K.error().message();
    return *K;
  }

  std::vector<float> inputs(size_t N) {
    std::vector<float> V(N);
    for (size_t I = 0; I < N; ++I)
      V[I] = 0.25f * float(I) - 3.0f;
    return V;
  }

  std::vector<Arg> args(const Buffer &B, int32_t N) {
    return {Arg::pointer(B, ScalarType::F32), Arg::i32(N), Arg::i32(kMicros)};
  }

  /// The spin kernel's bundle with an edited manifest, loaded.
  Expected<Module> loadManifest(const nlohmann::json &M) {
    std::string Text = M.dump();
    std::string Bytes = buildBundle({{spinKernel(3)}}, &Text);
    return Dev->loadModuleMemory(Bytes.data(), Bytes.size(), "edited.kpack");
  }
  /// That the edited manifest is refused with a message holding `Want`.
  void expectRefused(const nlohmann::json &M, const std::string &Want) {
    auto Bad = loadManifest(M);
    ASSERT_FALSE(Bad);
    EXPECT_NE(Bad.error().message().find(Want), std::string::npos)
        << Bad.error().message();
  }

  size_t rowCount() {
    auto Db = TuningDatabase::open(Dir + "/tuning.db", false);
    EXPECT_TRUE(Db) << Db.error().message();
    if (!Db)
      return 0;
    auto Rows = Db->rows();
    EXPECT_TRUE(Rows) << Rows.error().message();
    return Rows ? Rows->size() : 0;
  }

  std::string Dir;
  std::vector<std::string> Warnings;
  std::vector<Module> Modules;
};

TEST_F(TuningTest, FirstLaunchMeasuresSecondReusesTheDatabase) {
  Kernel K = spin();
  Buffer B = upload(inputs(64));
  auto Plan = K.launch(*Str, args(B, 64));
  ASSERT_TRUE(Plan) << Plan.error().message();
  EXPECT_EQ(Plan->Source, ChoiceSource::Measured);
  EXPECT_EQ(Plan->Measured, 3u);
  EXPECT_EQ(Plan->Bucket, "n=64");
  EXPECT_EQ(Plan->Config, "DELAY=1, warps=4, stages=2");
  EXPECT_EQ(rowCount(), 3u);
  EXPECT_TRUE(Warnings.empty()) << Warnings.front();

  // The same module again: no database read, no measurement.
  auto Again = K.launch(*Str, args(B, 64));
  ASSERT_TRUE(Again);
  EXPECT_EQ(Again->Source, ChoiceSource::Database);
  EXPECT_EQ(Again->Measured, 0u);
  EXPECT_EQ(Again->Config, "DELAY=1, warps=4, stages=2");

  // A new module (as a new process would): from the file.
  Kernel Fresh = spin();
  auto Third = Fresh.launch(*Str, args(B, 64));
  ASSERT_TRUE(Third);
  EXPECT_EQ(Third->Source, ChoiceSource::Database);
  EXPECT_EQ(Third->Config, "DELAY=1, warps=4, stages=2");
  EXPECT_EQ(rowCount(), 3u);
}

TEST_F(TuningTest, OutputsAreThoseOfAnUntunedLaunch) {
  const int32_t N = 100;
  Kernel K = spin();
  Buffer Tuned = upload(inputs(N));
  auto Plan = K.launch(*Str, args(Tuned, N));
  ASSERT_TRUE(Plan) << Plan.error().message();
  ASSERT_EQ(Plan->Source, ChoiceSource::Measured);

  // The variant it chose, launched once without tuning on the same input.
  Buffer Plain = upload(inputs(N));
  LaunchOptions Pin;
  Pin.Variant = Plan->Variant;
  Pin.Tuning = TuningMode::Off;
  ASSERT_TRUE(K.launch(*Str, args(Plain, N), Pin));
  std::vector<float> A = download<float>(Tuned), B = download<float>(Plain);
  ASSERT_EQ(A.size(), B.size());
  EXPECT_EQ(std::memcmp(A.data(), B.data(), A.size() * sizeof(float)), 0);
  // One in-place update, not one per measured launch.
  std::vector<float> In = inputs(N);
  for (int32_t I = 0; I < N; ++I)
    EXPECT_EQ(A[I], 2 * In[I] + 1) << I;
}

TEST_F(TuningTest, TuneMeasuresAndLeavesBuffersAsTheyWere) {
  Kernel K = spin();
  Buffer B = upload(inputs(16));
  auto R = K.tune(*Str, args(B, 16));
  ASSERT_TRUE(R) << R.error().message();
  EXPECT_EQ(R->Candidates, 3u);
  EXPECT_EQ(R->MeasuredNow, 3u);
  ASSERT_EQ(R->Timings.size(), 3u);
  // The fastest first; the others' order is not asserted: a candidate
  // three times slower than the best gets a single timed launch.
  EXPECT_EQ(R->Timings[0].Config, "DELAY=1, warps=4, stages=2");
  EXPECT_LE(R->Timings[0].Milliseconds, R->Timings[1].Milliseconds);
  EXPECT_LE(R->Timings[1].Milliseconds, R->Timings[2].Milliseconds);
  EXPECT_GE(R->Timings[0].Milliseconds, kMicros / 1000.0);
  EXPECT_TRUE(R->Timings[0].MeasuredNow);
  EXPECT_EQ(download<float>(B), inputs(16));
  EXPECT_NE(R->DeviceKey.find("threads"), std::string::npos) << R->DeviceKey;

  // Again: all from the database; Remeasure measures them all.
  auto Cached = K.tune(*Str, args(B, 16));
  ASSERT_TRUE(Cached);
  EXPECT_EQ(Cached->MeasuredNow, 0u);
  EXPECT_EQ(Cached->Timings.size(), 3u);
  TuneOptions All;
  All.Remeasure = true;
  auto Re = K.tune(*Str, args(B, 16), All);
  ASSERT_TRUE(Re);
  EXPECT_EQ(Re->MeasuredNow, 3u);
  EXPECT_EQ(rowCount(), 3u);
}

TEST_F(TuningTest, ModesOffAndCachedNeverMeasure) {
  Kernel K = spin();
  Buffer B = upload(inputs(8));
  LaunchOptions Off;
  Off.Tuning = TuningMode::Off;
  auto P = K.launch(*Str, args(B, 8), Off);
  ASSERT_TRUE(P);
  EXPECT_EQ(P->Source, ChoiceSource::Default);
  EXPECT_EQ(P->Variant, 0u);

  setTuningMode(TuningMode::Cached);
  auto C = K.launch(*Str, args(B, 8));
  ASSERT_TRUE(C);
  EXPECT_EQ(C->Source, ChoiceSource::Default);
  EXPECT_EQ(C->Variant, 0u);
  EXPECT_EQ(rowCount(), 0u);

  // Measured once (Full), then Cached uses the times.
  LaunchOptions Full;
  Full.Tuning = TuningMode::Full;
  ASSERT_TRUE(K.launch(*Str, args(B, 8), Full));
  Kernel Fresh = spin();
  auto D = Fresh.launch(*Str, args(B, 8));
  ASSERT_TRUE(D);
  EXPECT_EQ(D->Source, ChoiceSource::Database);
  EXPECT_EQ(D->Variant, 1u);

  // A pinned launch is never tuned.
  LaunchOptions Pin;
  Pin.Config = {{"DELAY", 3}};
  auto E = K.launch(*Str, args(B, 8), Pin);
  ASSERT_TRUE(E);
  EXPECT_EQ(E->Source, ChoiceSource::Pinned);
  EXPECT_EQ(E->Variant, 2u);

  // plan() does not consult tuning: the default among several candidates.
  auto Planned = K.plan(args(B, 8));
  ASSERT_TRUE(Planned);
  EXPECT_EQ(Planned->Source, ChoiceSource::Default);
  EXPECT_EQ(Planned->Variant, 0u);
  auto PlannedPin = K.plan(args(B, 8), Pin);
  ASSERT_TRUE(PlannedPin);
  EXPECT_EQ(PlannedPin->Source, ChoiceSource::Pinned);
}

TEST_F(TuningTest, KeyBucketsAreTheNextPowerOfTwo) {
  Kernel K = spin();
  Buffer B = upload(inputs(2048));
  auto A = K.launch(*Str, args(B, 1000));
  ASSERT_TRUE(A);
  EXPECT_EQ(A->Bucket, "n=1024");
  EXPECT_EQ(A->Source, ChoiceSource::Measured);
  auto Same = K.launch(*Str, args(B, 1024));
  ASSERT_TRUE(Same);
  EXPECT_EQ(Same->Bucket, "n=1024");
  EXPECT_EQ(Same->Source, ChoiceSource::Database);
  auto Next = K.launch(*Str, args(B, 1025));
  ASSERT_TRUE(Next);
  EXPECT_EQ(Next->Bucket, "n=2048");
  EXPECT_EQ(Next->Source, ChoiceSource::Measured);
  auto Zero = K.launch(*Str, args(B, 0));
  ASSERT_TRUE(Zero);
  EXPECT_EQ(Zero->Bucket, "n=0");
  EXPECT_EQ(rowCount(), 9u);
}

TEST_F(TuningTest, AnExactKeyIsNotBucketed) {
  nlohmann::json M = manifestJson({{spinKernel(3)}});
  M["kernels"][0]["key_buckets"] = {"exact"};
  auto Mod = loadManifest(M);
  ASSERT_TRUE(Mod) << Mod.error().message();
  auto K = Mod->kernel("spin");
  ASSERT_TRUE(K);
  EXPECT_EQ(K->info().KeyExact, std::vector<bool>{true});
  Buffer B = upload(inputs(1024));
  auto P = K->launch(*Str, args(B, 1000));
  ASSERT_TRUE(P) << P.error().message();
  EXPECT_EQ(P->Bucket, "n=1000");
  EXPECT_EQ(P->Source, ChoiceSource::Measured);
  auto Q = K->launch(*Str, args(B, 1001));
  ASSERT_TRUE(Q);
  EXPECT_EQ(Q->Bucket, "n=1001");
  EXPECT_EQ(Q->Source, ChoiceSource::Measured);

  M["kernels"][0]["key_buckets"] = {"fuzzy"};
  expectRefused(M, "key 'n' has an unknown bucketing 'fuzzy' (expected pow2 "
                   "or exact)");
}

TEST_F(TuningTest, AddingAVariantKeepsTheOtherMeasurements) {
  Buffer B = upload(inputs(32));
  ASSERT_TRUE(spin(3).launch(*Str, args(B, 32)));
  auto Db = TuningDatabase::open(Dir + "/tuning.db", false);
  ASSERT_TRUE(Db);
  auto Before = Db->rows();
  ASSERT_TRUE(Before);
  ASSERT_EQ(Before->size(), 3u);

  // The same kernel with a fourth variant: only it is measured.
  auto P = spin(4).launch(*Str, args(B, 32));
  ASSERT_TRUE(P) << P.error().message();
  EXPECT_EQ(P->Measured, 1u);
  EXPECT_EQ(P->Config, "DELAY=1, warps=4, stages=2");
  auto After = Db->rows();
  ASSERT_TRUE(After);
  ASSERT_EQ(After->size(), 4u);
  for (const TuningRow &Old : *Before) {
    bool Kept = false;
    for (const TuningRow &New : *After)
      Kept |= New.Variant == Old.Variant && New.MeasuredAt == Old.MeasuredAt &&
              New.Milliseconds == Old.Milliseconds;
    EXPECT_TRUE(Kept) << Old.Variant;
  }
}

TEST_F(TuningTest, AVariantThatFailsIsLeftOutWithAWarning) {
  Kernel K = spin(5); // spin_v4 has no code
  Buffer B = upload(inputs(8));
  auto R = K.tune(*Str, args(B, 8));
  ASSERT_TRUE(R) << R.error().message();
  EXPECT_EQ(R->MeasuredNow, 4u);
  ASSERT_EQ(R->Failures.size(), 1u);
  EXPECT_NE(R->Failures[0].find("DELAY=12"), std::string::npos)
      << R->Failures[0];
  ASSERT_EQ(Warnings.size(), 1u);
  EXPECT_NE(Warnings[0].find("tuning: left out spin (DELAY=12"),
            std::string::npos)
      << Warnings[0];
  auto P = K.launch(*Str, args(B, 8));
  ASSERT_TRUE(P);
  EXPECT_EQ(P->Variant, 1u);
}

TEST_F(TuningTest, ARawAddressCannotBeSavedSoTheDefaultRuns) {
  Kernel K = spin();
  std::vector<float> Host = inputs(4);
  auto P = K.launch(*Str, {Arg::pointer(Host.data(), ScalarType::F32),
                           Arg::i32(4), Arg::i32(kMicros)});
  ASSERT_TRUE(P) << P.error().message();
  EXPECT_EQ(P->Source, ChoiceSource::Default);
  EXPECT_EQ(P->Variant, 0u);
  ASSERT_EQ(Warnings.size(), 1u);
  EXPECT_NE(Warnings[0].find("argument 'acc', which it may write, is an "
                             "address this device did not allocate"),
            std::string::npos)
      << Warnings[0];
  EXPECT_EQ(Host[1], 2 * inputs(4)[1] + 1);
  // The bucket is not tried again: no second warning.
  auto Q = K.launch(*Str, {Arg::pointer(Host.data(), ScalarType::F32),
                           Arg::i32(4), Arg::i32(kMicros)});
  ASSERT_TRUE(Q) << Q.error().message();
  EXPECT_EQ(Q->Source, ChoiceSource::Default);
  EXPECT_EQ(Warnings.size(), 1u);
}

TEST_F(TuningTest, AWarningHandlerMayLaunchAgain) {
  // The handler runs after the tuner's lock is released: launching the
  // same kernel from it does not deadlock.
  Kernel K = spin();
  std::vector<float> Host = inputs(4);
  Buffer B = upload(inputs(4));
  int Nested = 0;
  setWarningHandler([&](const std::string &) {
    if (Nested++ == 0) {
      auto P = K.launch(*Str, args(B, 4));
      EXPECT_TRUE(P) << P.error().message();
    }
  });
  auto P = K.launch(*Str, {Arg::pointer(Host.data(), ScalarType::F32),
                           Arg::i32(4), Arg::i32(kMicros)});
  ASSERT_TRUE(P) << P.error().message();
  EXPECT_EQ(Nested, 1);
}

TEST_F(TuningTest, AnEmptyGridIsNotTuned) {
  TestKernel Spin = spinKernel(3);
  Spin.Grid = {"(cdiv n 4)"};
  auto M = load({{Spin}});
  ASSERT_TRUE(M) << M.error().message();
  auto K = M->kernel("spin");
  ASSERT_TRUE(K);
  Buffer B = upload(inputs(4));
  auto R = K->tune(*Str, args(B, 0));
  ASSERT_FALSE(R);
  EXPECT_NE(R.error().message().find("nothing to tune: the grid of kernel "
                                     "'spin' is empty"),
            std::string::npos)
      << R.error().message();
  auto P = K->launch(*Str, args(B, 0));
  ASSERT_TRUE(P);
  EXPECT_EQ(P->programs(), 0u);
  EXPECT_EQ(P->Measured, 0u);
}

std::vector<std::string> listDir(const std::string &Dir) {
  std::vector<std::string> Names;
  if (DIR *D = opendir(Dir.c_str())) {
    while (dirent *E = readdir(D))
      if (E->d_name[0] != '.')
        Names.push_back(E->d_name);
    closedir(D);
  }
  return Names;
}

TEST_F(TuningTest, ACorruptDatabaseIsMovedAsideAndRebuilt) {
  {
    std::ofstream F(Dir + "/tuning.db", std::ios::binary);
    F << std::string(4096, 'x');
  }
  Kernel K = spin();
  Buffer B = upload(inputs(8));
  auto P = K.launch(*Str, args(B, 8));
  ASSERT_TRUE(P) << P.error().message();
  EXPECT_EQ(P->Source, ChoiceSource::Measured);
  ASSERT_EQ(Warnings.size(), 1u);
  EXPECT_NE(Warnings[0].find("moved aside to '" + Dir + "/tuning.db.corrupt-"),
            std::string::npos)
      << Warnings[0];
  bool Aside = false;
  for (const std::string &N : listDir(Dir))
    Aside |= N.rfind("tuning.db.corrupt-", 0) == 0;
  EXPECT_TRUE(Aside);
  EXPECT_EQ(rowCount(), 3u);
}

TEST_F(TuningTest, AForeignDatabaseIsMovedAside) {
  // A valid SQLite file with someone else's table.
  std::string Foreign = Dir + "/tuning.db";
  sqlite3 *Db = nullptr;
  ASSERT_EQ(sqlite3_open(Foreign.c_str(), &Db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(Db, "CREATE TABLE t(x)", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(Db);
  auto Strict = TuningDatabase::open(Foreign, false);
  ASSERT_FALSE(Strict);
  EXPECT_NE(Strict.error().message().find("is not a Kiln tuning database"),
            std::string::npos)
      << Strict.error().message();

  Kernel K = spin();
  Buffer B = upload(inputs(8));
  ASSERT_TRUE(K.launch(*Str, args(B, 8)));
  ASSERT_EQ(Warnings.size(), 1u);
  EXPECT_NE(Warnings[0].find("is not a Kiln tuning database (it holds other "
                             "tables); moved aside"),
            std::string::npos)
      << Warnings[0];
  EXPECT_EQ(rowCount(), 3u);
}

TEST_F(TuningTest, AnUnwritableLocationKeepsTimesInMemory) {
  // A folder that cannot be made (its parent is a file), so that the test
  // means the same when run as root.
  { std::ofstream F(Dir + "/file"); }
  setTuningDatabase(Dir + "/file/cache/tuning.db");
  Kernel K = spin();
  Buffer B = upload(inputs(8));
  auto P = K.launch(*Str, args(B, 8));
  ASSERT_TRUE(P) << P.error().message();
  EXPECT_EQ(P->Source, ChoiceSource::Measured);
  ASSERT_EQ(Warnings.size(), 1u);
  EXPECT_NE(Warnings[0].find("cannot create its folder"), std::string::npos)
      << Warnings[0];
  EXPECT_NE(Warnings[0].find("kept in memory only"), std::string::npos);
  // The in-memory database serves a new module of this process.
  auto Q = spin().launch(*Str, args(B, 8));
  ASSERT_TRUE(Q);
  EXPECT_EQ(Q->Source, ChoiceSource::Database);
}

TEST_F(TuningTest, AShippedTableIsUsedAndNothingIsMeasured) {
  // The table's device is this one with another thread count and driver:
  // it matches by model and arch.
  std::string Model = "host / " + Dev->properties().Arch + " / 999 threads";
  nlohmann::json M = manifestJson({{spinKernel(3)}});
  M["kernels"][0]["tuned"] = {
      {{"device", Model}, {"bucket", "n=64"},
       {"variant", "DELAY=3, warps=4, stages=2"}},
      {{"device", Model}, {"bucket", "n=1024"},
       {"variant", "DELAY=6, warps=4, stages=2"}},
      {{"device", "NVIDIA H100 80GB HBM3 / sm_90 / driver 13000"},
       {"bucket", "n=64"},
       {"variant", "DELAY=1, warps=4, stages=2"}}};
  auto Mod = loadManifest(M);
  ASSERT_TRUE(Mod) << Mod.error().message();
  auto K = Mod->kernel("spin");
  ASSERT_TRUE(K);
  EXPECT_EQ(K->info().Tuned.size(), 3u);
  Buffer B = upload(inputs(2048));
  struct Case {
    int32_t N;
    unsigned Variant;
  };
  // n=64 exactly; n=40 and n=200 nearest n=64 (the H100's entry is
  // another device); n=1000 and n=2000 nearest n=1024.
  for (Case C : {Case{64, 2}, Case{40, 2}, Case{200, 2}, Case{1000, 0},
                 Case{2000, 0}}) {
    auto P = K->launch(*Str, args(B, C.N));
    ASSERT_TRUE(P) << P.error().message();
    EXPECT_EQ(P->Source, ChoiceSource::Table) << C.N;
    EXPECT_EQ(P->Variant, C.Variant) << C.N;
    EXPECT_EQ(P->Measured, 0u);
  }
  // Full mode, yet no database was even opened.
  EXPECT_NE(::access((Dir + "/tuning.db").c_str(), F_OK), 0);
  EXPECT_TRUE(Warnings.empty());
  EXPECT_EQ(choiceSourceName(ChoiceSource::Table), "shipped table");

  // A bad "tuned" is a bundle error.
  M["kernels"][0]["tuned"] = {{{"device", Model}, {"bucket", 3}}};
  expectRefused(M, "a 'tuned' choice needs string 'device', 'bucket' and "
                   "'variant'");
}

TEST(TuningDatabaseTest, MergeKeepsTheLaterMeasurement) {
  auto Db = TuningDatabase::open(":memory:");
  ASSERT_TRUE(Db) << Db.error().message();
  TuningRow R{"h", "k", "B=1", "dev", "n=8", 2.0, 5, "2026-01-02T00:00:00Z"};
  ASSERT_FALSE(Db->insert({R}));
  TuningRow Older = R, Newer = R;
  Older.Milliseconds = 1.0;
  Older.MeasuredAt = "2026-01-01T00:00:00Z";
  ASSERT_FALSE(Db->merge({Older}));
  auto Rows = Db->rows();
  ASSERT_TRUE(Rows);
  ASSERT_EQ(Rows->size(), 1u);
  EXPECT_EQ((*Rows)[0].Milliseconds, 2.0);
  Newer.Milliseconds = 3.0;
  Newer.MeasuredAt = "2026-01-03T00:00:00Z";
  ASSERT_FALSE(Db->merge({Newer}));
  Rows = Db->rows("h", "dev", "n=8");
  ASSERT_TRUE(Rows);
  ASSERT_EQ(Rows->size(), 1u);
  EXPECT_EQ((*Rows)[0].Milliseconds, 3.0);
  EXPECT_EQ((*Rows)[0].Repeats, 5u);
}

TEST(TuningApiTest, ModesAndTheCApi) {
  EXPECT_EQ(parseTuningMode("cached"), TuningMode::Cached);
  EXPECT_FALSE(parseTuningMode("fast"));
  EXPECT_EQ(tuningModeName(TuningMode::Full), "full");
  EXPECT_EQ(kiln_set_tuning_mode(7), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kiln_last_error()).find("mode 7 is not"),
            std::string::npos);
  EXPECT_EQ(kiln_set_tuning_mode(KILN_TUNING_CACHED), KILN_SUCCESS);
  EXPECT_EQ(kiln_get_tuning_mode(), KILN_TUNING_CACHED);
  EXPECT_EQ(tuningMode(), TuningMode::Cached);
  EXPECT_EQ(kiln_set_tuning_database("/x/y.db"), KILN_SUCCESS);
  EXPECT_EQ(tuningDatabasePath(), "/x/y.db");
  EXPECT_EQ(kiln_set_tuning_database(nullptr), KILN_SUCCESS);
  EXPECT_NE(tuningDatabasePath(), "/x/y.db");
  setTuningMode(TuningMode::Off);
  setTuningDatabase(":memory:");
}

//===----------------------------------------------------------------------===//
// Many processes (this binary again, running the TuningChild tests)
//===----------------------------------------------------------------------===//

/// Starts this test binary on one TuningChild test with `Env` added.
pid_t spawnChild(const std::string &Test,
                 const std::vector<std::string> &Env) {
  std::string Filter = "--gtest_filter=TuningChild." + Test;
  char Self[4096];
  ssize_t N = readlink("/proc/self/exe", Self, sizeof(Self) - 1);
  if (N <= 0)
    return -1;
  Self[N] = 0;
  std::vector<std::string> EnvStrings(Env);
  for (char **E = environ; *E; ++E)
    EnvStrings.push_back(*E);
  std::vector<char *> Envp, Argv{Self, Filter.data()};
  for (std::string &S : EnvStrings)
    Envp.push_back(S.data());
  Envp.push_back(nullptr);
  Argv.push_back(nullptr);
  pid_t Pid;
  if (posix_spawn(&Pid, Self, nullptr, nullptr, Argv.data(), Envp.data()))
    return -1;
  return Pid;
}

const char *childEnv(const char *Name) {
  const char *V = std::getenv(Name);
  return V && *V ? V : nullptr;
}

TEST(TuningChild, Tune) {
  const char *Db = childEnv("KILN_TEST_TUNING_DB");
  if (!Db)
    GTEST_SKIP() << "run by TuningTest.ManyProcesses...";
  int32_t N = std::atoi(childEnv("KILN_TEST_TUNING_N"));
  setTuningDatabase(Db);
  auto D = Device::open("host");
  ASSERT_TRUE(D);
  auto S = D->createStream();
  ASSERT_TRUE(S);
  std::string Bytes = buildBundle({{spinKernel(3)}});
  auto M = D->loadModuleMemory(Bytes.data(), Bytes.size(), "spin.kpack");
  ASSERT_TRUE(M);
  auto K = M->kernel("spin");
  ASSERT_TRUE(K);
  auto B = D->allocate(sizeof(float) * 8);
  ASSERT_TRUE(B);
  TuneOptions O;
  O.TargetMilliseconds = 1;
  auto R = K->tune(*S, {Arg::pointer(*B), Arg::i32(N), Arg::i32(50)}, O);
  ASSERT_TRUE(R) << R.error().message();
  EXPECT_EQ(R->Timings.size(), 3u);
}

TEST(TuningChild, WriteForever) {
  const char *Path = childEnv("KILN_TEST_TUNING_WRITER");
  if (!Path)
    GTEST_SKIP() << "run by TuningTest.AKilledWriter...";
  auto Db = TuningDatabase::open(Path);
  ASSERT_TRUE(Db) << Db.error().message();
  for (int Batch = 0;; ++Batch) {
    std::vector<TuningRow> Rows;
    for (int I = 0; I < 50; ++I)
      Rows.push_back({"h", "k", "V=" + std::to_string(I), "dev",
                      "n=" + std::to_string(Batch), 1.0 + I, 3, ""});
    ASSERT_FALSE(Db->insert(Rows));
  }
}

TEST_F(TuningTest, ManyProcessesTuningIntoOneFileLoseNoRow) {
  std::string Db = Dir + "/tuning.db";
  std::vector<pid_t> Pids;
  // Six processes: four buckets of their own, two sharing one.
  for (int32_t N : {1, 2, 4, 8, 16, 16}) {
    pid_t P = spawnChild("Tune", {"KILN_TEST_TUNING_DB=" + Db,
                                  "KILN_TEST_TUNING_N=" + std::to_string(N)});
    ASSERT_GT(P, 0);
    Pids.push_back(P);
  }
  for (pid_t P : Pids) {
    int Status = 0;
    ASSERT_EQ(waitpid(P, &Status, 0), P);
    EXPECT_TRUE(WIFEXITED(Status) && WEXITSTATUS(Status) == 0)
        << "child " << P << " status " << Status;
  }
  auto Rows = TuningDatabase::open(Db, false);
  ASSERT_TRUE(Rows) << Rows.error().message();
  auto All = Rows->rows();
  ASSERT_TRUE(All);
  EXPECT_EQ(All->size(), 15u); // 5 buckets x 3 variants
}

TEST_F(TuningTest, AKilledWriterLeavesAReadableDatabase) {
  std::string Db = Dir + "/killed.db";
  pid_t P = spawnChild("WriteForever", {"KILN_TEST_TUNING_WRITER=" + Db});
  ASSERT_GT(P, 0);
  // Until it has written a few batches, then in the middle of one.
  for (int I = 0; I < 200; ++I) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    auto Peek = TuningDatabase::open(Db, false);
    if (Peek)
      if (auto Rows = Peek->rows(); Rows && Rows->size() >= 500)
        break;
  }
  kill(P, SIGKILL);
  int Status = 0;
  ASSERT_EQ(waitpid(P, &Status, 0), P);
  ASSERT_TRUE(WIFSIGNALED(Status));
  auto After = TuningDatabase::open(Db, false);
  ASSERT_TRUE(After) << After.error().message();
  auto Rows = After->rows();
  ASSERT_TRUE(Rows) << Rows.error().message();
  EXPECT_GE(Rows->size(), 50u);
  EXPECT_EQ(Rows->size() % 50, 0u) << "a batch was half written";
  // Opened without Create it is only read; with Create it takes writes.
  EXPECT_TRUE(After->insert({{"h2", "k", "V=0", "dev", "", 1.0, 1, ""}}));
  auto Writable = TuningDatabase::open(Db);
  ASSERT_TRUE(Writable) << Writable.error().message();
  EXPECT_FALSE(Writable->insert({{"h2", "k", "V=0", "dev", "", 1.0, 1, ""}}));
}

} // namespace
