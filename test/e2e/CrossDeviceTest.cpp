//===- CrossDeviceTest.cpp - the test device's results against the host's -===//
//
// The same launch (same inputs, same variant) on the test device and on the
// host device, every pointer argument compared element by element with the
// rule of `kiln-run --check` (docs/cli.md): |a - b| <= atol + rtol * |b|,
// f32 rtol 1e-5 / atol 1e-6, f16 and bf16 1e-2 / 1e-3, f64 1e-12 / 1e-13;
// integers and bool exactly; NaN matches NaN only (the poison past the
// logical sizes included). The other tests compare each device with float64
// references; these compare the two devices directly. With
// KILN_E2E_DEVICE=host both runs are on the host (a determinism check).
//
// Inputs of sums and scans are non-negative: another summation order then
// stays within the f32 tolerance of the first (no cancellation).
//
//===----------------------------------------------------------------------===//
#include "E2E.h"

#include <algorithm>
#include <sstream>

using namespace kiln;
using namespace kiln::e2e;

namespace {

/// One launch argument: a buffer (its element type and initial bytes) or a
/// scalar.
struct Input {
  std::string Name;
  bool Pointer = false;
  rt::ScalarType Type = rt::ScalarType::F32;
  std::vector<uint8_t> Bytes;
  std::optional<Arg> Scalar;
};

template <typename T>
Input buffer(const std::string &Name, rt::ScalarType Type,
             const std::vector<T> &Values) {
  Input I;
  I.Name = Name;
  I.Pointer = true;
  I.Type = Type;
  I.Bytes.resize(Values.size() * sizeof(T));
  if (!Values.empty())
    std::memcpy(I.Bytes.data(), Values.data(), I.Bytes.size());
  return I;
}

/// `Count` elements of `Type`, every byte `Poison`.
Input output(const std::string &Name, rt::ScalarType Type, size_t Count,
             uint8_t Poison) {
  Input I;
  I.Name = Name;
  I.Pointer = true;
  I.Type = Type;
  I.Bytes.assign(Count * rt::typeSize(Type), Poison);
  return I;
}

Input scalar(const std::string &Name, Arg A) {
  Input I;
  I.Name = Name;
  I.Scalar = A;
  return I;
}

/// The buffers after one launch, and the plan it took.
struct RunResult {
  rt::LaunchPlan Plan;
  std::vector<std::vector<uint8_t>> Buffers;
};

/// Runs K on its device from fresh copies of the inputs; fails the test (and
/// returns nothing) on any error.
std::optional<RunResult> runOn(rt::Device &D, const rt::Kernel &K,
                               const std::vector<Input> &In,
                               const rt::LaunchOptions &Options) {
  auto S = D.createStream();
  if (!S) {
    ADD_FAILURE() << D.name() << ": " << S.error().message();
    return std::nullopt;
  }
  std::vector<Buffer> Bufs;
  std::vector<Arg> Args;
  Bufs.reserve(In.size());
  for (const Input &I : In) {
    if (!I.Pointer) {
      Args.push_back(*I.Scalar);
      continue;
    }
    auto B = D.allocate(std::max<size_t>(I.Bytes.size(), 16));
    if (!B) {
      ADD_FAILURE() << D.name() << ": " << B.error().message();
      return std::nullopt;
    }
    if (rt::Error E = S->copyToDevice(*B, 0, I.Bytes.data(), I.Bytes.size())) {
      ADD_FAILURE() << D.name() << ": " << E.message();
      return std::nullopt;
    }
    Bufs.push_back(std::move(*B));
    Args.push_back(Arg::pointer(Bufs.back()));
  }
  auto P = K.launch(*S, Args, Options);
  if (!P) {
    ADD_FAILURE() << K.name() << " on " << D.name() << ": "
                  << P.error().message();
    return std::nullopt;
  }
  RunResult R;
  R.Plan = *P;
  size_t B = 0;
  for (const Input &I : In) {
    if (!I.Pointer)
      continue;
    R.Buffers.emplace_back(I.Bytes.size());
    if (rt::Error E = S->copyToHost(R.Buffers.back().data(), Bufs[B++], 0,
                                    I.Bytes.size())) {
      ADD_FAILURE() << D.name() << ": " << E.message();
      return std::nullopt;
    }
  }
  if (rt::Error E = S->synchronize()) {
    ADD_FAILURE() << K.name() << " on " << D.name() << ": " << E.message();
    return std::nullopt;
  }
  return R;
}

/// Element I of a buffer of `Type`, as a double (integers exactly up to
/// 2^53, which is all these tests use).
double element(const std::vector<uint8_t> &Bytes, rt::ScalarType Type,
               size_t I) {
  const uint8_t *P = Bytes.data() + I * rt::typeSize(Type);
  auto Load = [&](auto V) {
    std::memcpy(&V, P, sizeof(V));
    return V;
  };
  switch (Type) {
  case rt::ScalarType::Bool:
    return Load(uint8_t()) != 0;
  case rt::ScalarType::I8:
    return Load(int8_t());
  case rt::ScalarType::I16:
    return Load(int16_t());
  case rt::ScalarType::I32:
    return Load(int32_t());
  case rt::ScalarType::I64:
    return double(Load(int64_t()));
  case rt::ScalarType::U8:
    return Load(uint8_t());
  case rt::ScalarType::U16:
    return Load(uint16_t());
  case rt::ScalarType::U32:
    return Load(uint32_t());
  case rt::ScalarType::U64:
    return double(Load(uint64_t()));
  case rt::ScalarType::F16:
  case rt::ScalarType::BF16:
  case rt::ScalarType::F32:
  case rt::ScalarType::F64:
  case rt::ScalarType::F8E4M3:
  case rt::ScalarType::F8E5M2: {
    uint64_t Bits = 0;
    std::memcpy(&Bits, P, rt::typeSize(Type));
    return rt::floatValue(Type, Bits);
  }
  }
  return 0;
}

/// kiln-run --check's tolerances (rtol, atol); 0, 0 for exact types.
std::pair<double, double> tolerance(rt::ScalarType Type) {
  switch (Type) {
  case rt::ScalarType::F32:
    return {1e-5, 1e-6};
  case rt::ScalarType::F16:
  case rt::ScalarType::BF16:
    return {1e-2, 1e-3};
  case rt::ScalarType::F8E4M3:
    return {0.125, 1e-2};
  case rt::ScalarType::F8E5M2:
    return {0.25, 1e-2};
  case rt::ScalarType::F64:
    return {1e-12, 1e-13};
  default:
    return {0, 0};
  }
}

bool matches(double A, double B, double Rtol, double Atol) {
  if (std::isnan(A) || std::isnan(B))
    return std::isnan(A) && std::isnan(B);
  if (A == B)
    return true;
  if (std::isinf(A) || std::isinf(B))
    return false;
  return std::fabs(A - B) <= Atol + Rtol * std::fabs(B);
}

class CrossDevice : public E2ETest {
protected:
  /// Runs kernel `Name` of `Bundle` on the test device, then on the host
  /// with the variant the first run took, and compares every buffer.
  void compare(const std::string &Bundle, const std::string &Name,
               const std::vector<Input> &In) {
    SCOPED_TRACE(Bundle + ".kpack, kernel " + Name);
    auto Host = rt::Device::open("host");
    ASSERT_TRUE(Host) << Host.error().message();
    rt::Kernel K = kernel(Bundle, Name);
    rt::Kernel HK = kernelOn(*Host, Bundle, Name);
    auto Got = runOn(*Dev, K, In, {});
    ASSERT_TRUE(Got);
    rt::LaunchOptions Same;
    Same.Variant = Got->Plan.Variant;
    auto Ref = runOn(*Host, HK, In, Same);
    ASSERT_TRUE(Ref);
    ASSERT_EQ(Ref->Plan.VariantName, Got->Plan.VariantName);
    TableRow &Row = currentRow();
    Row.Kernel = Name;
    Row.Variant = Got->Plan.VariantName + " (" + Got->Plan.Config + ")";
    size_t B = 0;
    for (const Input &I : In) {
      if (!I.Pointer)
        continue;
      const auto &A = Got->Buffers[B], &R = Ref->Buffers[B];
      ++B;
      auto [Rtol, Atol] = tolerance(I.Type);
      size_t Count = I.Bytes.size() / rt::typeSize(I.Type), Bad = 0;
      for (size_t E = 0; E < Count; ++E) {
        double X = element(A, I.Type, E), Y = element(R, I.Type, E);
        if (std::isfinite(Y) && std::isfinite(X))
          Row.MaxRelError = std::max(
              Row.MaxRelError, std::fabs(X - Y) / std::max(std::fabs(Y), 1e-30));
        if (matches(X, Y, Rtol, Atol) || Bad++ >= 5)
          continue;
        std::ostringstream Rule;
        if (Rtol == 0)
          Rule << "exact";
        else
          Rule << "|a-b| <= " << Atol << " + " << Rtol << "*|b|";
        ADD_FAILURE() << I.Name << "[" << E << "]: " << Dev->name() << " gives "
                      << X << ", host " << Y << " (" << rt::typeName(I.Type)
                      << " tolerance: " << Rule.str() << ")";
      }
      if (Bad > 5)
        ADD_FAILURE() << I.Name << ": " << Bad << " of " << Count
                      << " elements differ between " << Dev->name()
                      << " and the host";
    }
  }

