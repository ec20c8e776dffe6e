//===- TuningDb.h - The tuning database's internals -------------*- C++ -*-===//
#ifndef KILN_RUNTIME_TUNINGDB_H
#define KILN_RUNTIME_TUNINGDB_H

#include "kiln/tuning_db.h"

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

struct sqlite3;

namespace kiln::rt::detail {

/// A bucket filter that matches every bucket ("" is a bucket: no key).
constexpr const char *kAnyBucket = "\x01*";

class TuningDbImpl {
public:
  enum class OpenStatus { Ok, Corrupt, Foreign, Newer, Unwritable };
  struct OpenResult {
    OpenStatus Status = OpenStatus::Ok;
    std::shared_ptr<TuningDbImpl> Db; ///< set when Ok
    Error Err;
  };
  /// Opens `Path` (":memory:": a private one); a corrupt, foreign or newer
  /// file, or one that cannot be written, is an error that says which.
  static OpenResult openStrict(const std::string &Path, bool Create);

  ~TuningDbImpl();
  /// Bucket kAnyBucket matches every bucket; "" only rows without a key.
  Expected<std::vector<TuningRow>> rows(const std::string &KernelHash,
                                        const std::string &Device,
                                        const std::string &Bucket);
  Error write(const std::vector<TuningRow> &Rows, bool Merge);

  std::string Path;
  bool InMemory = false;

private:
  TuningDbImpl() = default;
  Error exec(const char *Sql, const std::string &What);
  Error failure(const std::string &What, int Rc) const;
  sqlite3 *Db = nullptr;
  int LastRc = 0;
  std::mutex Mutex;
};

/// The process's database at `Path`, never failing: a corrupt or foreign
/// file is moved aside ("PATH.corrupt-<time>") and a new one created; a
/// location that cannot be written gives an in-memory database holding
/// what the file had; each with a warning through `Warn`.
std::shared_ptr<TuningDbImpl>
openProcessDatabase(const std::string &Path,
                    const std::function<void(const std::string &)> &Warn);

} // namespace kiln::rt::detail

#endif // KILN_RUNTIME_TUNINGDB_H
