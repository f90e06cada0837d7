// Loading the CUDA backend: missing driver, a driver too old for a required
// function, a missing optional function, no device, and the table variant
// without NCCL. Runs against the simulated driver (SIMULATION ONLY) except
// NoDriver.*, which runs in its own process without XAL_CUDA_DRIVER.
#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "plugin_fixture.h"

namespace xal::cuda::test {
namespace {

// The table is chosen once, when first asked for: do it before any test
// changes the environment.
const xal_backend_table_t* const kTableAtStart = plugin_table();

xal_status_t try_init(xal_backend_t** out) { return init_instance(plugin_table(), out); }

TEST(CudaSimulationLoading, MissingDriverFileIsUnavailableWithDlerror) {
  ScopedEnv driver("XAL_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
  xal_backend_t* backend = nullptr;
  ASSERT_NE(plugin_table(), nullptr);
  EXPECT_EQ(try_init(&backend), XAL_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(backend, nullptr);
  EXPECT_NE(last_error().message.find("/nonexistent/libcuda.so.1"),
            std::string::npos);
  EXPECT_NE(last_error().message.find("cannot open shared object file"),
            std::string::npos)
      << last_error().message;
  EXPECT_EQ(last_error().message.find("no NVIDIA driver installed?"),
            std::string::npos)
      << last_error().message;
}

TEST(CudaSimulationLoading, DriverTooOldNamesTheMissingFunction) {
  ScopedEnv hide("XALSIM_CUDA_HIDE", "cuMemsetD8Async");
  xal_backend_t* backend = nullptr;
  EXPECT_EQ(try_init(&backend), XAL_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_NE(last_error().message.find(
                "libcuda.so.1 is too old: missing cuMemsetD8Async"),
            std::string::npos)
      << last_error().message;
}

TEST(CudaSimulationLoading, MissingOptionalFunctionsDropTheirFeature) {
  ScopedEnv hide("XALSIM_CUDA_HIDE",
                 "cuModuleLoadDataEx,cuLaunchKernel,cuMemHostRegister");
  xal_backend_t* backend = nullptr;
  ASSERT_EQ(try_init(&backend), XAL_SUCCESS) << last_error().message;
  const xal_backend_table_t* t = plugin_table();
  xal_bdevice_t* dev = nullptr;
  ASSERT_EQ(t->device_get(backend, 0, &dev), XAL_SUCCESS);
  xal_device_properties_t p{};
  p.struct_size = sizeof p;
  ASSERT_EQ(t->device_get_properties(dev, &p), XAL_SUCCESS);
  EXPECT_FALSE(p.capabilities & XAL_DEVICE_CAP_KERNELS);
  xal_bmodule_t* module = nullptr;
  const char ptx[] = ".version 8.0\n";
  EXPECT_EQ(t->module_load(dev, XAL_MODULE_FORMAT_PTX, ptx, sizeof ptx, &module),
            XAL_ERROR_NOT_SUPPORTED);
  char buffer[64];
  EXPECT_EQ(t->host_register(backend, buffer, sizeof buffer),
            XAL_ERROR_NOT_SUPPORTED);
  EXPECT_NE(last_error().message.find("cuMemHostRegister"), std::string::npos);
  EXPECT_EQ(t->shutdown(backend), XAL_SUCCESS);
}

TEST(CudaSimulationLoading, NoDeviceIsUnavailable) {
  ScopedEnv fail("XALSIM_CUDA_FAIL", "cuInit=100");
  xal_backend_t* backend = nullptr;
  EXPECT_EQ(try_init(&backend), XAL_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(last_error().vendor_code, 100);
  EXPECT_EQ(last_error().vendor_name, "CUDA_ERROR_NO_DEVICE");
  EXPECT_NE(last_error().message.find("cuInit"), std::string::npos);
}

TEST(CudaSimulationLoading, InitCanBeRepeated) {
  for (int i = 0; i < 3; ++i) {
    xal_backend_t* backend = nullptr;
    ASSERT_EQ(try_init(&backend), XAL_SUCCESS) << last_error().message;
    EXPECT_EQ(plugin_table()->shutdown(backend), XAL_SUCCESS);
  }
}

// NCCL needs the real driver: with the simulated one (XAL_CUDA_DRIVER, set
// by CTest) the table leaves collectives to the core even where
// libnccl.so.2 is installed. XAL_CUDA_COLLECTIVES=peer gives the plugin's
// own over peer copies and the embedded kernels (where they are built),
// unless host functions go straight to the driver.
const xal_backend_table_t* table_now() {
  void* plugin = dlopen(XAL_CUDA_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (plugin == nullptr) return nullptr;
  auto get = reinterpret_cast<xal_backend_get_fn>(dlsym(plugin, XAL_BACKEND_ENTRY_SYMBOL));
  const xal_backend_table_t* t = get != nullptr ? get(XAL_ABI_VERSION) : nullptr;
  dlclose(plugin);
  return t;
}

TEST(CudaSimulationLoading, NoNcclWithTheSimulatedDriver) {
  const xal_backend_table_t* t = kTableAtStart;
  ASSERT_NE(t, nullptr);
  EXPECT_STREQ(t->name, "cuda");
  EXPECT_EQ(t->abi_major, XAL_ABI_VERSION_MAJOR);
  EXPECT_GE(t->struct_size, XAL_BACKEND_TABLE_MIN_SIZE);
  EXPECT_EQ(t->comm_create, nullptr);
  EXPECT_EQ(t->allreduce, nullptr);
  EXPECT_EQ(t->group_start, nullptr);
  EXPECT_NE(t->get_extension, nullptr);
  xal_backend_t* backend = nullptr;
  ASSERT_EQ(try_init(&backend), XAL_SUCCESS) << last_error().message;
  xal_backend_describe_t d{};
  d.struct_size = sizeof d;
  ASSERT_EQ(t->describe(backend, &d), XAL_SUCCESS);
  EXPECT_NE(std::string(d.note).find("collectives on the core's path"), std::string::npos)
      << d.note;
  EXPECT_EQ(t->shutdown(backend), XAL_SUCCESS);
}

// An NCCL the user names with XAL_CUDA_NCCL that cannot be used is said in
// the backend's note (xal-info); why goes to the log as a warning.
TEST(CudaSimulationLoading, NamedNcclThatCannotLoadIsInTheNote) {
  ScopedEnv nccl("XAL_CUDA_NCCL", "/nonexistent/libnccl.so.2");
  xal_backend_t* backend = nullptr;
  ASSERT_EQ(try_init(&backend), XAL_SUCCESS) << last_error().message;
  xal_backend_describe_t d{};
  d.struct_size = sizeof d;
  ASSERT_EQ(kTableAtStart->describe(backend, &d), XAL_SUCCESS);
  const std::string note = d.note;
  EXPECT_NE(note.find("the NCCL XAL_CUDA_NCCL names is not used"), std::string::npos) << note;
  EXPECT_NE(note.find("collectives on the core's path"), std::string::npos) << note;
  EXPECT_EQ(kTableAtStart->shutdown(backend), XAL_SUCCESS);
}

// With the simulated driver the default libnccl.so.2, a real NCCL where one
// is on the library path, is never opened, not even to say why it is not
// used: only a simulated NCCL named by XAL_CUDA_NCCL is. CTest runs this
// with a stand-in libnccl.so.2 on LD_LIBRARY_PATH that sets
// XAL_TEST_NCCL_LOADED when loaded (nccl_load_probe.c).
TEST(CudaSimulationLoading, DefaultNcclNotLoadedWithTheSimulatedDriver) {
  if (std::getenv("XAL_TEST_NCCL_PROBE") == nullptr) {
    GTEST_SKIP() << "needs the stand-in libnccl.so.2 on LD_LIBRARY_PATH";
  }
  ASSERT_EQ(std::getenv("XAL_CUDA_NCCL"), nullptr);
  ASSERT_NE(kTableAtStart, nullptr);
  EXPECT_EQ(kTableAtStart->comm_create, nullptr);
  xal_backend_t* backend = nullptr;
  ASSERT_EQ(try_init(&backend), XAL_SUCCESS) << last_error().message;
  xal_backend_describe_t d{};
  d.struct_size = sizeof d;
  ASSERT_EQ(kTableAtStart->describe(backend, &d), XAL_SUCCESS);
  EXPECT_NE(std::string(d.note).find("collectives on the core's path"), std::string::npos)
      << d.note;
  EXPECT_EQ(kTableAtStart->shutdown(backend), XAL_SUCCESS);
  EXPECT_EQ(std::getenv("XAL_TEST_NCCL_LOADED"), nullptr)
      << "the plugin opened libnccl.so.2 with the simulated driver";
  // The stand-in is there to be found: otherwise the check proves nothing.
  void* probe = dlopen("libnccl.so.2", RTLD_LAZY | RTLD_LOCAL);
  ASSERT_NE(probe, nullptr) << dlerror();
  EXPECT_NE(std::getenv("XAL_TEST_NCCL_LOADED"), nullptr);
  dlclose(probe);
}

// A library opened as NCCL is never unloaded: a real NCCL carries its own
// CUDA runtime, with exit handlers and per-thread state. CTest names the
// stand-in libnccl.so.2 (not an NCCL: the plugin refuses it) in
// XAL_CUDA_NCCL (cuda_simulation_nccl_never_unloaded).
TEST(CudaSimulationLoading, NcclLibraryIsNeverUnloaded) {
  const char* path = std::getenv("XAL_CUDA_NCCL");
  if (path == nullptr || std::getenv("XAL_TEST_NCCL_PROBE") == nullptr) {
    GTEST_SKIP() << "needs XAL_CUDA_NCCL naming the stand-in libnccl.so.2";
  }
  ASSERT_NE(kTableAtStart, nullptr);
  EXPECT_EQ(kTableAtStart->comm_create, nullptr);  // it has none of NCCL's functions
  EXPECT_NE(std::getenv("XAL_TEST_NCCL_LOADED"), nullptr) << path << " was not opened";
  void* nccl = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  EXPECT_NE(nccl, nullptr) << path << " was unloaded";
  if (nccl != nullptr) dlclose(nccl);
}

TEST(CudaSimulationLoading, PeerCollectivesWhenAskedFor) {
  ScopedEnv peer("XAL_CUDA_COLLECTIVES", "peer");
  const xal_backend_table_t* t = table_now();
  ASSERT_NE(t, nullptr);
#if XAL_CUDA_TEST_HAVE_KERNELS
  EXPECT_NE(t->comm_create, nullptr);
  EXPECT_NE(t->allreduce, nullptr);
  EXPECT_NE(t->alltoall, nullptr);
  EXPECT_NE(t->group_start, nullptr);
  xal_backend_t* backend = nullptr;
  ASSERT_EQ(init_instance(t, &backend), XAL_SUCCESS) << last_error().message;
  xal_backend_describe_t d{};
  d.struct_size = sizeof d;
  ASSERT_EQ(t->describe(backend, &d), XAL_SUCCESS);
  EXPECT_NE(std::string(d.note).find("collectives over peer copies and xal's kernels"),
            std::string::npos)
      << d.note;
  EXPECT_EQ(t->shutdown(backend), XAL_SUCCESS);
#else
  EXPECT_EQ(t->comm_create, nullptr);
#endif
  {
    ScopedEnv driver_thread("XAL_CUDA_HOST_FUNCS", "driver");
    const xal_backend_table_t* c = table_now();
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->comm_create, nullptr);
    xal_backend_t* backend = nullptr;
    ASSERT_EQ(init_instance(c, &backend), XAL_SUCCESS) << last_error().message;
    xal_backend_describe_t d{};
    d.struct_size = sizeof d;
    ASSERT_EQ(c->describe(backend, &d), XAL_SUCCESS);
    EXPECT_NE(std::string(d.note).find("XAL_CUDA_COLLECTIVES=peer needs the embedded kernels"),
              std::string::npos)
        << d.note;
    EXPECT_EQ(c->shutdown(backend), XAL_SUCCESS);
  }
}

TEST(CudaSimulationLoading, UnknownCollectivesChoiceIsRefusedAtInit) {
  ScopedEnv bad("XAL_CUDA_COLLECTIVES", "fastest");
  xal_backend_t* backend = nullptr;
  EXPECT_EQ(try_init(&backend), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(backend, nullptr);
  EXPECT_NE(last_error().message.find(
                "XAL_CUDA_COLLECTIVES 'fastest' is none of 'auto', 'core', 'peer'"),
            std::string::npos)
      << last_error().message;
}

// Without XAL_CUDA_DRIVER, on a machine without the NVIDIA driver, the
// plugin still loads and says why there is no CUDA device.
TEST(NoDriver, RealDriverAbsentGivesTheDlopenReason) {
  ScopedEnv driver("XAL_CUDA_DRIVER", nullptr);
  void* real = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (real != nullptr) {
    dlclose(real);
    GTEST_SKIP() << "a CUDA driver is installed on this machine";
  }
  ASSERT_NE(plugin_table(), nullptr);
  xal_backend_t* backend = nullptr;
  EXPECT_EQ(try_init(&backend), XAL_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_NE(last_error().message.find(
                "libcuda.so.1: cannot open shared object file"),
            std::string::npos)
      << last_error().message;
  EXPECT_NE(last_error().message.find("no NVIDIA driver installed?"),
            std::string::npos)
      << last_error().message;
}

}  // namespace
}  // namespace xal::cuda::test
