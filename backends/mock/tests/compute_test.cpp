// The compute model: profiles' tflops_fp16, XAL_MOCK_COMPUTE_SCALE, the
// gemm_f32 kernel (results against a host reference, its pace) and the
// elementwise kernels of an MLP (relu_f32, relu_grad_f32).
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "device_spec.h"
#include "kernels.h"
#include "mock_harness.h"
#include "profiles.h"

namespace xal::mock {
namespace {

using test::Instance;
using test::table;

xal_launch_config_t config() {
  xal_launch_config_t c{};
  c.struct_size = sizeof(c);
  c.grid[0] = c.grid[1] = c.grid[2] = 1;
  c.block[0] = c.block[1] = c.block[2] = 1;
  return c;
}

// XAL_MOCK_COMPUTE_SCALE for the life of the object (unset after).
struct ScaleSetting {
  explicit ScaleSetting(const std::string& value) {
    test::set_config("XAL_MOCK_COMPUTE_SCALE", value);
  }
  ~ScaleSetting() { test::set_config("XAL_MOCK_COMPUTE_SCALE", "", /*unset=*/true); }
};

// A loaded module with the compute kernels on device `dev` of `inst`.
struct ComputeKernels {
  ComputeKernels(const Instance& inst, uint32_t dev) {
    const char image[] = "gemm_f32\nrelu_f32\nrelu_grad_f32\n";
    EXPECT_EQ(table().module_load(inst.device(dev), XAL_MODULE_FORMAT_NATIVE, image,
                                  sizeof image - 1, &module),
              XAL_SUCCESS)
        << test::last_error().message;
    EXPECT_EQ(table().kernel_get(module, "gemm_f32", &gemm), XAL_SUCCESS);
    EXPECT_EQ(table().kernel_get(module, "relu_f32", &relu), XAL_SUCCESS);
    EXPECT_EQ(table().kernel_get(module, "relu_grad_f32", &relu_grad), XAL_SUCCESS);
  }
  ~ComputeKernels() { table().module_unload(module); }
  ComputeKernels(const ComputeKernels&) = delete;
  ComputeKernels& operator=(const ComputeKernels&) = delete;

  xal_status_t launch_gemm(xal_bstream_t* s, xal_devptr_t c, xal_devptr_t a, xal_devptr_t b,
                           uint32_t m, uint32_t n, uint32_t k, uint32_t flags, float alpha,
                           float beta) const {
    void* args[] = {&c, &a, &b, &m, &n, &k, &flags, &alpha, &beta};
    const auto cfg = config();
    return table().kernel_launch(s, gemm, &cfg, args, 9);
  }

