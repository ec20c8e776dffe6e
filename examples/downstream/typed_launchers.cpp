// Runs four example kernels through the typed launchers that
// kiln_add_kernels generated (example_kernels.h), on the best device there
// is (a GPU, else the host), and checks each result against a plain C++
// reference computed in double on fresh random inputs. Outputs are
// poisoned (NaN) before each launch, so a kernel that writes nothing fails.
//
// Exit code 0 when every result is within its tolerance.
#include "example_kernels.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

using kiln::rt::bf16;
using kiln::rt::DeviceArray;

namespace {

bool Ok = true;

/// Reports a runtime failure and remembers it.
bool failed(const kiln::rt::Error &E, const char *What) {
  if (!E)
    return false;
  std::fprintf(stderr, "%s: %s\n", What, E.message().c_str());
  Ok = false;
  return true;
}

/// Compares `Got` with `Want`: |got - want| <= Abs + Rel * |want| everywhere.
template <typename T>
void check(const char *Name, const std::vector<T> &Got,
           const std::vector<double> &Want, double Abs, double Rel) {
  double Worst = 0;
  size_t Bad = 0;
  for (size_t I = 0; I < Want.size(); ++I) {
    double G = double(float(Got[I]));
    double Err = std::fabs(G - Want[I]);
    if (!(Err <= Abs + Rel * std::fabs(Want[I])))
      ++Bad;
    if (!(Err <= Worst))
      Worst = Err;
  }
  std::printf("  %-13s %8zu values, max abs error %.3g: %s\n", Name,
              Want.size(), Worst, Bad ? "FAIL" : "ok");
  Ok &= Bad == 0;
}

} // namespace

