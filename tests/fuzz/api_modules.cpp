// Steps of the API-sequence target on modules and kernels: images of the
// mock's built-in kernels (and malformed ones: NUL bytes, unknown names,
// other formats, empty), kernels looked up by good and bad names, launches
// with good and bad configurations and arguments. A launch of fill_u32 or
// iota_u32 writes the model's bytes; scale_f32 makes them unknown.
#include <cstring>
#include <string>
#include <vector>

#include "api_sequence.hpp"

namespace xal::fuzz {
namespace {

const char* const kBuiltins[] = {"fill_u32", "iota_u32", "scale_f32", "sleep_us", "add_f32"};

}  // namespace

void Sequence::module_load() {
  if (live_modules(m_).size() >= kMaxLive / 3) return;
  const Pick p = pick_card(*in_, m_);
  std::vector<std::string> names;
  std::string image;
  for (int i = 0, n = 1 + static_cast<int>(in_->below(3)); i < n; ++i) {
    const char* name = kBuiltins[in_->below(std::size(kBuiltins))];
    names.emplace_back(name);
    image += std::string(name) + (in_->byte() % 4 == 0 ? "  # a comment\n" : "\n");
  }
  uint32_t format = XAL_MODULE_FORMAT_NATIVE;
  xal_status_t want = XAL_SUCCESS;
  const void* data = image.data();
  size_t bytes = image.size();
  switch (in_->byte() % 12) {  // 0 and 7-11: a good image
    case 6: image[in_->below(image.size())] = '\0'; want = XAL_ERROR_INVALID_ARGUMENT; break;
    case 1: image += "no_such_kernel\n"; bytes = image.size(); data = image.data();
            want = XAL_ERROR_INVALID_ARGUMENT; break;
    case 2: image = "# only a comment\n\n"; bytes = image.size(); data = image.data();
            want = XAL_ERROR_INVALID_ARGUMENT; break;
    case 3: format = static_cast<uint32_t>(in_->below(6)); want = XAL_ERROR_NOT_SUPPORTED; break;
    case 4: format = 7 + static_cast<uint32_t>(in_->below(100)); want = XAL_ERROR_INVALID_ARGUMENT;
            break;
    case 5: bytes = 0; want = XAL_ERROR_INVALID_ARGUMENT; break;
    case 7: data = nullptr; want = XAL_ERROR_INVALID_ARGUMENT; break;
    default: break;
  }
  xal_module_t mod = nullptr;
  const xal_status_t s =
      xal_module_load(static_cast<xal_device_t>(p.handle), format, data, bytes, &mod);
  expect(s, p.index < 0 ? refused(m_) : want, "xal_module_load");
  expect_detail(s, "xal_module_load");
  if (s == XAL_SUCCESS) m_.modules.push_back({static_cast<uint32_t>(p.index), mod, true, names});
}

void Sequence::module_unload() {
  const Pick p = pick_module(*in_, m_);
  const xal_status_t s = xal_module_unload(static_cast<xal_module_t>(p.handle));
  expect(s, p.index < 0 ? refused(m_) : XAL_SUCCESS, "xal_module_unload");
  expect_detail(s, "xal_module_unload");
  // A live module is released even when the backend's unload fails (an
  // injected error included): the core forgets it (xal_backend.h).
  if (p.index >= 0) {
    // Its kernels may still be running: a program waits before reusing
    // what they wrote, the model as well.
    device_sync_all();
    forget(m_.modules[p.index]);
  }
}

void Sequence::kernel_get() {
  if (m_.kernels.size() >= 4 * kMaxLive) return;
  const Pick p = pick_module(*in_, m_);
  std::string name = kBuiltins[in_->below(std::size(kBuiltins))];
  const uint8_t c = in_->byte() % 8;
  if (c == 5) name = "gemm_f32x";
  if (c == 6) name.clear();
  bool listed = false;
  if (p.index >= 0)
    for (const std::string& k : m_.modules[p.index].kernels) listed |= k == name;
  xal_kernel_t k = nullptr;
  const xal_status_t s = xal_kernel_get(static_cast<xal_module_t>(p.handle),
                                        c == 7 ? nullptr : name.c_str(), &k);
  expect(s, p.index < 0 ? refused(m_)
            : listed && c != 7 ? XAL_SUCCESS : XAL_ERROR_INVALID_ARGUMENT,
         "xal_kernel_get('" + name + "')");
  expect_detail(s, "xal_kernel_get");
  if (s == XAL_SUCCESS) m_.kernels.push_back({static_cast<size_t>(p.index), k, name});
}

void Sequence::kernel_launch() {
  const Pick k = pick_kernel(*in_, m_);
  const Pick p = pick_stream(*in_, m_);
  const std::string name = k.index >= 0 ? m_.kernels[k.index].name : "";
  const uint32_t dev = p.index < 0 ? 0 : m_.streams[p.index].device;
  // Arguments: dst (a range of the stream's device), a value, a count.
  const Range r = pick_range(*in_, m_, dev);
  uint64_t count = r.bytes / 4;
  xal_devptr_t dst = r.ptr;
  uint32_t value = static_cast<uint32_t>(in_->bits(4));
  const uint8_t bad = in_->byte() % 16;
  if (bad == 15) dst = 0;
  if (bad == 14) count = ~uint64_t{0} / 2;
  if (name == "sleep_us") count = in_->below(64);  // microseconds
  void* args[6] = {&dst, &value, &count, &count, &count, &count};
  size_t arg_count = name == "sleep_us" ? 1 : name == "add_f32" ? 4 : 3;
  if (name == "sleep_us") args[0] = &count;
  xal_launch_config_t config{};
  config.struct_size = sizeof config;
  for (int i = 0; i < 3; ++i) config.grid[i] = config.block[i] = 1;
  xal_status_t want = XAL_SUCCESS;
  switch (in_->byte() % 16) {
    case 4: config.grid[in_->below(3)] = 0; want = XAL_ERROR_INVALID_ARGUMENT; break;
    case 1: config.struct_size = 8; want = XAL_ERROR_INVALID_ARGUMENT; break;
    case 2: arg_count += 1 + in_->below(2); want = XAL_ERROR_INVALID_ARGUMENT; break;
    case 3: args[0] = nullptr; want = XAL_ERROR_INVALID_ARGUMENT; break;
    default: break;
  }
  Alloc* a = nullptr;
  const bool writes = name == "fill_u32" || name == "iota_u32" || name == "scale_f32";
  if (k.index < 0 || p.index < 0) {
    want = refused(m_);
  } else if (want != XAL_SUCCESS) {
    // the configuration or the arguments are refused before anything else
  } else if (m_.modules[m_.kernels[k.index].module].device != dev) {
    want = XAL_ERROR_INVALID_ARGUMENT;  // a kernel of another device
  } else if (name == "add_f32") {
    want = XAL_ERROR_INVALID_ARGUMENT;  // given one argument too many
    arg_count = 5;
  } else if (writes) {
    if (bad == 14) {
      want = XAL_ERROR_INVALID_ARGUMENT;  // more elements than an address space has
    } else if (bad == 15) {
      if (count == 0) return;
      want = XAL_ERROR_OUT_OF_BOUNDS;  // address 0: outside the card's memory
    } else {
      a = m_.holding(dev, dst, count * 4);
      // A range past its allocation but inside the card's memory is the
      // program's error, which neither xal nor the vendors catch: not made.
      if (!a) return;
    }
  }
  if (want == XAL_SUCCESS && a) claim(a, static_cast<size_t>(p.index));
  const xal_status_t s = xal_kernel_launch(static_cast<xal_stream_t>(p.handle),
                                           static_cast<xal_kernel_t>(k.handle), &config, args,
                                           arg_count);
  expect(s, want, "xal_kernel_launch(" + name + ")");
  expect_detail(s, "xal_kernel_launch");
  if (s != XAL_SUCCESS || !a || !a->tracked() || count == 0) return;
  const uint64_t off = dst - a->ptr;
  for (uint64_t i = 0; i < count; ++i) {
    const uint32_t v = name == "fill_u32" ? value : value + static_cast<uint32_t>(i);
    std::memcpy(a->bytes.data() + off + 4 * i, &v, 4);
  }
  std::fill_n(a->known.begin() + static_cast<ptrdiff_t>(off), 4 * count,
              name == "scale_f32" ? 0 : 1);
}

}  // namespace xal::fuzz
