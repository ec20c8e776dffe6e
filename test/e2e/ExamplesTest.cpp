//===- ExamplesTest.cpp - examples/ kernels end to end ---------------------===//
#include "E2E.h"

#include <algorithm>
#include <numeric>

using namespace kiln;
using namespace kiln::e2e;

namespace {

class Examples : public E2ETest {};

// Extra elements after each output: must keep their poison.
constexpr size_t Pad = 67;

//===-- vector_add.tile ---------------------------------------------------===//

TEST_F(Examples, VectorAdd) {
  auto K = kernel("vector_add", "vector_add");
  for (size_t N : {size_t(1), size_t(1000), size_t(1025), size_t(4097),
                   size_t(1) << 20}) {
    SCOPED_TRACE("n = " + std::to_string(N));
    auto X = randomF32(N, -100, 100), Y = randomF32(N, -100, 100);
    Buffer BX = upload(X), BY = upload(Y);
    Buffer BZ = poisoned<float>(N + Pad, PoisonFloat);
    auto P = launch(K, {Arg::pointer(BX), Arg::pointer(BY), Arg::pointer(BZ),
                        Arg::i32(int32_t(N))});
    EXPECT_EQ(P.programs(), (N + 1023) / 1024);
    auto Z = download<float>(BZ, N);
    std::vector<double> G(Z.begin(), Z.end()), R(N);
    for (size_t I = 0; I < N; ++I)
      R[I] = double(X[I]) + double(Y[I]);
    expectClose("z", G, R, 1e-5);
    expectPoison("z", download<uint8_t>(BZ, (N + Pad) * 4), N * 4,
                 (N + Pad) * 4, PoisonFloat);
  }
}

TEST_F(Examples, Axpy) {
  auto K = kernel("vector_add", "axpy");
  for (size_t N : {1, 1000, 1025, 4097}) {
    SCOPED_TRACE("n = " + std::to_string(N));
    float A = randomF32(1, -3, 3)[0];
    auto X = randomF32(N), Y = randomF32(N);
    // y is in place: pad it with poison past n.
    Buffer BX = upload(X);
    Buffer BY = poisoned<float>(N + Pad, PoisonFloat);
    ASSERT_FALSE(Str->copyToDevice(BY, 0, Y.data(), N * 4));
    launch(K, {Arg::f32(A), Arg::pointer(BX), Arg::pointer(BY),
               Arg::i32(int32_t(N))});
    auto Z = download<float>(BY, N);
    std::vector<double> G(Z.begin(), Z.end()), R(N);
    for (size_t I = 0; I < N; ++I)
      R[I] = double(A) * X[I] + Y[I];
    expectClose("y", G, R, 1e-5);
    expectPoison("y", download<uint8_t>(BY, (N + Pad) * 4), N * 4,
                 (N + Pad) * 4, PoisonFloat);
  }
}

TEST_F(Examples, AxpyBF16) {
  auto K = kernel("vector_add", "axpy_bf16");
  for (size_t N : {1, 1000, 1025, 4097}) {
    SCOPED_TRACE("n = " + std::to_string(N));
    float A = randomF32(1, -3, 3)[0];
    auto X = random16(N, false, -4, 4), Y = random16(N, false, -4, 4);
    Buffer BX = upload(X);
    Buffer BY = poisoned<uint16_t>(N + Pad, PoisonFloat);
    ASSERT_FALSE(Str->copyToDevice(BY, 0, Y.data(), N * 2));
    launch(K, {Arg::f32(A), Arg::pointer(BX), Arg::pointer(BY),
               Arg::i32(int32_t(N))});
    auto Z = download<uint16_t>(BY, N);
    std::vector<double> G(N), R(N);
    for (size_t I = 0; I < N; ++I) {
      G[I] = bf16(Z[I]);
      R[I] = double(A) * bf16(X[I]) + bf16(Y[I]);
    }
    expectClose("y", G, R, 1e-2, 0.1);
    expectPoison("y", download<uint8_t>(BY, (N + Pad) * 2), N * 2,
                 (N + Pad) * 2, PoisonFloat);
  }
}

//===-- softmax.tile / lang_examples.tile -----------------------------------===//

static std::vector<double> softmaxRef(const std::vector<double> &X, size_t Rows,
                                      size_t Cols, size_t Stride) {
  std::vector<double> R(Rows * Cols);
  for (size_t r = 0; r < Rows; ++r) {
    double M = -INFINITY, S = 0;
    for (size_t c = 0; c < Cols; ++c)
      M = std::max(M, X[r * Stride + c]);
    for (size_t c = 0; c < Cols; ++c)
      S += std::exp(X[r * Stride + c] - M);
    for (size_t c = 0; c < Cols; ++c)
      R[r * Cols + c] = std::exp(X[r * Stride + c] - M) / S;
  }
  return R;
}

static void softmaxF32(E2ETest &T, const rt::Kernel &K) {
  for (size_t Cols : {1, 200, 1000}) {
    size_t Rows = 3, Stride = (Cols + 3) / 4 * 4 + 4;
    SCOPED_TRACE("cols = " + std::to_string(Cols));
    auto X = T.randomF32(Rows * Stride, -5, 5);
    Buffer BX = T.upload(X);
    Buffer BY = T.poisoned<float>(Rows * Stride, PoisonFloat);
    T.launch(K, {Arg::pointer(BX), Arg::pointer(BY), Arg::i32(Rows),
                 Arg::i32(Cols), Arg::i32(Stride)});
    auto Y = T.download<float>(BY, Rows * Stride);
    auto Bytes = T.download<uint8_t>(BY, Rows * Stride * 4);
    std::vector<double> XD(X.begin(), X.end()), G(Rows * Cols);
    for (size_t r = 0; r < Rows; ++r) {
      for (size_t c = 0; c < Cols; ++c)
        G[r * Cols + c] = Y[r * Stride + c];
      expectPoison("y row gap", Bytes, (r * Stride + Cols) * 4,
                   (r + 1) * Stride * 4, PoisonFloat);
    }
    expectClose("y", G, softmaxRef(XD, Rows, Cols, Stride), 1e-5, 1e-30);
  }
}

TEST_F(Examples, Softmax) { softmaxF32(*this, kernel("softmax", "softmax")); }
TEST_F(Examples, LangSoftmax) {
  softmaxF32(*this, kernel("lang_examples", "softmax"));
}

TEST_F(Examples, SoftmaxBF16) {
  auto K = kernel("softmax", "softmax_bf16");
  for (size_t Cols : {1, 200, 1000}) {
    size_t Rows = 3, Stride = (Cols + 7) / 8 * 8 + 8;
    SCOPED_TRACE("cols = " + std::to_string(Cols));
    auto X = random16(Rows * Stride, false, -5, 5);
    Buffer BX = upload(X);
    Buffer BY = poisoned<uint16_t>(Rows * Stride, PoisonFloat);
    launch(K, {Arg::pointer(BX), Arg::pointer(BY), Arg::i32(Rows),
               Arg::i32(Cols), Arg::i32(Stride)});
    auto Y = download<uint16_t>(BY, Rows * Stride);
    auto Bytes = download<uint8_t>(BY, Rows * Stride * 2);
    std::vector<double> XD(X.size()), G(Rows * Cols);
    for (size_t I = 0; I < X.size(); ++I)
      XD[I] = bf16(X[I]);
    for (size_t r = 0; r < Rows; ++r) {
      for (size_t c = 0; c < Cols; ++c)
        G[r * Cols + c] = bf16(Y[r * Stride + c]);
      expectPoison("y row gap", Bytes, (r * Stride + Cols) * 2,
                   (r + 1) * Stride * 2, PoisonFloat);
    }
    expectClose("y", G, softmaxRef(XD, Rows, Cols, Stride), 1e-2, 1e-30);
  }
}

//===-- layer_norm.tile ---------------------------------------------------===//

TEST_F(Examples, LayerNorm) {
  auto K = kernel("layer_norm", "layer_norm");
  for (size_t Cols : {1, 200, 1000}) {
    size_t Rows = 3, Stride = (Cols + 7) / 8 * 8 + 8;
    SCOPED_TRACE("cols = " + std::to_string(Cols));
    float Eps = 1e-5f;
    auto X = random16(Rows * Stride, false, -3, 3);
    auto W = random16(Cols, false, -2, 2), B = random16(Cols, false, -1, 1);
    Buffer BX = upload(X), BW = upload(W), BB = upload(B);
    Buffer BY = poisoned<uint16_t>(Rows * Stride, PoisonFloat);
    Buffer BM = poisoned<float>(Rows + Pad, PoisonFloat);
    Buffer BR = poisoned<float>(Rows + Pad, PoisonFloat);
    launch(K, {Arg::pointer(BX), Arg::pointer(BY), Arg::pointer(BW),
               Arg::pointer(BB), Arg::pointer(BM), Arg::pointer(BR),
               Arg::i32(Rows), Arg::i32(Cols), Arg::i32(Stride),
               Arg::f32(Eps)});
    auto Y = download<uint16_t>(BY, Rows * Stride);
    auto Mean = download<float>(BM, Rows), Rstd = download<float>(BR, Rows);
    std::vector<double> G(Rows * Cols), R(Rows * Cols), GM(Rows), RM(Rows),
        GR(Rows), RR(Rows);
    for (size_t r = 0; r < Rows; ++r) {
      double S = 0, V = 0;
      for (size_t c = 0; c < Cols; ++c)
        S += bf16(X[r * Stride + c]);
      double Mu = S / Cols;
      for (size_t c = 0; c < Cols; ++c)
        V += (bf16(X[r * Stride + c]) - Mu) * (bf16(X[r * Stride + c]) - Mu);
      double Rs = 1 / std::sqrt(V / Cols + double(Eps));
      GM[r] = Mean[r], RM[r] = Mu, GR[r] = Rstd[r], RR[r] = Rs;
      for (size_t c = 0; c < Cols; ++c) {
        G[r * Cols + c] = bf16(Y[r * Stride + c]);
        R[r * Cols + c] =
            (bf16(X[r * Stride + c]) - Mu) * Rs * bf16(W[c]) + bf16(B[c]);
      }
    }
    expectClose("y", G, R, 1e-2, 1.0);
    expectClose("mean", GM, RM, 1e-5, 1.0);
    expectClose("rstd", GR, RR, 1e-5, 1.0);
    expectPoison("mean", download<uint8_t>(BM, (Rows + Pad) * 4), Rows * 4,
                 (Rows + Pad) * 4, PoisonFloat);
  }
}

//===-- row_reduce.tile ---------------------------------------------------===//

TEST_F(Examples, RowSumRowMax) {
  auto KS = kernel("row_reduce", "row_sum");
  auto KM = kernel("row_reduce", "row_max");
  struct Shape { size_t Rows, Cols; };
  // The tall case's many programs: 100000 on the host and GPUs; 4000 on an
  // emulator, which runs each lane as a fiber (100000 programs of 256
  // lanes took minutes there, seven under AddressSanitizer).
  size_t Tall = testDevice()->kind() == rt::DeviceKind::Emulator ? 4000 : 100000;
  for (Shape Sh : {Shape{3, 1}, Shape{3, 200}, Shape{3, 1000},
                   Shape{3, 1025}, Shape{Tall, 1}}) {
    size_t Rows = Sh.Rows, Cols = Sh.Cols, Stride = (Cols + 3) / 4 * 4;
    SCOPED_TRACE("rows = " + std::to_string(Rows) +
                 ", cols = " + std::to_string(Cols));
    auto X = randomF32(Rows * Stride, -10, 10);
    Buffer BX = upload(X);
    for (bool Max : {false, true}) {
      Buffer BO = poisoned<float>(Rows + Pad, PoisonFloat);
      auto P = launch(Max ? KM : KS, {Arg::pointer(BX), Arg::pointer(BO),
                                      Arg::i32(Rows), Arg::i32(Cols),
                                      Arg::i32(Stride)});
      EXPECT_EQ(P.programs(), Rows);
      auto O = download<float>(BO, Rows);
      std::vector<double> G(O.begin(), O.end()), R(Rows);
      for (size_t r = 0; r < Rows; ++r) {
        double S = 0, M = -INFINITY, A = 0;
        for (size_t c = 0; c < Cols; ++c) {
          S += X[r * Stride + c];
          A += std::fabs(X[r * Stride + c]);
          M = std::max<double>(M, X[r * Stride + c]);
        }
        R[r] = Max ? M : S;
        // Summation order differs (docs/language.md, Numerics): judge the
        // sum relative to the sum of magnitudes.
        if (!Max && std::fabs(G[r] - S) <= 1e-5 * std::max(A, 1.0))
          G[r] = S;
      }
      expectClose(Max ? "max" : "sum", G, R, 1e-5);
      expectPoison("out", download<uint8_t>(BO, (Rows + Pad) * 4), Rows * 4,
                   (Rows + Pad) * 4, PoisonFloat);
    }
  }
}

//===-- matmul.tile / lang_examples.tile ------------------------------------===//

/// C = A B with leading dimensions `Ld` (A, B, C; 0: the default padding
/// of the rows); returns the launch's plan.
static rt::LaunchPlan matmulTest(E2ETest &T, const rt::Kernel &K, bool Half,
                                 size_t M, size_t N, size_t KD,
                                 std::array<size_t, 3> Ld = {}) {
  SCOPED_TRACE(K.name() + " M=" + std::to_string(M) + " N=" +
               std::to_string(N) + " K=" + std::to_string(KD));
  size_t Lda = Ld[0] ? Ld[0] : (KD + 7) / 8 * 8 + 8;
  size_t Ldb = Ld[1] ? Ld[1] : (N + 7) / 8 * 8;
  size_t Ldc = Ld[2] ? Ld[2] : Ldb + 8;
  auto A = T.random16((M - 1) * Lda + KD, Half);
  auto B = T.random16(KD * Ldb, Half);
  Buffer BA = T.upload(A), BB = T.upload(B);
  Buffer BC = T.poisoned<uint16_t>(M * Ldc + Pad, PoisonFloat);
  auto Cv = [&](uint16_t X) { return Half ? f16(X) : bf16(X); };
  rt::LaunchPlan Plan =
      T.launch(K, {Arg::pointer(BA), Arg::pointer(BB), Arg::pointer(BC),
                   Arg::i32(M), Arg::i32(N), Arg::i32(KD), Arg::i32(Lda),
                   Arg::i32(Ldb), Arg::i32(Ldc)});
  auto C = T.download<uint16_t>(BC, M * Ldc + Pad);
  std::vector<double> G(M * N), R(M * N);
  for (size_t i = 0; i < M; ++i)
    for (size_t j = 0; j < N; ++j) {
      double S = 0;
      for (size_t k = 0; k < KD; ++k)
        S += Cv(A[i * Lda + k]) * Cv(B[k * Ldb + j]);
      R[i * N + j] = S;
      G[i * N + j] = Cv(C[i * Ldc + j]);
    }
  expectClose("c", G, R, 1e-2, 1.0);
  for (size_t i = 0; i < M; ++i)
    for (size_t j = N; j < (i + 1 == M ? Ldc + Pad : Ldc); ++j)
      if (C[i * Ldc + j] != 0xFFFF) {
        ADD_FAILURE() << "c[" << i << ", " << j << "] (out of range) written";
        return Plan;
      }
  return Plan;
}

TEST_F(Examples, Matmul) {
  for (const char *Name : {"matmul", "matmul_ptr", "matmul_bf16"}) {
    auto K = kernel("matmul", Name);
    bool Half = std::string(Name) != "matmul_bf16";
    matmulTest(*this, K, Half, 33, 1, 1);
    matmulTest(*this, K, Half, 100, 70, 50);
    matmulTest(*this, K, Half, 129, 130, 97);
    // BM = 16 (the decode shape, M <= 32), in its own bundle.
    auto K16 = kernel("matmul16", Name);
    matmulTest(*this, K16, Half, 1, 1, 1);
    matmulTest(*this, K16, Half, 16, 200, 75);
    matmulTest(*this, K16, Half, 31, 65, 33);
  }
}

// Every integer a multiple of 16 and the strides within the fast path's
// bounds: the GPU images' fast path runs (on AMD targets its view boxes
// are accessed as a uniform base plus 32-bit offsets, docs/codegen-gpu.md
// "Range-checked accesses"; Builtins.StridedViewBound covers a stride past
// the bound). The host has one image per variant.
TEST_F(Examples, MatmulFastPath) {
  bool Gpu = Dev->kind() != rt::DeviceKind::Host;
  for (const char *Name : {"matmul", "matmul_bf16"}) {
    SCOPED_TRACE(Name);
    auto K = kernel("matmul", Name);
    bool Half = std::string(Name) != "matmul_bf16";
    rt::LaunchPlan P = matmulTest(*this, K, Half, 64, 96, 48, {64, 112, 128});
    EXPECT_EQ(runsFastPath(K, P), Gpu);
  }
}

TEST_F(Examples, LangMatmul) {
  auto K = kernel("lang_examples", "matmul");
  matmulTest(*this, K, true, 1, 1, 1);
  matmulTest(*this, K, true, 100, 70, 50);
  matmulTest(*this, K, true, 129, 130, 97);
}

//===-- attention.tile ----------------------------------------------------===//

TEST_F(Examples, Attention) {
  auto K = kernel("attention", "attention_fwd");
  for (int Causal : {0, 1})
    for (size_t Batch : {1, 2}) {
      size_t Heads = 2, Seq = 100, D = 64, Stride = 72, BH = Batch * Heads;
      SCOPED_TRACE("causal = " + std::to_string(Causal) +
                   ", batch = " + std::to_string(Batch));
      float Scale = 1.0f / std::sqrt(float(D));
      auto Q = random16(BH * Seq * Stride, false, -2, 2);
      auto Kt = random16(BH * Seq * Stride, false, -2, 2);
      auto V = random16(BH * Seq * Stride, false, -1, 1);
      Buffer BQ = upload(Q), BK = upload(Kt), BV = upload(V);
      Buffer BO = poisoned<uint16_t>(BH * Seq * Stride + Pad, PoisonFloat);
      launch(K, {Arg::pointer(BQ), Arg::pointer(BK), Arg::pointer(BV),
                 Arg::pointer(BO), Arg::f32(Scale), Arg::i32(BH),
                 Arg::i32(Seq), Arg::i32(D), Arg::i32(Stride),
                 Arg::i32(Causal)});
      auto O = download<uint16_t>(BO, BH * Seq * Stride + Pad);
      std::vector<double> G, R;
      for (size_t h = 0; h < BH; ++h)
        for (size_t i = 0; i < Seq; ++i) {
          size_t Row = (h * Seq + i) * Stride;
          size_t Last = Causal ? i + 1 : Seq;
          std::vector<double> S(Last);
          double Mx = -INFINITY, Sum = 0;
          for (size_t j = 0; j < Last; ++j) {
            double Dot = 0;
            for (size_t d = 0; d < D; ++d)
              Dot += bf16(Q[Row + d]) * bf16(Kt[(h * Seq + j) * Stride + d]);
            S[j] = Dot * Scale;
            Mx = std::max(Mx, S[j]);
          }
          for (auto &X : S)
            Sum += (X = std::exp(X - Mx));
          for (size_t d = 0; d < D; ++d) {
            double Acc = 0;
            for (size_t j = 0; j < Last; ++j)
              Acc += S[j] * bf16(V[(h * Seq + j) * Stride + d]);
            R.push_back(Acc / Sum);
            G.push_back(bf16(O[Row + d]));
          }
          for (size_t d = D; d < Stride; ++d)
            if (O[Row + d] != 0xFFFF) {
              ADD_FAILURE() << "o row " << h * Seq + i << " column " << d
                            << " (past head_dim) written";
              break;
            }
        }
      expectClose("o", G, R, 1e-2, 1.0);
      for (size_t I = BH * Seq * Stride; I < O.size(); ++I)
        ASSERT_EQ(O[I], 0xFFFF) << "o written past its end";
    }
}

//===-- helpers.tile ------------------------------------------------------===//

TEST_F(Examples, Gelu) {
  auto K = kernel("helpers", "gelu");
  for (size_t N : {1, 1000, 1025, 4097}) {
    SCOPED_TRACE("n = " + std::to_string(N));
    auto X = randomF32(N, -6, 6);
    Buffer BX = upload(X), BY = poisoned<float>(N + Pad, PoisonFloat);
    launch(K, {Arg::pointer(BX), Arg::pointer(BY), Arg::i32(N)});
    auto Y = download<float>(BY, N);
    std::vector<double> G(Y.begin(), Y.end()), R(N);
    for (size_t I = 0; I < N; ++I) {
      double x = X[I];
      R[I] = 0.5 * x *
             (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    }
    expectClose("y", G, R, 1e-5, 1.0);
    expectPoison("y", download<uint8_t>(BY, (N + Pad) * 4), N * 4,
                 (N + Pad) * 4, PoisonFloat);
  }
}

TEST_F(Examples, RowCumsum) {
  auto K = kernel("helpers", "row_cumsum");
  for (size_t Cols : {1, 200, 1000, 2500}) {
    size_t Rows = 3, Stride = Cols + 5;
    SCOPED_TRACE("cols = " + std::to_string(Cols));
    auto X = randomF32(Rows * Stride);
    Buffer BX = upload(X), BY = poisoned<float>(Rows * Stride, PoisonFloat);
    launch(K, {Arg::pointer(BX), Arg::pointer(BY), Arg::i32(Rows),
               Arg::i32(Cols), Arg::i32(Stride)});
    auto Y = download<float>(BY, Rows * Stride);
    auto Bytes = download<uint8_t>(BY, Rows * Stride * 4);
    std::vector<double> G, R;
    for (size_t r = 0; r < Rows; ++r) {
      double S = 0, A = 0;
      for (size_t c = 0; c < Cols; ++c) {
        S += X[r * Stride + c];
        A += std::fabs(X[r * Stride + c]);
        double Got = Y[r * Stride + c];
        // Judged against the sum of magnitudes (summation order differs).
        R.push_back(S);
        G.push_back(std::fabs(Got - S) <= 1e-5 * std::max(A, 1.0) ? S : Got);
      }
      expectPoison("y gap", Bytes, (r * Stride + Cols) * 4,
                   (r + 1) * Stride * 4, PoisonFloat);
    }
    expectClose("y", G, R, 1e-5);
  }
}

TEST_F(Examples, RowArgmax) {
  auto K = kernel("helpers", "row_argmax");
  for (size_t Vocab : {1, 200, 1000, 5000}) {
    size_t Rows = 5, Stride = Vocab + 3;
    SCOPED_TRACE("vocab = " + std::to_string(Vocab));
    // Small integers: many ties; the first index must win.
    std::vector<float> X(Rows * Stride);
    for (auto &V : X)
      V = float(randomI32(1, -20, 20)[0]);
    Buffer BX = upload(X);
    Buffer BI = poisoned<int32_t>(Rows + Pad, PoisonInt);
    Buffer BV = poisoned<float>(Rows + Pad, PoisonFloat);
    launch(K, {Arg::pointer(BX), Arg::pointer(BI), Arg::pointer(BV),
               Arg::i32(Rows), Arg::i32(Vocab), Arg::i32(Stride)});
    auto I = download<int32_t>(BI, Rows);
    auto V = download<float>(BV, Rows);
    for (size_t r = 0; r < Rows; ++r) {
      auto B = X.begin() + r * Stride;
      auto It = std::max_element(B, B + Vocab);
      EXPECT_EQ(I[r], It - B) << "row " << r;
      EXPECT_EQ(V[r], *It) << "row " << r;
    }
    expectPoison("idx", download<uint8_t>(BI, (Rows + Pad) * 4), Rows * 4,
                 (Rows + Pad) * 4, PoisonInt);
  }
}

TEST_F(Examples, Transpose) {
  auto K = kernel("helpers", "transpose");
  struct Shape { size_t Rows, Cols; };
  for (Shape Sh : {Shape{1, 1}, Shape{3, 200}, Shape{70, 33}, Shape{129, 65}}) {
    size_t Rows = Sh.Rows, Cols = Sh.Cols, Sx = Cols + 1, Sy = Rows + 2;
    SCOPED_TRACE("rows = " + std::to_string(Rows) +
                 ", cols = " + std::to_string(Cols));
    auto X = randomF32(Rows * Sx);
    Buffer BX = upload(X), BY = poisoned<float>(Cols * Sy, PoisonFloat);
    launch(K, {Arg::pointer(BX), Arg::pointer(BY), Arg::i32(Rows),
               Arg::i32(Cols), Arg::i32(Sx), Arg::i32(Sy)});
    auto Y = download<float>(BY, Cols * Sy);
    auto Bytes = download<uint8_t>(BY, Cols * Sy * 4);
    for (size_t c = 0; c < Cols; ++c) {
      for (size_t r = 0; r < Rows; ++r)
        if (Y[c * Sy + r] != X[r * Sx + c]) {
          ADD_FAILURE() << "y[" << c << ", " << r << "] = " << Y[c * Sy + r]
                        << ", expected " << X[r * Sx + c];
          return;
        }
      expectPoison("y gap", Bytes, (c * Sy + Rows) * 4, (c + 1) * Sy * 4,
                   PoisonFloat);
    }
  }
}

TEST_F(Examples, QuantizeI8) {
  auto K = kernel("helpers", "quantize_i8");
  for (size_t N : {32, 1024, 1056, 4128}) {
    SCOPED_TRACE("n = " + std::to_string(N));
    auto X = randomF32(N, -10, 10);
    for (size_t I = 0; I < 32 && N > 64; ++I)
      X[32 + I] = 0; // an all-zero group: scale 1
    Buffer BX = upload(X);
    Buffer BQ = poisoned<int8_t>(N + Pad, PoisonInt);
    Buffer BS = poisoned<float>(N / 32 + Pad, PoisonFloat);
    launch(K, {Arg::pointer(BX), Arg::pointer(BQ), Arg::pointer(BS),
               Arg::i32(N)});
    auto Q = download<int8_t>(BQ, N + Pad);
    auto S = download<float>(BS, N / 32 + Pad);
    for (size_t g = 0; g < N / 32; ++g) {
      float Amax = 0;
      for (size_t I = 0; I < 32; ++I)
        Amax = std::max(Amax, std::fabs(X[g * 32 + I]));
      float Scale = Amax > 0 ? Amax / 127.0f : 1.0f;
      ASSERT_EQ(S[g], Scale) << "group " << g;
      for (size_t I = 0; I < 32; ++I) {
        float V = std::floor(X[g * 32 + I] / Scale + 0.5f);
        ASSERT_EQ(Q[g * 32 + I], int8_t(std::clamp(V, -128.0f, 127.0f)))
            << "element " << g * 32 + I;
      }
    }
    for (size_t I = N; I < N + Pad; ++I)
      ASSERT_EQ(uint8_t(Q[I]), PoisonInt) << "q written past n";
    for (size_t I = N / 32; I < N / 32 + Pad; ++I) {
      uint32_t B;
      std::memcpy(&B, &S[I], 4);
      ASSERT_EQ(B, 0xFFFFFFFFu) << "scales written past n / 32";
    }
  }
}

TEST_F(Examples, Histogram) {
  auto K = kernel("helpers", "histogram");
  for (size_t N : {size_t(1), size_t(1000), size_t(4097), size_t(3) << 20}) {
    SCOPED_TRACE("n = " + std::to_string(N));
    int32_t Bins = 37;
    auto X = randomI32(N, 0, Bins - 1);
    // Many programs hammer bin 0 too: the atomics must really be atomic.
    for (size_t I = 0; I < N; I += 3)
      X[I] = 0;
    Buffer BX = upload(X);
    Buffer BH = poisoned<int32_t>(Bins + Pad, PoisonInt);
    ASSERT_FALSE(Str->fill(BH, 0, 0, Bins * 4));
    launch(K, {Arg::pointer(BX), Arg::pointer(BH), Arg::i32(N),
               Arg::i32(Bins)});
    auto H = download<int32_t>(BH, Bins);
    std::vector<int32_t> R(Bins);
    for (int32_t V : X)
      ++R[V];
    EXPECT_EQ(H, R);
    expectPoison("hist", download<uint8_t>(BH, (Bins + Pad) * 4), Bins * 4,
                 (Bins + Pad) * 4, PoisonInt);
  }
}

/// Expects the launch (or the synchronization after it) to fail with a
/// trap. On the host the message is the assert's; on a GPU the assert's
/// text goes to the driver's printf and the error names the CUDA fault.
static void expectTrap(E2ETest &T, const rt::Kernel &K,
                       const std::vector<Arg> &Args, const char *Message) {
  auto P = K.launch(*T.Str, Args);
  rt::Error E = P ? T.Str->synchronize() : P.takeError();
  ASSERT_TRUE(bool(E)) << K.name() << ": the launch did not trap";
  EXPECT_EQ(E.code(), rt::ErrorCode::KernelTrapped) << E.message();
  if (!onRealGpu())
    EXPECT_NE(E.message().find(Message), std::string::npos) << E.message();
}

// A value outside [0, bins) fails the assert: the launch reports the trap.
// GPU targets compile assertions in checked builds only: the trap tests use
// the --check-bounds bundles (the host images there assert as always).
TEST_F(Examples, HistogramTrap) {
  auto K = kernel("helpers_checked", "histogram");
  std::vector<int32_t> X = {1, 2, 99, 3};
  Buffer BX = upload(X), BH = poisoned<int32_t>(8, 0);
  expectTrap(*this, K,
             {Arg::pointer(BX), Arg::pointer(BH), Arg::i32(4), Arg::i32(8)},
             "histogram: value outside [0, bins)");
}

TEST_F(Examples, Embedding) {
  auto K = kernel("helpers", "embedding");
  for (size_t Dim : {1, 100, 1000}) {
    size_t Vocab = 50, NIds = 7, LdT = Dim + 2, LdO = Dim + 5;
    SCOPED_TRACE("dim = " + std::to_string(Dim));
    auto T = random16(Vocab * LdT, false, -5, 5);
    std::vector<int32_t> Ids = {3, -1, 49, 0, 3, -1, 17};
    Buffer BT = upload(T), BI = upload(Ids);
    Buffer BO = poisoned<uint16_t>(NIds * LdO, PoisonFloat);
    launch(K, {Arg::pointer(BT), Arg::pointer(BI), Arg::pointer(BO),
               Arg::i32(NIds), Arg::i32(Vocab), Arg::i32(Dim), Arg::i32(LdT),
               Arg::i32(LdO)});
    auto O = download<uint16_t>(BO, NIds * LdO);
    for (size_t i = 0; i < NIds; ++i) {
      for (size_t d = 0; d < Dim; ++d) {
        uint16_t Want = Ids[i] < 0 ? 0 : T[Ids[i] * LdT + d];
        ASSERT_EQ(O[i * LdO + d], Want) << "out[" << i << ", " << d << "]";
      }
      for (size_t d = Dim; d < LdO; ++d)
        ASSERT_EQ(O[i * LdO + d], 0xFFFF) << "out gap written";
    }
  }
}

// An id >= vocab traps.
TEST_F(Examples, EmbeddingTrap) {
  auto K = kernel("helpers_checked", "embedding");
  std::vector<int32_t> Ids = {0, 60};
  auto T = random16(50 * 8, false);
  Buffer BT = upload(T), BI = upload(Ids), BO = poisoned<uint16_t>(16, 0);
  expectTrap(*this, K,
             {Arg::pointer(BT), Arg::pointer(BI), Arg::pointer(BO),
              Arg::i32(2), Arg::i32(50), Arg::i32(8), Arg::i32(8),
              Arg::i32(8)},
             "");
}

TEST_F(Examples, DebugDumpPrint) {
  auto K = kernel("helpers", "debug_dump");
  std::vector<std::string> Lines;
  Dev->setPrintHandler([&](const std::string &L) { Lines.push_back(L); });
  std::vector<float> X = {1.5f, -2.0f, 4.25f};
  Buffer BX = upload(X);
  launch(K, {Arg::pointer(BX), Arg::i32(3)});
  Dev->setPrintHandler(nullptr);
  std::string All;
  for (auto &L : Lines)
    All += L + "\n";
  SCOPED_TRACE("print output:\n" + All);
  EXPECT_NE(All.find("debug_dump: x = "), std::string::npos);
  EXPECT_NE(All.find("1.5"), std::string::npos);
  EXPECT_NE(All.find("-2"), std::string::npos);
  EXPECT_NE(All.find("4.25"), std::string::npos);
  EXPECT_NE(All.find("debug_dump: sum = "), std::string::npos);
  EXPECT_NE(All.find("3.75"), std::string::npos);
}

} // namespace