int main() {
  auto Dev = kiln::rt::Device::open("auto");
  if (!Dev) {
    std::fprintf(stderr, "cannot open a device: %s\n",
                 Dev.error().message().c_str());
    return 1;
  }
  // A GPU that the kernels were not compiled for (TARGETS): the host.
  if (auto M = examples::kiln_bundle_vector_add.module(*Dev);
      !M && M.error().code() == kiln::rt::ErrorCode::NoImage) {
    std::printf("note: %s; running on the host\n",
                M.error().message().c_str());
    Dev = kiln::rt::Device::open("host");
  }
  auto S = Dev->createStream();
  if (!S) {
    std::fprintf(stderr, "%s\n", S.error().message().c_str());
    return 1;
  }
  unsigned Seed = std::random_device{}();
  std::printf("device %s, seed %u\n", Dev->description().c_str(), Seed);
  std::mt19937 Gen(Seed);
  std::uniform_real_distribution<float> Uniform(-4, 4);

  // vector_add and axpy_bf16 (vector_add.tile): n is not a multiple of
  // any block, so the last program is masked.
  {
    const int N = 1000003;
    std::vector<float> X(N), Y(N), Z;
    for (int I = 0; I < N; ++I)
      X[I] = Uniform(Gen), Y[I] = Uniform(Gen);
    auto DX = DeviceArray<float>::allocate(*Dev, N);
    auto DY = DeviceArray<float>::allocate(*Dev, N);
    auto DZ = DeviceArray<float>::allocate(*Dev, N);
    if (!DX || !DY || !DZ) {
      std::fprintf(stderr, "allocation failed\n");
      return 1;
    }
    if (!failed(DX->upload(*S, X), "upload") &&
        !failed(DY->upload(*S, Y), "upload") &&
        !failed(S->fill(DZ->buffer(), 0, 0xff, DZ->bytes()), "poison") &&
        !failed(examples::vector_add(*S, *DX, *DY, *DZ, N), "vector_add") &&
        !failed(DZ->download(*S, Z), "download") &&
        !failed(S->synchronize(), "synchronize")) {
      std::vector<double> Want(N);
      for (int I = 0; I < N; ++I)
        Want[I] = double(X[I]) + double(Y[I]);
      check("vector_add", Z, Want, 0, 0x1p-24);
    }

    std::vector<bf16> XB(N), YB(N), Out;
    for (int I = 0; I < N; ++I)
      XB[I] = bf16(Uniform(Gen)), YB[I] = bf16(Uniform(Gen));
    const float A = 1.5f;
    auto DXB = DeviceArray<bf16>::allocate(*Dev, N);
    auto DYB = DeviceArray<bf16>::allocate(*Dev, N);
    if (!DXB || !DYB) {
      std::fprintf(stderr, "allocation failed\n");
      return 1;
    }
    // axpy_bf16 writes y in place: y is the input and the output.
    if (!failed(DXB->upload(*S, XB), "upload") &&
        !failed(DYB->upload(*S, YB), "upload") &&
        !failed(examples::axpy_bf16(*S, A, *DXB, *DYB, N), "axpy_bf16") &&
        !failed(DYB->download(*S, Out), "download") &&
        !failed(S->synchronize(), "synchronize")) {
      std::vector<double> Want(N);
      for (int I = 0; I < N; ++I)
        Want[I] = A * double(float(XB[I])) + double(float(YB[I]));
      // One bf16 rounding of an f32 result: half a bf16 ulp, plus the f32
      // roundings of the product and the sum.
      check("axpy_bf16", Out, Want, 1e-6, 0x1p-8);
    }
  }

  // softmax and softmax_bf16 (softmax.tile): rows `Stride` elements apart,
  // Cols < Stride, so each row has a tail no program may touch.
  {
    const int Rows = 37, Cols = 1000, Stride = 1024;
    std::vector<float> X(size_t(Rows) * Stride), Y;
    for (float &V : X)
      V = Uniform(Gen);
    std::vector<double> Want(X.size());
    for (int R = 0; R < Rows; ++R) {
      const float *Row = &X[size_t(R) * Stride];
      double Max = -INFINITY, Sum = 0;
      for (int C = 0; C < Cols; ++C)
        Max = std::fmax(Max, Row[C]);
      for (int C = 0; C < Cols; ++C)
        Sum += std::exp(Row[C] - Max);
      for (int C = 0; C < Stride; ++C)
        Want[size_t(R) * Stride + C] =
            C < Cols ? std::exp(Row[C] - Max) / Sum : NAN;
    }
    auto DX = DeviceArray<float>::allocate(*Dev, X.size());
    auto DY = DeviceArray<float>::allocate(*Dev, X.size());
    if (!DX || !DY) {
      std::fprintf(stderr, "allocation failed\n");
      return 1;
    }
    if (!failed(DX->upload(*S, X), "upload") &&
        !failed(S->fill(DY->buffer(), 0, 0xff, DY->bytes()), "poison") &&
        !failed(examples::softmax(*S, *DX, *DY, Rows, Cols, Stride),
                "softmax") &&
        !failed(DY->download(*S, Y), "download") &&
        !failed(S->synchronize(), "synchronize")) {
      // The tails stay poisoned: compare the rows' first Cols values, and
      // check that the tails were not written.
      std::vector<float> Got;
      std::vector<double> Ref;
      bool TailsUntouched = true;
      for (int R = 0; R < Rows; ++R)
        for (int C = 0; C < Stride; ++C) {
          size_t I = size_t(R) * Stride + C;
          if (C < Cols) {
            Got.push_back(Y[I]);
            Ref.push_back(Want[I]);
          } else {
            TailsUntouched &= std::isnan(Y[I]);
          }
        }
      check("softmax", Got, Ref, 1e-6, 1e-5);
      if (!TailsUntouched) {
        std::printf("  softmax wrote past the end of a row: FAIL\n");
        Ok = false;
      }
    }

    std::vector<bf16> XB(X.size()), YB;
    for (size_t I = 0; I < X.size(); ++I)
      XB[I] = bf16(X[I]);
    std::vector<double> WantB;
    for (int R = 0; R < Rows; ++R) {
      const bf16 *Row = &XB[size_t(R) * Stride];
      double Max = -INFINITY, Sum = 0;
      for (int C = 0; C < Cols; ++C)
        Max = std::fmax(Max, float(Row[C]));
      for (int C = 0; C < Cols; ++C)
        Sum += std::exp(float(Row[C]) - Max);
      for (int C = 0; C < Cols; ++C)
        WantB.push_back(std::exp(float(Row[C]) - Max) / Sum);
    }
    auto DXB = DeviceArray<bf16>::allocate(*Dev, XB.size());
    auto DYB = DeviceArray<bf16>::allocate(*Dev, XB.size());
    if (!DXB || !DYB) {
      std::fprintf(stderr, "allocation failed\n");
      return 1;
    }
    if (!failed(DXB->upload(*S, XB), "upload") &&
        !failed(S->fill(DYB->buffer(), 0, 0xff, DYB->bytes()), "poison") &&
        !failed(examples::softmax_bf16(*S, *DXB, *DYB, Rows, Cols, Stride),
                "softmax_bf16") &&
        !failed(DYB->download(*S, YB), "download") &&
        !failed(S->synchronize(), "synchronize")) {
      std::vector<bf16> Got;
      for (int R = 0; R < Rows; ++R)
        for (int C = 0; C < Cols; ++C)
          Got.push_back(YB[size_t(R) * Stride + C]);
      check("softmax_bf16", Got, WantB, 1e-6, 0x1p-8);
    }
  }

  std::printf("%s\n", Ok ? "all results match the reference" : "FAILED");
  return Ok ? 0 : 1;
}