  xal_bmodule_t* module = nullptr;
  xal_bkernel_t* gemm = nullptr;
  xal_bkernel_t* relu = nullptr;
  xal_bkernel_t* relu_grad = nullptr;
};

std::vector<float> random_floats(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

xal_devptr_t upload(const Instance& inst, uint32_t dev, const std::vector<float>& v) {
  const xal_devptr_t p = inst.alloc(dev, v.size() * 4);
  std::memcpy(test::host(inst.device(dev), p, v.size() * 4), v.data(), v.size() * 4);
  return p;
}

std::vector<float> download(const Instance& inst, uint32_t dev, xal_devptr_t p, size_t n) {
  std::vector<float> v(n);
  std::memcpy(v.data(), test::host(inst.device(dev), p, n * 4), n * 4);
  return v;
}

TEST(Compute, ProfilesCarryTheirDataSheetThroughput) {
  EXPECT_DOUBLE_EQ(find_builtin_profile("h100-sxm-80g")->tflops_fp16, 989.4);
  EXPECT_DOUBLE_EQ(find_builtin_profile("a100-40g")->tflops_fp16, 312.0);
  EXPECT_DOUBLE_EQ(find_builtin_profile("mi250x")->tflops_fp16, 383.0);
  EXPECT_DOUBLE_EQ(find_builtin_profile("intel-max-1550")->tflops_fp16, 838.9);
  for (const Profile& p : builtin_profiles()) EXPECT_GT(p.tflops_fp16, 0.0) << p.key;
  // Overridden, defaulted to 0 (unpaced) in a full profile, checked.
  auto v = parse_json_spec(R"([{"profile": "a100-40g", "tflops_fp16": 100}])", "t");
  EXPECT_DOUBLE_EQ(v.at(0).tflops_fp16, 100.0);
  v = parse_json_spec(R"([{"name": "X", "vendor": "V", "memory": 4096, "compute_units": 1,
                           "peak_memory_bandwidth_gbps": 1}])", "t");
  EXPECT_DOUBLE_EQ(v.at(0).tflops_fp16, 0.0);
  EXPECT_THROW(parse_json_spec(R"([{"profile": "l4", "tflops_fp16": -1}])", "t"), SpecError);
  EXPECT_THROW(parse_json_spec(R"([{"profile": "l4", "tflops_fp16": "fast"}])", "t"), SpecError);
}

TEST(Compute, AnH100ProfileMultipliesFasterThanAnA100) {
  const Profile h100 = *find_builtin_profile("h100-sxm-80g");
  const Profile a100 = *find_builtin_profile("a100-40g");
  const double flops = 2.0 * 256 * 256 * 256;
  const double th = paced_gemm_seconds(h100, 1e-6, flops);
  const double ta = paced_gemm_seconds(a100, 1e-6, flops);
  EXPECT_NEAR(ta, flops / 312e6, 1e-12);
  EXPECT_NEAR(ta / th, 989.4 / 312.0, 1e-9);
  EXPECT_GT(ta / th, 3.0);
  // Scale 0 or a profile of 0 TFLOPS: unpaced.
  EXPECT_EQ(paced_gemm_seconds(h100, 0.0, flops), 0.0);
  Profile custom = a100;
  custom.tflops_fp16 = 0.0;
  EXPECT_EQ(paced_gemm_seconds(custom, 1e-6, flops), 0.0);
}

// Every transposition, alpha and beta, odd sizes, against a host reference
// in double; the same bits on an H100 and an A100 profile.
TEST(Compute, GemmMatchesAHostReference) {
  ScaleSetting unpaced("off");
  Instance inst(R"([{"profile": "h100-sxm-80g", "memory": "16MiB"},
                    {"profile": "a100-40g", "memory": "16MiB"}])");
  const uint32_t m = 37, n = 29, k = 19;
  const auto a = random_floats(m * k, 1), b = random_floats(k * n, 2), c0 = random_floats(m * n, 3);
  std::vector<std::vector<float>> results[2];
  for (uint32_t dev = 0; dev < 2; ++dev) {
    ComputeKernels kern(inst, dev);
    xal_bstream_t* s = inst.stream(dev);
    for (uint32_t flags = 0; flags < 4; ++flags) {
      // Stored as op() expects: a transposed is k x m, b transposed is n x k.
      std::vector<float> sa(a.size()), sb(b.size());
      for (uint32_t i = 0; i < m; ++i)
        for (uint32_t p = 0; p < k; ++p) sa[(flags & 1) ? p * m + i : i * k + p] = a[i * k + p];
      for (uint32_t p = 0; p < k; ++p)
        for (uint32_t j = 0; j < n; ++j) sb[(flags & 2) ? j * k + p : p * n + j] = b[p * n + j];
      const float alpha = 0.75f, beta = flags == 3 ? 0.0f : 0.5f;
      const xal_devptr_t da = upload(inst, dev, sa), db = upload(inst, dev, sb),
                         dc = upload(inst, dev, c0);
      ASSERT_EQ(kern.launch_gemm(s, dc, da, db, m, n, k, flags, alpha, beta), XAL_SUCCESS)
          << test::last_error().message;
      ASSERT_EQ(table().stream_synchronize(s), XAL_SUCCESS);
      const auto got = download(inst, dev, dc, m * n);
      for (uint32_t i = 0; i < m; ++i)
        for (uint32_t j = 0; j < n; ++j) {
          double want = beta * double(c0[i * n + j]);
          for (uint32_t p = 0; p < k; ++p) want += alpha * double(a[i * k + p]) * b[p * n + j];
          ASSERT_NEAR(got[i * n + j], want, 1e-5 * (1 + std::abs(want)))
              << "flags " << flags << " at " << i << "," << j;
        }
      results[dev].push_back(got);
    }
    EXPECT_EQ(table().stream_destroy(s), XAL_SUCCESS);
  }
  EXPECT_EQ(results[0], results[1]);  // bit for bit: the card only sets the pace
}

