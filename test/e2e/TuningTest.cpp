//===- TuningTest.cpp - The runtime tuner on the test device --------------===//
//
// softmax with its BLOCK tune space (bundle softmax_tune: every BLOCK at
// warps=4) on whichever device the tests run on: the first launch measures
// every candidate into a fresh database, a second module reuses it, and
// the output is bit for bit that of an untuned launch of the chosen
// variant and within float64's reference. Every other e2e test runs with
// tuning off (E2EMain.cpp) and pinned bundles.
//
//===----------------------------------------------------------------------===//

#include "E2E.h"

#include "kiln/tuning_db.h"

#include <cstring>
#include <unistd.h>

using namespace kiln;
using namespace kiln::e2e;
using rt::Arg;
using rt::Buffer;

namespace {

class Tuning : public E2ETest {
protected:
  void SetUp() override {
    E2ETest::SetUp();
    if (IsSkipped())
      return;
    char Template[] = "/tmp/kiln-e2e-tuning-XXXXXX";
    const char *D = mkdtemp(Template);
    ASSERT_TRUE(D);
    Db = std::string(D) + "/tuning.db";
    rt::setTuningDatabase(Db);
    rt::setWarningHandler(
        [this](const std::string &M) { Warnings.push_back(M); });
  }
  void TearDown() override {
    rt::setWarningHandler(nullptr);
    rt::setTuningDatabase(":memory:");
    E2ETest::TearDown();
  }
  std::string Db;
  std::vector<std::string> Warnings;
};

TEST_F(Tuning, FirstLaunchMeasuresAndOutputsAreUnchanged) {
  const size_t Rows = 64, Cols = 1000, Stride = 1024;
  rt::Kernel K = kernel("softmax_tune", "softmax");
  auto X = randomF32(Rows * Stride, -5, 5);
  Buffer BX = upload(X);
  Buffer BY = poisoned<float>(Rows * Stride, PoisonFloat);
  std::vector<Arg> Args = {Arg::pointer(BX), Arg::pointer(BY), Arg::i32(Rows),
                           Arg::i32(Cols), Arg::i32(Stride)};
  rt::LaunchOptions Full;
  Full.Tuning = rt::TuningMode::Full;
  rt::LaunchPlan P = launch(K, Args, Full);
  EXPECT_EQ(P.Source, rt::ChoiceSource::Measured);
  EXPECT_EQ(P.Bucket, "cols=1024");
  // BLOCK >= cols: 1024, 2048, 4096 and 8192 can run.
  EXPECT_EQ(P.Measured, 4u);
  EXPECT_TRUE(Warnings.empty()) << Warnings.front();
  auto Tuned = download<uint8_t>(BY, Rows * Stride * 4);

  // The chosen variant without tuning, on the same input.
  Buffer BY2 = poisoned<float>(Rows * Stride, PoisonFloat);
  rt::LaunchOptions Pin;
  Pin.Variant = P.Variant;
  Pin.Tuning = rt::TuningMode::Off;
  launch(K, {Arg::pointer(BX), Arg::pointer(BY2), Arg::i32(Rows),
             Arg::i32(Cols), Arg::i32(Stride)},
         Pin);
  auto Plain = download<uint8_t>(BY2, Rows * Stride * 4);
  EXPECT_TRUE(Tuned == Plain) << "tuning changed the output";
  EXPECT_EQ(download<float>(BX, Rows * Stride), X) << "tuning changed x";

  // Within the float64 reference, and the row gaps still poisoned.
  auto Y = download<float>(BY, Rows * Stride);
  for (size_t r = 0; r < Rows; ++r) {
    double Max = -1e300, Sum = 0;
    for (size_t c = 0; c < Cols; ++c)
      Max = std::max(Max, double(X[r * Stride + c]));
    for (size_t c = 0; c < Cols; ++c)
      Sum += std::exp(double(X[r * Stride + c]) - Max);
    for (size_t c = 0; c < Cols; ++c) {
      double Ref = std::exp(double(X[r * Stride + c]) - Max) / Sum;
      ASSERT_NEAR(Y[r * Stride + c], Ref, 1e-5 * Ref + 1e-30)
          << "row " << r << " col " << c;
    }
    expectPoison("y row gap", Tuned, (r * Stride + Cols) * 4,
                 (r + 1) * Stride * 4, PoisonFloat);
  }

  // A second module (as another process would) finds the database.
  rt::Kernel Again = kernel("softmax_tune", "softmax");
  rt::LaunchPlan Q = launch(Again, Args, Full);
  EXPECT_EQ(Q.Source, rt::ChoiceSource::Database);
  EXPECT_EQ(Q.Measured, 0u);
  EXPECT_EQ(Q.Variant, P.Variant);
  auto Db2 = rt::TuningDatabase::open(Db, false);
  ASSERT_TRUE(Db2) << Db2.error().message();
  auto R = Db2->rows();
  ASSERT_TRUE(R);
  EXPECT_EQ(R->size(), 4u);
}

} // namespace
