//===- Fault.cpp - The test-only fault injection control ------------------===//
//
// Compiled only into the tests' copy of the runtime (KILN_FAULT_INJECTION,
// test/runtime/CMakeLists.txt); see Fault.h.
//
//===----------------------------------------------------------------------===//

#include "Fault.h"

#ifndef KILN_FAULT_INJECTION
#error "Fault.cpp belongs to the fault-injection build of the runtime only"
#endif

#include <array>
#include <atomic>
#include <mutex>

using namespace kiln::rt::detail;

namespace {
struct State {
  std::array<std::atomic<uint64_t>, fault::kNumPoints> Counts{};
  fault::Point Armed = fault::Point::Allocate;
  uint64_t ArmedAt = 0; ///< the first count of `Armed` that fails; 0: none
  uint64_t ArmedCount = 0; ///< how many fail from there
  std::mutex Mutex;     ///< guards Fired and FiredCall
  std::string Fired, FiredCall;
};

State &state() {
  static State S;
  return S;
}
} // namespace

bool fault::inject(Point P, const char *What) {
  State &S = state();
  uint64_t N = S.Counts[unsigned(P)].fetch_add(1) + 1;
  if (S.ArmedAt == 0 || P != S.Armed || N < S.ArmedAt ||
      N - S.ArmedAt >= S.ArmedCount)
    return false;
  std::lock_guard<std::mutex> Lock(S.Mutex);
  if (S.Fired.empty()) {
    S.FiredCall = What ? What : "?";
    S.Fired = std::string(control::name(P)) + " #" + std::to_string(N) +
              " (" + S.FiredCall + ")";
  }
  return true;
}

const char *fault::control::name(Point P) {
  switch (P) {
  case Point::Allocate:
    return "Allocate";
  case Point::FileRead:
    return "FileRead";
  case Point::DlOpen:
    return "DlOpen";
  case Point::DlSym:
    return "DlSym";
  case Point::ModuleLoad:
    return "ModuleLoad";
  case Point::Launch:
    return "Launch";
  case Point::DriverCall:
    return "DriverCall";
  }
  return "?";
}

void fault::control::reset() {
  State &S = state();
  for (auto &C : S.Counts)
    C.store(0);
  S.ArmedAt = 0;
  std::lock_guard<std::mutex> Lock(S.Mutex);
  S.Fired.clear();
  S.FiredCall.clear();
}

uint64_t fault::control::count(Point P) {
  return state().Counts[unsigned(P)].load();
}

void fault::control::arm(Point P, uint64_t N, uint64_t Count) {
  State &S = state();
  S.Armed = P;
  S.ArmedAt = N == 0 ? 0 : S.Counts[unsigned(P)].load() + N;
  S.ArmedCount = Count;
  std::lock_guard<std::mutex> Lock(S.Mutex);
  S.Fired.clear();
  S.FiredCall.clear();
}

std::string fault::control::fired() {
  State &S = state();
  std::lock_guard<std::mutex> Lock(S.Mutex);
  return S.Fired;
}

std::string fault::control::firedCall() {
  State &S = state();
  std::lock_guard<std::mutex> Lock(S.Mutex);
  return S.FiredCall;
}