  std::vector<uint16_t> bits16(size_t N, bool Half, float Lo, float Hi) {
    return random16(N, Half, Lo, Hi);
  }
};

using ST = rt::ScalarType;
constexpr size_t Pad = 41;

TEST_F(CrossDevice, VectorAdd) {
  size_t N = 4097;
  compare("vector_add", "vector_add",
          {buffer("x", ST::F32, randomF32(N, -100, 100)),
           buffer("y", ST::F32, randomF32(N, -100, 100)),
           output("z", ST::F32, N + Pad, PoisonFloat),
           scalar("n", Arg::i32(int32_t(N)))});
  compare("vector_add", "axpy_bf16",
          {scalar("a", Arg::f32(0.75f)),
           buffer("x", ST::BF16, bits16(N, false, -4, 4)),
           buffer("y", ST::BF16, bits16(N, false, -4, 4)),
           scalar("n", Arg::i32(int32_t(N)))});
}

TEST_F(CrossDevice, Softmax) {
  int32_t Rows = 5, Cols = 1000, Stride = 1004;
  compare("softmax", "softmax",
          {buffer("x", ST::F32, randomF32(Rows * Stride, -5, 5)),
           output("y", ST::F32, Rows * Stride, PoisonFloat),
           scalar("rows", Arg::i32(Rows)), scalar("cols", Arg::i32(Cols)),
           scalar("stride", Arg::i32(Stride))});
  int32_t Stride16 = 1008; // @div(8)
  compare("softmax", "softmax_bf16",
          {buffer("x", ST::BF16, bits16(Rows * Stride16, false, -5, 5)),
           output("y", ST::BF16, Rows * Stride16, PoisonFloat),
           scalar("rows", Arg::i32(Rows)), scalar("cols", Arg::i32(Cols)),
           scalar("stride", Arg::i32(Stride16))});
}

TEST_F(CrossDevice, LayerNorm) {
  int32_t Rows = 4, Cols = 1000, Stride = 1008;
  compare("layer_norm", "layer_norm",
          {buffer("x", ST::BF16, bits16(Rows * Stride, false, -3, 5)),
           output("y", ST::BF16, Rows * Stride, PoisonFloat),
           buffer("w", ST::BF16, bits16(Cols, false, 0.5f, 1.5f)),
           buffer("b", ST::BF16, bits16(Cols, false, -0.5f, 0.5f)),
           output("mean_out", ST::F32, Rows + Pad, PoisonFloat),
           output("rstd_out", ST::F32, Rows + Pad, PoisonFloat),
           scalar("rows", Arg::i32(Rows)), scalar("cols", Arg::i32(Cols)),
           scalar("stride", Arg::i32(Stride)), scalar("eps", Arg::f32(1e-5f))});
}

TEST_F(CrossDevice, RowReduce) {
  int32_t Rows = 7, Cols = 1300, Stride = 1304;
  auto X = randomF32(Rows * Stride, 0, 1);
  for (const char *Name : {"row_sum", "row_max"})
    compare("row_reduce", Name,
            {buffer("x", ST::F32, X),
             output("out", ST::F32, Rows + Pad, PoisonFloat),
             scalar("rows", Arg::i32(Rows)), scalar("cols", Arg::i32(Cols)),
             scalar("stride", Arg::i32(Stride))});
}

TEST_F(CrossDevice, Matmul) {
  int32_t M = 100, N = 70, K = 50, Lda = 64, Ldb = 72, Ldc = 80;
  for (const char *Name : {"matmul", "matmul_bf16"}) {
    bool Half = std::string(Name) == "matmul";
    ST T = Half ? ST::F16 : ST::BF16;
    compare("matmul", Name,
            {buffer("a", T, bits16(M * Lda, Half, -1, 1)),
             buffer("b", T, bits16(K * Ldb, Half, -1, 1)),
             output("c", T, M * Ldc + Pad, PoisonFloat),
             scalar("M", Arg::i32(M)), scalar("N", Arg::i32(N)),
             scalar("K", Arg::i32(K)), scalar("lda", Arg::i32(Lda)),
             scalar("ldb", Arg::i32(Ldb)), scalar("ldc", Arg::i32(Ldc))});
  }
}

TEST_F(CrossDevice, Attention) {
  int32_t BH = 4, Seq = 100, D = 64, Stride = 72;
  size_t Size = size_t(BH) * Seq * Stride;
  for (int Causal : {0, 1})
    compare("attention", "attention_fwd",
            {buffer("q", ST::BF16, bits16(Size, false, -2, 2)),
             buffer("k", ST::BF16, bits16(Size, false, -2, 2)),
             buffer("v", ST::BF16, bits16(Size, false, -1, 1)),
             output("o", ST::BF16, Size + Pad, PoisonFloat),
             scalar("sm_scale", Arg::f32(0.125f)), scalar("batch_heads", Arg::i32(BH)),
             scalar("seq", Arg::i32(Seq)), scalar("head_dim", Arg::i32(D)),
             scalar("stride_row", Arg::i32(Stride)),
             scalar("causal", Arg::i32(Causal))});
}

TEST_F(CrossDevice, Helpers) {
  int32_t N = 4097;
  compare("helpers", "gelu",
          {buffer("x", ST::F32, randomF32(N, -6, 6)),
           output("y", ST::F32, N + Pad, PoisonFloat),
           scalar("n", Arg::i32(N))});
  int32_t Rows = 3, Cols = 2500, Stride = 2510;
  compare("helpers", "row_cumsum",
          {buffer("x", ST::F32, randomF32(Rows * Stride, 0, 1)),
           output("y", ST::F32, Rows * Stride, PoisonFloat),
           scalar("rows", Arg::i32(Rows)), scalar("cols", Arg::i32(Cols)),
           scalar("stride", Arg::i32(Stride))});
  std::vector<float> Logits(6 * 2510);
  for (float &V : Logits)
    V = float(randomI32(1, -20, 20)[0]); // ties: the first index wins
  compare("helpers", "row_argmax",
          {buffer("logits", ST::F32, Logits),
           output("out_idx", ST::I32, 6 + Pad, PoisonInt),
           output("out_val", ST::F32, 6 + Pad, PoisonFloat),
           scalar("rows", Arg::i32(6)), scalar("vocab", Arg::i32(2500)),
           scalar("stride", Arg::i32(2510))});
  compare("helpers", "transpose",
          {buffer("x", ST::F32, randomF32(129 * 66)),
           output("y", ST::F32, 65 * 131, PoisonFloat),
           scalar("rows", Arg::i32(129)), scalar("cols", Arg::i32(65)),
           scalar("sx", Arg::i32(66)), scalar("sy", Arg::i32(131))});
  compare("helpers", "quantize_i8",
          {buffer("x", ST::F32, randomF32(4128, -10, 10)),
           output("q", ST::I8, 4128 + Pad, PoisonInt),
           output("scales", ST::F32, 4128 / 32 + Pad, PoisonFloat),
           scalar("n", Arg::i32(4128))});
  auto Ids = randomI32(5000, 0, 36);
  for (size_t I = 0; I < Ids.size(); I += 3)
    Ids[I] = 0; // many programs update bin 0
  compare("helpers", "histogram",
          {buffer("x", ST::I32, Ids),
           buffer("hist", ST::I32, std::vector<int32_t>(37 + Pad, 0)),
           scalar("n", Arg::i32(5000)), scalar("bins", Arg::i32(37))});
  compare("helpers", "embedding",
          {buffer("table", ST::BF16, bits16(50 * 102, false, -5, 5)),
           buffer("ids", ST::I32, std::vector<int32_t>{3, -1, 49, 0, 3, -1, 17}),
           output("out", ST::BF16, 7 * 105, PoisonFloat),
           scalar("n_ids", Arg::i32(7)), scalar("vocab", Arg::i32(50)),
           scalar("dim", Arg::i32(100)), scalar("ld_table", Arg::i32(102)),
           scalar("ld_out", Arg::i32(105))});
}

} // namespace
