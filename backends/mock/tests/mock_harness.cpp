#include "mock_harness.h"

#include <dlfcn.h>

#include <map>
#include <stdexcept>

namespace xal::mock::test {

namespace {

thread_local LastError t_last_error;
std::string g_mock_devices;
bool g_unset = true;
std::map<std::string, std::string> g_config;

xal_status_t record_error(xal_status_t status, int64_t, const char*,
                          const char* message) {
  t_last_error.status = status;
  t_last_error.message = message ? message : "";
  return status;
}

void log_line(int, const char*, const char*) {}

xal_status_t no_load(const char*, const xal_backend_table_t**, char*, size_t) {
  return XAL_ERROR_NOT_SUPPORTED;
}

const char* get_config(const char* key) {
  if (std::string(key) == "XAL_MOCK_DEVICES")
    return g_unset ? nullptr : g_mock_devices.c_str();
  auto it = g_config.find(key);
  return it == g_config.end() ? nullptr : it->second.c_str();
}

const xal_backend_services_t kServices = {
    sizeof(xal_backend_services_t), XAL_ABI_VERSION, record_error, log_line,
    no_load, get_config};

}  // namespace

const xal_backend_table_t& table() {
  static const xal_backend_table_t* t = [] {
    void* lib = dlopen(XAL_MOCK_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!lib) throw std::runtime_error(std::string("dlopen: ") + dlerror());
    auto get = reinterpret_cast<xal_backend_get_fn>(
        dlsym(lib, XAL_BACKEND_ENTRY_SYMBOL));
    if (!get) throw std::runtime_error("no xal_backend_get");
    return get(XAL_ABI_VERSION);
  }();
  return *t;
}

LastError last_error() { return t_last_error; }
void clear_last_error() { t_last_error = {}; }

void set_mock_devices(const std::string& value, bool unset) {
  g_mock_devices = value;
  g_unset = unset;
}

void set_config(const std::string& key, const std::string& value, bool unset) {
  if (unset)
    g_config.erase(key);
  else
    g_config[key] = value;
}

const xal_backend_services_t* services() { return &kServices; }

Instance::Instance(const std::string& spec, bool unset) {
  set_mock_devices(spec, unset);
  xal_backend_init_args_t args{sizeof(args), services(), nullptr};
  const xal_status_t s = table().init(&args, &backend_);
  if (s != XAL_SUCCESS)
    throw std::runtime_error("init failed: " + last_error().message);
}

Instance::~Instance() {
  if (backend_) {
    EXPECT_EQ(table().shutdown(backend_), XAL_SUCCESS);
  }
}

uint32_t Instance::count() const {
  uint32_t n = 0;
  EXPECT_EQ(table().device_count(backend_, &n), XAL_SUCCESS);
  return n;
}

xal_bdevice_t* Instance::device(uint32_t i) const {
  xal_bdevice_t* d = nullptr;
  EXPECT_EQ(table().device_get(backend_, i, &d), XAL_SUCCESS);
  return d;
}

xal_devptr_t Instance::alloc(uint32_t dev, size_t bytes) const {
  xal_devptr_t p = 0;
  EXPECT_EQ(table().mem_alloc(device(dev), bytes, &p), XAL_SUCCESS)
      << last_error().message;
  return p;
}

xal_bstream_t* Instance::stream(uint32_t dev) const {
  xal_bstream_t* s = nullptr;
  EXPECT_EQ(table().stream_create(device(dev), 0, &s), XAL_SUCCESS);
  return s;
}

xal_bevent_t* Instance::event(uint32_t dev, uint32_t flags) const {
  xal_bevent_t* e = nullptr;
  EXPECT_EQ(table().event_create(device(dev), flags, &e), XAL_SUCCESS);
  return e;
}

void* host(xal_bdevice_t* device, xal_devptr_t ptr, size_t bytes) {
  return table().device_ptr_to_host(device, ptr, bytes);
}

}  // namespace xal::mock::test
