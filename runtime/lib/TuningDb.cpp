//===- TuningDb.cpp - The SQLite tuning database --------------------------===//
//
// One table of measurements keyed by (kernel hash, variant, device, bucket)
// and a meta table that names the format. WAL mode and a long busy timeout
// let many processes read and write one file at once; every write is one
// transaction, so a process killed halfway leaves the file as it was.
//
//===----------------------------------------------------------------------===//
#include "TuningDb.h"

#include <sqlite3.h>

#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>
#include <sys/stat.h>
#include <unistd.h>

using namespace kiln::rt;
using namespace kiln::rt::detail;

namespace {

constexpr const char *kFormat = "kiln-tuning-db";
constexpr int kVersion = 1;

const char *const kSchema = R"(
CREATE TABLE IF NOT EXISTS kiln_meta(
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS timings(
  kernel_hash TEXT NOT NULL,
  kernel TEXT NOT NULL,
  variant TEXT NOT NULL,
  device TEXT NOT NULL,
  bucket TEXT NOT NULL,
  milliseconds REAL NOT NULL,
  repeats INTEGER NOT NULL,
  measured_at TEXT NOT NULL,
  PRIMARY KEY(kernel_hash, variant, device, bucket));
INSERT OR IGNORE INTO kiln_meta VALUES('format', 'kiln-tuning-db');
INSERT OR IGNORE INTO kiln_meta VALUES('version', '1');
)";

/// A prepared statement, finalized on scope exit.
class Statement {
public:
  Statement(sqlite3 *Db, const char *Sql) {
    Rc = sqlite3_prepare_v2(Db, Sql, -1, &S, nullptr);
  }
  ~Statement() { sqlite3_finalize(S); }
  Statement(const Statement &) = delete;
  Statement &operator=(const Statement &) = delete;
  int prepared() const { return Rc; }
  sqlite3_stmt *get() const { return S; }
  void text(int I, const std::string &V) {
    sqlite3_bind_text(S, I, V.data(), int(V.size()), SQLITE_TRANSIENT);
  }
  std::string column(int I) const {
    const unsigned char *T = sqlite3_column_text(S, I);
    return T ? reinterpret_cast<const char *>(T) : "";
  }

private:
  sqlite3_stmt *S = nullptr;
  int Rc = SQLITE_OK;
};

/// The columns every query of the rows selects, in TuningRow's order.
constexpr const char *kRowColumns =
    "kernel_hash, kernel, variant, device, bucket, milliseconds, repeats, "
    "measured_at";

/// The row a statement over kRowColumns is on.
TuningRow readRow(const Statement &S) {
  TuningRow Row;
  Row.KernelHash = S.column(0);
  Row.Kernel = S.column(1);
  Row.Variant = S.column(2);
  Row.Device = S.column(3);
  Row.Bucket = S.column(4);
  Row.Milliseconds = sqlite3_column_double(S.get(), 5);
  Row.Repeats = unsigned(sqlite3_column_int64(S.get(), 6));
  Row.MeasuredAt = S.column(7);
  return Row;
}

bool isCorruption(int Rc) {
  Rc &= 0xff;
  return Rc == SQLITE_CORRUPT || Rc == SQLITE_NOTADB;
}

std::string sqliteMessage(sqlite3 *Db, int Rc) {
  const char *M = Db ? sqlite3_errmsg(Db) : nullptr;
  return M && *M ? M : sqlite3_errstr(Rc);
}

/// mkdir -p of the folder of `Path`; false with errno set on failure.
bool makeParent(const std::string &Path) {
  size_t Slash = Path.rfind('/');
  if (Slash == std::string::npos || Slash == 0)
    return true;
  std::string Dir = Path.substr(0, Slash);
  for (size_t I = 1; I <= Dir.size(); ++I) {
    if (I != Dir.size() && Dir[I] != '/')
      continue;
    std::string Prefix = Dir.substr(0, I);
    if (::mkdir(Prefix.c_str(), 0755) != 0 && errno != EEXIST)
      return false;
  }
  struct stat St;
  return ::stat(Dir.c_str(), &St) == 0 && S_ISDIR(St.st_mode);
}

} // namespace

