//===- kiln/tuning_db.h - The tuning database -------------------*- C++ -*-===//
//
// The tuning database (docs/tuning.md): an SQLite file in WAL mode with one
// row per (kernel hash, variant, device, key bucket) and its time. Launches
// use the process's database (kiln/runtime.h: tuningDatabasePath()), which
// recovers from a corrupt or foreign file by moving it aside; this class is
// the strict access that tools use (`kiln tune merge`, `export`): a file
// that is not a Kiln tuning database is an error, never changed.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TUNING_DB_H
#define KILN_TUNING_DB_H

#include "kiln/runtime.h"

#include <memory>
#include <string>
#include <vector>

namespace kiln::rt {

/// One measurement.
struct TuningRow {
  std::string KernelHash; ///< KernelInfo::Hash
  std::string Kernel;     ///< its name (informative: the hash is the key)
  std::string Variant;    ///< "BLOCK=1024, warps=4, stages=2"
  std::string Device;     ///< TuneResult::DeviceKey
  std::string Bucket;     ///< TuneResult::Bucket
  double Milliseconds = 0;
  unsigned Repeats = 0;
  /// When it was measured, UTC: "2026-11-26T19:49:03.123456Z".
  std::string MeasuredAt;
};

namespace detail {
class TuningDbImpl;
}

class TuningDatabase {
public:
  /// Opens a tuning database file, creating it (and its folder) if it does
  /// not exist and `Create` is set; ":memory:" is a private in-memory one.
  /// A corrupt file, a file that is not a Kiln tuning database, or one
  /// from a newer Kiln is an error (InvalidArgument), as is a file that
  /// cannot be opened (IO).
  static Expected<TuningDatabase> open(const std::string &Path,
                                       bool Create = true);

  /// The rows, all of them or those of one kernel hash, device and bucket
  /// (an empty filter matches everything), ordered by kernel, device,
  /// bucket and time.
  Expected<std::vector<TuningRow>> rows(const std::string &KernelHash = "",
                                        const std::string &Device = "",
                                        const std::string &Bucket = "") const;
  /// Inserts the rows in one transaction; a row replaces the one with the
  /// same kernel hash, variant, device and bucket.
  Error insert(const std::vector<TuningRow> &Rows);
  /// As insert, but a row replaces an existing one only if it was
  /// measured later (`kiln tune merge`).
  Error merge(const std::vector<TuningRow> &Rows);

  const std::string &path() const;

  const std::shared_ptr<detail::TuningDbImpl> &impl() const { return Impl; }

private:
  explicit TuningDatabase(std::shared_ptr<detail::TuningDbImpl> Impl)
      : Impl(std::move(Impl)) {}
  std::shared_ptr<detail::TuningDbImpl> Impl;
};

/// The current time as TuningRow::MeasuredAt writes it.
std::string tuningTimestamp();

} // namespace kiln::rt

#endif // KILN_TUNING_DB_H
