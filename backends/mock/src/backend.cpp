#include "backend.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include "error.hpp"

namespace xal::mock {

namespace {

// The ordinals in use by live instances of this process.
std::mutex g_ordinals_mutex;
std::set<uint32_t> g_ordinals;

}  // namespace

InstanceOrdinal::InstanceOrdinal() {
  std::lock_guard lock(g_ordinals_mutex);
  uint32_t v = 0;
  while (g_ordinals.count(v) != 0) ++v;
  g_ordinals.insert(v);  // may throw std::bad_alloc: nothing taken then
  value_ = v;
}

InstanceOrdinal::~InstanceOrdinal() {
  std::lock_guard lock(g_ordinals_mutex);
  g_ordinals.erase(value_);
}

Backend::Backend(const xal_backend_services_t* services,
                 std::vector<Profile> profiles, std::string spec,
                 CopySettings copies, double compute_scale)
    : services_(services), spec_(std::move(spec)), copies_(copies),
      compute_scale_(compute_scale) {
  devices_.reserve(profiles.size());
  for (size_t i = 0; i < profiles.size(); ++i)
    devices_.push_back(std::make_unique<Device>(*this, static_cast<uint32_t>(i),
                                                std::move(profiles[i])));
}

Backend::~Backend() {
  // Streams may wait on events of other devices: drain them all before any
  // device goes away.
  for (auto& device : devices_) device->synchronize(nullptr);
  devices_.clear();
  for (auto& [ptr, length] : host_allocations_) munmap(ptr, length);
}

bool Backend::owns(const Device* device) const {
  return device && &device->backend() == this;
}

void* Backend::host_alloc(size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  if (bytes > SIZE_MAX - page)
    throw Error(XAL_ERROR_OUT_OF_HOST_MEMORY,
                "host_alloc: " + std::to_string(bytes) + " bytes is too large");
  const size_t length = (bytes + page - 1) / page * page;
  void* p = mmap(nullptr, length, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    throw Error(XAL_ERROR_OUT_OF_HOST_MEMORY,
                "host_alloc: cannot map " + std::to_string(bytes) + " bytes");
  (void)mlock(p, length);  // best effort: RLIMIT_MEMLOCK may refuse
  try {
    std::lock_guard lock(host_mutex_);
    host_allocations_.emplace(p, length);
  } catch (...) {
    munmap(p, length);
    throw;
  }
  return p;
}

bool Backend::host_free(void* ptr) {
  size_t length = 0;
  {
    std::lock_guard lock(host_mutex_);
    auto it = host_allocations_.find(ptr);
    if (it == host_allocations_.end()) return false;
    length = it->second;
    host_allocations_.erase(it);
  }
  munmap(ptr, length);
  return true;
}

void Backend::host_register(void* ptr, size_t bytes) {
  std::lock_guard lock(host_mutex_);
  if (!host_registered_.emplace(ptr, bytes).second)
    throw Error(XAL_ERROR_INVALID_ARGUMENT,
                "host_register: " + hex(reinterpret_cast<uint64_t>(ptr)) +
                    " is already registered");
}

bool Backend::host_unregister(void* ptr) {
  std::lock_guard lock(host_mutex_);
  return host_registered_.erase(ptr) == 1;
}

}  // namespace xal::mock