//===----------------------------------------------------------------------===//
// TuningDbImpl
//===----------------------------------------------------------------------===//

TuningDbImpl::~TuningDbImpl() { sqlite3_close_v2(Db); }

Error TuningDbImpl::failure(const std::string &What, int Rc) const {
  return Error(isCorruption(Rc) ? ErrorCode::InvalidArgument : ErrorCode::IO,
               "tuning database '" + Path + "': " + What + ": " +
                   sqliteMessage(Db, Rc));
}

Error TuningDbImpl::exec(const char *Sql, const std::string &What) {
  char *Msg = nullptr;
  int Rc = sqlite3_exec(Db, Sql, nullptr, nullptr, &Msg);
  std::string Text = Msg ? Msg : "";
  sqlite3_free(Msg);
  if (Rc == SQLITE_OK)
    return Error::success();
  LastRc = Rc;
  return Error(isCorruption(Rc) ? ErrorCode::InvalidArgument : ErrorCode::IO,
               "tuning database '" + Path + "': " + What + ": " +
                   (Text.empty() ? sqlite3_errstr(Rc) : Text));
}

TuningDbImpl::OpenResult TuningDbImpl::openStrict(const std::string &Path,
                                                 bool Create) {
  OpenResult R;
  auto Impl = std::shared_ptr<TuningDbImpl>(new TuningDbImpl());
  Impl->Path = Path;
  Impl->InMemory = Path == ":memory:";
  if (!Impl->InMemory && Create && !makeParent(Path)) {
    R.Status = OpenStatus::Unwritable;
    R.Err = Error(ErrorCode::IO, "tuning database '" + Path +
                                     "': cannot create its folder: " +
                                     std::strerror(errno));
    return R;
  }
  // Without Create the file is only read (kiln tune export, merge's
  // inputs): nothing about it changes.
  bool ReadOnly = !Create && !Impl->InMemory;
  int Flags = SQLITE_OPEN_FULLMUTEX |
              (ReadOnly ? SQLITE_OPEN_READONLY
                        : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  int Rc = sqlite3_open_v2(Path.c_str(), &Impl->Db, Flags, nullptr);
  if (Rc != SQLITE_OK) {
    R.Status = OpenStatus::Unwritable;
    R.Err = Impl->failure("cannot open", Rc);
    return R;
  }
  if (!ReadOnly && !Impl->InMemory &&
      sqlite3_db_readonly(Impl->Db, "main") == 1) {
    R.Status = OpenStatus::Unwritable;
    R.Err = Error(ErrorCode::IO,
                  "tuning database '" + Path + "' is read-only");
    return R;
  }
  sqlite3_busy_timeout(Impl->Db, 60000);
  auto Classify = [&](Error E) {
    R.Status = isCorruption(Impl->LastRc) ? OpenStatus::Corrupt
                                          : OpenStatus::Unwritable;
    R.Err = std::move(E);
    return R;
  };

  // What the file holds: nothing yet, a Kiln tuning database, or other
  // tables (a foreign file).
  bool HasMeta = false, HasOthers = false;
  {
    Statement S(Impl->Db, "SELECT name FROM sqlite_master WHERE type='table'");
    int StepRc = S.prepared();
    while (StepRc == SQLITE_OK || StepRc == SQLITE_ROW) {
      StepRc = sqlite3_step(S.get());
      if (StepRc == SQLITE_ROW) {
        std::string Name = S.column(0);
        if (Name == "kiln_meta")
          HasMeta = true;
        else if (Name != "timings")
          HasOthers = true;
      }
    }
    if (StepRc != SQLITE_DONE) {
      Impl->LastRc = StepRc;
      return Classify(Impl->failure("cannot read it", StepRc));
    }
  }
  if (!HasMeta && HasOthers) {
    R.Status = OpenStatus::Foreign;
    R.Err = Error(ErrorCode::InvalidArgument,
                  "'" + Path + "' is not a Kiln tuning database (it holds "
                  "other tables)");
    return R;
  }
  if (HasMeta) {
    std::string Format, Version;
    Statement S(Impl->Db, "SELECT key, value FROM kiln_meta");
    int StepRc = S.prepared();
    while (StepRc == SQLITE_OK || StepRc == SQLITE_ROW) {
      StepRc = sqlite3_step(S.get());
      if (StepRc == SQLITE_ROW) {
        std::string Key = S.column(0);
        (Key == "format" ? Format : Key == "version" ? Version : Key) =
            S.column(1);
      }
    }
    if (StepRc != SQLITE_DONE) {
      Impl->LastRc = StepRc;
      return Classify(Impl->failure("cannot read it", StepRc));
    }
    if (Format != kFormat) {
      R.Status = OpenStatus::Foreign;
      R.Err = Error(ErrorCode::InvalidArgument,
                    "'" + Path + "' is not a Kiln tuning database (format '" +
                        Format + "')");
      return R;
    }
    if (Version != std::to_string(kVersion)) {
      char *End = nullptr;
      long V = std::strtol(Version.c_str(), &End, 10);
      bool Newer = !Version.empty() && !*End && V > kVersion;
      R.Status = Newer ? OpenStatus::Newer : OpenStatus::Foreign;
      R.Err = Error(ErrorCode::InvalidArgument,
                    "tuning database '" + Path + "' has version '" + Version +
                        "'" + (Newer ? " (a newer Kiln's)" : "") +
                        "; this Kiln reads version " +
                        std::to_string(kVersion));
      return R;
    }
    Statement Check(Impl->Db, "PRAGMA quick_check");
    int CheckRc = Check.prepared() == SQLITE_OK ? sqlite3_step(Check.get())
                                                : Check.prepared();
    if (CheckRc != SQLITE_ROW || Check.column(0) != "ok") {
      R.Status = OpenStatus::Corrupt;
      R.Err = Error(ErrorCode::InvalidArgument,
                    "tuning database '" + Path + "' is corrupt (" +
                        (CheckRc == SQLITE_ROW ? Check.column(0)
                                               : sqliteMessage(Impl->Db,
                                                               CheckRc)) +
                        ")");
      return R;
    }
  } else if (ReadOnly) {
    R.Status = OpenStatus::Foreign;
    R.Err = Error(ErrorCode::InvalidArgument,
                  "'" + Path + "' is not a Kiln tuning database (it is empty)");
    return R;
  }
  // Only now, with the file known to be ours (or new), is it changed.
  if (!ReadOnly) {
    if (!Impl->InMemory)
      if (Error E =
              Impl->exec("PRAGMA journal_mode=WAL", "cannot use WAL mode"))
        return Classify(std::move(E));
    if (Error E = Impl->exec("PRAGMA synchronous=NORMAL", "cannot set it up"))
      return Classify(std::move(E));
    if (!HasMeta) {
      std::string Sql = std::string("BEGIN IMMEDIATE;") + kSchema + "COMMIT;";
      if (Error E = Impl->exec(Sql.c_str(), "cannot create its tables")) {
        (void)Impl->exec("ROLLBACK", "rollback");
        return Classify(std::move(E));
      }
    }
  }
  R.Status = OpenStatus::Ok;
  R.Db = std::move(Impl);
  return R;
}

Expected<std::vector<TuningRow>>
TuningDbImpl::rows(const std::string &KernelHash, const std::string &Device,
                   const std::string &Bucket) {
  std::lock_guard<std::mutex> Lock(Mutex);
  std::string Sql = std::string("SELECT ") + kRowColumns +
                    " FROM timings WHERE (?1 = '' OR kernel_hash = ?1) AND "
                    "(?2 = '' OR device = ?2) AND (?3 IS NULL OR bucket = ?3) "
                    "ORDER BY kernel, kernel_hash, device, bucket, "
                    "milliseconds";
  Statement S(Db, Sql.c_str());
  if (S.prepared() != SQLITE_OK)
    return failure("cannot read it", S.prepared());
  S.text(1, KernelHash);
  S.text(2, Device);
  if (Bucket != kAnyBucket)
    S.text(3, Bucket);
  std::vector<TuningRow> Out;
  int Rc;
  while ((Rc = sqlite3_step(S.get())) == SQLITE_ROW) {
    Out.push_back(readRow(S));
  }
  if (Rc != SQLITE_DONE)
    return failure("cannot read it", Rc);
  return Out;
}

Error TuningDbImpl::write(const std::vector<TuningRow> &Rows, bool Merge) {
  std::lock_guard<std::mutex> Lock(Mutex);
  if (Error E = exec("BEGIN IMMEDIATE", "cannot write to it"))
    return E;
  const char *Sql =
      Merge ? "INSERT INTO timings VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
              "ON CONFLICT(kernel_hash, variant, device, bucket) DO UPDATE "
              "SET kernel = excluded.kernel, "
              "milliseconds = excluded.milliseconds, "
              "repeats = excluded.repeats, "
              "measured_at = excluded.measured_at "
              "WHERE excluded.measured_at > timings.measured_at"
            : "INSERT OR REPLACE INTO timings "
              "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
  {
    Statement S(Db, Sql);
    if (S.prepared() != SQLITE_OK) {
      Error E = failure("cannot write to it", S.prepared());
      (void)exec("ROLLBACK", "rollback");
      return E;
    }
    for (const TuningRow &Row : Rows) {
      sqlite3_reset(S.get());
      S.text(1, Row.KernelHash);
      S.text(2, Row.Kernel);
      S.text(3, Row.Variant);
      S.text(4, Row.Device);
      S.text(5, Row.Bucket);
      sqlite3_bind_double(S.get(), 6, Row.Milliseconds);
      sqlite3_bind_int64(S.get(), 7, Row.Repeats);
      S.text(8, Row.MeasuredAt.empty() ? tuningTimestamp() : Row.MeasuredAt);
      int Rc = sqlite3_step(S.get());
      if (Rc != SQLITE_DONE) {
        Error E = failure("cannot write to it", Rc);
        (void)exec("ROLLBACK", "rollback");
        return E;
      }
    }
  }
  if (Error E = exec("COMMIT", "cannot write to it")) {
    (void)exec("ROLLBACK", "rollback");
    return E;
  }
  return Error::success();
}

//===----------------------------------------------------------------------===//
// The process's database: recovers instead of failing
//===----------------------------------------------------------------------===//

namespace {

/// "2026-11-26T194903Z", for the name a corrupt file is moved to.
std::string compactTimestamp() {
  std::time_t T = std::time(nullptr);
  std::tm Tm;
  gmtime_r(&T, &Tm);
  char Buf[32];
  std::strftime(Buf, sizeof(Buf), "%Y%m%dT%H%M%SZ", &Tm);
  return Buf;
}

/// An in-memory database with the rows of `Path` copied in, if it can be
/// read at all.
std::shared_ptr<TuningDbImpl>
memoryCopyOf(const std::string &Path,
             const std::function<void(const std::string &)> &Warn) {
  TuningDbImpl::OpenResult M = TuningDbImpl::openStrict(":memory:", true);
  if (!M.Db)
    return nullptr;
  sqlite3 *Ro = nullptr;
  // immutable: a WAL file in a folder that cannot be written is still read
  // (without its -shm).
  std::string Uri = "file:" + Path + "?immutable=1";
  if (::access(Path.c_str(), R_OK) != 0) {
    sqlite3_close_v2(Ro);
    return M.Db;
  }
  if (sqlite3_open_v2(Uri.c_str(), &Ro, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
                      nullptr) != SQLITE_OK) {
    Warn("tuning database '" + Path + "' cannot be read: " +
         sqliteMessage(Ro, SQLITE_CANTOPEN));
  } else {
    sqlite3_busy_timeout(Ro, 5000);
    std::string Sql = std::string("SELECT ") + kRowColumns + " FROM timings";
    Statement S(Ro, Sql.c_str());
    std::vector<TuningRow> Rows;
    if (S.prepared() != SQLITE_OK)
      Warn("tuning database '" + Path + "' cannot be read: " +
           sqliteMessage(Ro, S.prepared()));
    else
      while (sqlite3_step(S.get()) == SQLITE_ROW) {
        Rows.push_back(readRow(S));
      }
    if (!Rows.empty())
      if (Error E = M.Db->write(Rows, /*Merge=*/false))
        Warn(E.message());
  }
  sqlite3_close_v2(Ro);
  return M.Db;
}

} // namespace

std::shared_ptr<TuningDbImpl> kiln::rt::detail::openProcessDatabase(
    const std::string &Path,
    const std::function<void(const std::string &)> &Warn) {
  TuningDbImpl::OpenResult R = TuningDbImpl::openStrict(Path, true);
  if (R.Db)
    return R.Db;
  switch (R.Status) {
  case TuningDbImpl::OpenStatus::Corrupt:
  case TuningDbImpl::OpenStatus::Foreign: {
    std::string Aside = Path + ".corrupt-" + compactTimestamp() + "-" +
                        std::to_string(::getpid());
    if (std::rename(Path.c_str(), Aside.c_str()) != 0) {
      Warn(R.Err.message() + "; it cannot be moved aside (" +
           std::strerror(errno) + "): tuning results are kept in memory only");
      return TuningDbImpl::openStrict(":memory:", true).Db;
    }
    for (const char *Suffix : {"-wal", "-shm"})
      std::rename((Path + Suffix).c_str(), (Aside + Suffix).c_str());
    Warn(R.Err.message() + "; moved aside to '" + Aside +
         "' and started afresh");
    TuningDbImpl::OpenResult Again = TuningDbImpl::openStrict(Path, true);
    if (Again.Db)
      return Again.Db;
    Warn(Again.Err.message() + ": tuning results are kept in memory only");
    return TuningDbImpl::openStrict(":memory:", true).Db;
  }
  case TuningDbImpl::OpenStatus::Newer:
    Warn(R.Err.message() +
         ": it is left as it is, and tuning results are kept in memory only");
    return TuningDbImpl::openStrict(":memory:", true).Db;
  default:
    Warn(R.Err.message() + ": tuning results are kept in memory only");
    return memoryCopyOf(Path, Warn);
  }
}

//===----------------------------------------------------------------------===//
// TuningDatabase
//===----------------------------------------------------------------------===//

Expected<TuningDatabase> TuningDatabase::open(const std::string &Path,
                                              bool Create) {
  if (Path.empty())
    return Error(ErrorCode::InvalidArgument, "tuning database: empty path");
  if (!Create && Path != ":memory:" && ::access(Path.c_str(), F_OK) != 0)
    return Error(ErrorCode::IO, "tuning database '" + Path +
                                    "' does not exist");
  TuningDbImpl::OpenResult R = TuningDbImpl::openStrict(Path, Create);
  if (!R.Db)
    return std::move(R.Err);
  return TuningDatabase(std::move(R.Db));
}

Expected<std::vector<TuningRow>>
TuningDatabase::rows(const std::string &KernelHash, const std::string &Device,
                     const std::string &Bucket) const {
  return Impl->rows(KernelHash, Device,
                    Bucket.empty() ? std::string(kAnyBucket) : Bucket);
}

Error TuningDatabase::insert(const std::vector<TuningRow> &Rows) {
  return Impl->write(Rows, /*Merge=*/false);
}

Error TuningDatabase::merge(const std::vector<TuningRow> &Rows) {
  return Impl->write(Rows, /*Merge=*/true);
}

const std::string &TuningDatabase::path() const { return Impl->Path; }

std::string kiln::rt::tuningTimestamp() {
  auto Now = std::chrono::system_clock::now();
  std::time_t T = std::chrono::system_clock::to_time_t(Now);
  auto Micros = std::chrono::duration_cast<std::chrono::microseconds>(
                    Now.time_since_epoch())
                    .count() %
                1000000;
  std::tm Tm;
  gmtime_r(&T, &Tm);
  char Buf[64];
  std::strftime(Buf, sizeof(Buf), "%Y-%m-%dT%H:%M:%S", &Tm);
  char Out[80];
  std::snprintf(Out, sizeof(Out), "%s.%06lldZ", Buf, (long long)Micros);
  return Out;
}
