// Opening the cross-process quota ledger: names, creation, checks of the
// layout (see quota_ledger.hpp).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <sstream>
#include <thread>

#include "quota_ledger.hpp"

namespace xal::core {

using namespace ledger_layout;

namespace {

std::string errno_text(int e) { return std::strerror(e); }

// Closes a descriptor at the end of the scope.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

bool init_mutex(pthread_mutex_t* m) {
  pthread_mutexattr_t attr;
  if (pthread_mutexattr_init(&attr) != 0) return false;
  const bool ok = pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED) == 0 &&
                  pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST) == 0 &&
                  pthread_mutex_init(m, &attr) == 0;
  pthread_mutexattr_destroy(&attr);
  return ok;
}

// Waits up to two seconds for `done`.
template <class F>
bool wait_for(F done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace

bool QuotaLedger::valid_name(std::string_view name, std::string* why) {
  if (name.empty()) {
    *why = "the name is empty";
    return false;
  }
  if (name.size() > 64) {
    *why = "the name is " + std::to_string(name.size()) +
           " characters long (at most 64)";
    return false;
  }
  for (char c : name) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) {
      std::ostringstream msg;
      msg << "the name contains ";
      if (c >= 0x20 && c < 0x7f) msg << "'" << c << "'";
      else msg << "byte 0x" << std::hex << (static_cast<unsigned>(c) & 0xffu);
      msg << " (only letters, digits, '.', '_' and '-' are allowed)";
      *why = msg.str();
      return false;
    }
  }
  return true;
}

std::string QuotaLedger::object_name(std::string_view name) {
  return "/xal-ledger-" + std::to_string(::getuid()) + "-" + std::string(name);
}

bool QuotaLedger::unlink(std::string_view name) {
  return ::shm_unlink(object_name(name).c_str()) == 0;
}

std::unique_ptr<QuotaLedger> QuotaLedger::open(std::string_view name,
                                               std::string* error) {
  return open_mode(name, true, error, nullptr);
}

std::unique_ptr<QuotaLedger> QuotaLedger::open_existing(std::string_view name,
                                                        std::string* error,
                                                        bool* other_layout) {
  auto ledger = open_mode(name, false, error, other_layout);
  if (ledger) ledger->reader_ = true;
  return ledger;
}

std::unique_ptr<QuotaLedger> QuotaLedger::open_mode(std::string_view name, bool create,
                                                    std::string* error,
                                                    bool* other_layout) {
  if (other_layout) *other_layout = false;
  std::string why;
  if (!valid_name(name, &why)) {
    *error = "invalid ledger name '" + std::string(name) + "': " + why;
    return nullptr;
  }
  const std::string obj = object_name(name);
  const std::string where = "shared quota ledger " + obj;
  Fd fd{create ? ::shm_open(obj.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600)
               : -1};
  const bool creator = fd.fd >= 0;
  if (!creator) {
    if (create && errno != EEXIST) {
      *error = "cannot create " + where + ": " + errno_text(errno);
      return nullptr;
    }
    fd.fd = ::shm_open(obj.c_str(), O_RDWR | O_CLOEXEC, 0);
    if (fd.fd < 0) {
      *error = !create && errno == ENOENT
                   ? "there is no " + where + " (no process of the job runs)"
                   : "cannot open " + where + ": " + errno_text(errno);
      return nullptr;
    }
    // The name is predictable: a ledger made by another user, or open to
    // others, could hold the lock or impose a limit on this job.
    struct stat own {};
    if (::fstat(fd.fd, &own) != 0) {
      *error = "cannot stat " + where + ": " + errno_text(errno);
      return nullptr;
    }
    if (own.st_uid != ::geteuid() || (own.st_mode & 077) != 0) {
      std::ostringstream msg;
      msg << where << " belongs to uid " << own.st_uid << " with mode 0"
          << std::oct << (own.st_mode & 0777) << std::dec
          << "; a ledger must belong to this user (uid " << ::geteuid()
          << ") with mode 0600 (remove /dev/shm" << obj << ")";
      *error = msg.str();
      return nullptr;
    }
  } else if (::ftruncate(fd.fd, sizeof(File)) != 0) {
    *error = "cannot size " + where + ": " + errno_text(errno);
    ::shm_unlink(obj.c_str());
    return nullptr;
  }
  struct stat st {};
  // Another process may have created it a moment ago: wait for its size.
  if (!wait_for([&] {
        return ::fstat(fd.fd, &st) != 0 ||
               static_cast<size_t>(st.st_size) >= sizeof(Header);
      }) ||
      static_cast<size_t>(st.st_size) < sizeof(Header)) {
    *error = where + " is " + std::to_string(st.st_size) +
             " bytes, too small for a ledger header (its creator may have "
             "died; remove /dev/shm" + obj + ")";
    return nullptr;
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd.fd, 0);
  if (p == MAP_FAILED) {
    *error = "cannot map " + where + ": " + errno_text(errno);
    // Never initialised: the next process would wait for it in vain.
    if (creator) ::shm_unlink(obj.c_str());
    return nullptr;
  }
  auto* f = static_cast<File*>(p);
  if (creator) {
    Header& h = f->header;
    if (!init_mutex(&h.mutex)) {
      *error = "cannot set up the process-shared robust mutex of " + where;
      ::munmap(p, size);
      ::shm_unlink(obj.c_str());
      return nullptr;
    }
    h.magic = kMagic;
    h.version = kVersion;
    h.struct_size = sizeof(File);
    h.device_count = kMaxDevices;
    h.process_count = kMaxProcesses;
    h.initialised.store(1, std::memory_order_release);
  } else if (!wait_for([&] {
               return f->header.initialised.load(std::memory_order_acquire) != 0;
             })) {
    *error = where + " was never initialised (its creator may have died; "
             "remove /dev/shm" + obj + ")";
    ::munmap(p, size);
    return nullptr;
  }
  const Header& h = f->header;
  if (h.magic != kMagic || h.version != kVersion || h.struct_size != sizeof(File) ||
      size != sizeof(File) || h.device_count != kMaxDevices ||
      h.process_count != kMaxProcesses) {
    std::ostringstream msg;
    msg << where << " has " << (h.magic == kMagic ? "" : "a foreign magic, ")
        << (h.magic == kMagic && h.version > kVersion ? "a newer layout, " : "")
        << "version " << h.version << " and size " << size
        << " bytes; this xal uses version " << kVersion << " and size "
        << sizeof(File) << " bytes (processes of one job must use the same "
        << "xal, or another XAL_QUOTA_LEDGER name)";
    *error = msg.str();
    if (other_layout) *other_layout = true;
    ::munmap(p, size);
    return nullptr;
  }
  return std::unique_ptr<QuotaLedger>(new QuotaLedger(f, obj));
}

}  // namespace xal::core