TEST(Compute, ReluAndItsGradient) {
  Instance inst(R"([{"profile": "l4", "memory": "16MiB"}])");
  ComputeKernels kern(inst, 0);
  xal_bstream_t* s = inst.stream(0);
  const uint64_t n = 300001;  // above the parallel threshold
  const auto x = random_floats(n, 7), dy = random_floats(n, 8);
  const xal_devptr_t dx_in = upload(inst, 0, x), ddy = upload(inst, 0, dy);
  const xal_devptr_t y = inst.alloc(0, n * 4), dx = inst.alloc(0, n * 4);
  const auto cfg = config();
  uint64_t count = n;
  xal_devptr_t yv = y, xv = dx_in, dxv = dx, dyv = ddy;
  void* relu_args[] = {&yv, &xv, &count};
  ASSERT_EQ(table().kernel_launch(s, kern.relu, &cfg, relu_args, 3), XAL_SUCCESS);
  void* grad_args[] = {&dxv, &dyv, &yv, &count};
  ASSERT_EQ(table().kernel_launch(s, kern.relu_grad, &cfg, grad_args, 4), XAL_SUCCESS);
  ASSERT_EQ(table().stream_synchronize(s), XAL_SUCCESS);
  const auto ys = download(inst, 0, y, n), dxs = download(inst, 0, dx, n);
  for (uint64_t i = 0; i < n; i += 101) {
    ASSERT_EQ(ys[i], x[i] > 0 ? x[i] : 0.0f) << i;
    ASSERT_EQ(dxs[i], x[i] > 0 ? dy[i] : 0.0f) << i;
  }
  EXPECT_EQ(table().stream_destroy(s), XAL_SUCCESS);
}

// The pace is a lower bound a product on an idle stream always keeps (an
// upper bound would depend on the host's load): it is never done early.
TEST(Compute, APacedGemmTakesAtLeastItsModelledTime) {
  ScaleSetting scale("1e-7");  // an A100 paced at 31.2 GFLOP/s
  Instance inst(R"([{"profile": "a100-40g", "memory": "16MiB"}])");
  ComputeKernels kern(inst, 0);
  xal_bstream_t* s = inst.stream(0);
  const uint32_t dim = 64;
  const double seconds =
      paced_gemm_seconds(*find_builtin_profile("a100-40g"), 1e-7, 2.0 * dim * dim * dim);
  ASSERT_GT(seconds, 0.015);
  const auto a = random_floats(dim * dim, 4);
  const xal_devptr_t da = upload(inst, 0, a), dc = inst.alloc(0, dim * dim * 4);
  xal_bevent_t* e0 = inst.event(0);
  xal_bevent_t* e1 = inst.event(0);
  ASSERT_EQ(table().event_record(e0, s), XAL_SUCCESS);
  ASSERT_EQ(kern.launch_gemm(s, dc, da, da, dim, dim, dim, 0, 1.0f, 0.0f), XAL_SUCCESS);
  ASSERT_EQ(table().event_record(e1, s), XAL_SUCCESS);
  ASSERT_EQ(table().stream_synchronize(s), XAL_SUCCESS);
  float ms = 0;
  ASSERT_EQ(table().event_elapsed_ms(e0, e1, &ms), XAL_SUCCESS);
  EXPECT_GE(ms, seconds * 1e3 * 0.999);
  EXPECT_EQ(table().event_destroy(e0), XAL_SUCCESS);
  EXPECT_EQ(table().event_destroy(e1), XAL_SUCCESS);
  EXPECT_EQ(table().stream_destroy(s), XAL_SUCCESS);
}

TEST(Compute, GemmChecksItsArgumentsAndTheScaleSetting) {
  Instance inst(R"([{"profile": "l4", "memory": "1MiB"}])");
  ComputeKernels kern(inst, 0);
  xal_bstream_t* s = inst.stream(0);
  const xal_devptr_t p = inst.alloc(0, 64 * 64 * 4);
  EXPECT_EQ(kern.launch_gemm(s, p, p, p, 8, 8, 8, 4, 1.0f, 0.0f), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(test::last_error().message.find("flags"), std::string::npos);
  EXPECT_EQ(kern.launch_gemm(s, p, p, p, 1024, 1024, 8, 0, 1.0f, 0.0f), XAL_ERROR_OUT_OF_BOUNDS);
  EXPECT_EQ(table().stream_synchronize(s), XAL_SUCCESS);
  EXPECT_EQ(table().stream_destroy(s), XAL_SUCCESS);
  for (const char* bad : {"fast", "-1", "1e7", "nan"}) {
    ScaleSetting scale(bad);
    test::set_mock_devices("1*l4");
    xal_backend_init_args_t args{sizeof(args), test::services(), nullptr};
    xal_backend_t* b = nullptr;
    EXPECT_EQ(table().init(&args, &b), XAL_ERROR_INVALID_ARGUMENT) << bad;
    EXPECT_NE(test::last_error().message.find("XAL_MOCK_COMPUTE_SCALE"), std::string::npos);
  }
  for (const char* good : {"off", "0", "1e-6", " 2.5e-7 "}) {
    ScaleSetting scale(good);
    EXPECT_NO_THROW(Instance("1*l4")) << good;
  }
}

}  // namespace
}  // namespace xal::mock
