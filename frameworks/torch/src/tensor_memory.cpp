#include "tensor_memory.hpp"

#include <c10/core/impl/VirtualGuardImpl.h>
#include <c10/util/Exception.h>

#include <algorithm>

#include "xal_runtime.hpp"

namespace xal::torch_backend {

GroupDevice GroupDevice::of(xal_device_t dev) {
  xal_device_properties_t p{};
  p.struct_size = sizeof p;
  check_xal("xal_device_get_properties", xal_device_get_properties(dev, &p));
  GroupDevice g;
  g.dev = dev;
  g.host_pointers = (p.capabilities & XAL_DEVICE_CAP_HOST_POINTERS) &&
                    (p.capabilities & XAL_DEVICE_CAP_MEM_IMPORT);
  g.imports = (p.capabilities & XAL_DEVICE_CAP_MEM_IMPORT) &&
              (p.capabilities & XAL_DEVICE_CAP_STREAM_IMPORT);
  g.backend = p.backend;
  g.backend_index = p.backend_index;
  return g;
}

namespace {

bool is_group_card(const GroupDevice& g, const c10::Device& d) {
  return g.imports && d.type() == c10::DeviceType::CUDA && (g.backend == "cuda" || g.backend == "hip") &&
         d.has_index() && static_cast<uint32_t>(d.index()) == g.backend_index;
}

}  // namespace

CallPlace place_of(const GroupDevice& g, const std::vector<at::Tensor>& tensors, const char* op) {
  CallPlace place;
  std::optional<c10::Device> card;
  for (const at::Tensor& t : tensors) {
    if (!t.defined() || t.device().is_cpu()) continue;
    TORCH_CHECK(!card || *card == t.device(), "xal: ", op, " got tensors on ", card->str(),
                " and on ", t.device().str(), ": the tensors of one call must be on one device");
    card = t.device();
  }
  if (!card) return place;
  // The worker runs the call's torch work on the caller's current stream.
  const c10::impl::VirtualGuardImpl impl(card->type());
  place.torch_stream = impl.getStream(*card);
  if (!is_group_card(g, *card)) return place;  // staged through the CPU
  place.device_memory = true;
  place.native_stream = reinterpret_cast<uint64_t>(place.torch_stream->native_handle());
  return place;
}

at::Tensor dense_for(const at::Tensor& t, const CallPlace& place) {
  if (t.device().is_cpu() || place.device_memory) return t.is_contiguous() ? t : t.contiguous();
  return t.to(at::kCPU).contiguous();
}

void write_back(at::Tensor& t, const at::Tensor& w) {
  if (!w.is_same(t)) t.copy_(w);
}

TensorMemory::TensorMemory(const GroupDevice& g, xal_stream_t stream, const CallPlace& place,
                           const std::vector<const at::Tensor*>& inputs,
                           const std::vector<const at::Tensor*>& outputs, const char* op_name)
    : dev_(g.dev), stream_(stream), op_(op_name) {
  struct Want {
    uintptr_t begin, end;
    bool input, output;
    How how;
  };
  std::vector<Want> want;
  auto add = [&](const at::Tensor* t, bool output) {
    const size_t bytes = static_cast<size_t>(t->numel()) * t->element_size();
    if (bytes == 0) return;
    How how = g.host_pointers ? How::kImportHost : How::kStaged;
    if (!t->device().is_cpu()) {
      TORCH_CHECK(place.device_memory, "xal: ", op_name, ": a tensor on ", t->device().str(),
                  " reached the device step (it should have been staged on the CPU)");
      how = How::kImportDevice;
    }
    const auto begin = reinterpret_cast<uintptr_t>(t->data_ptr());
    want.push_back({begin, begin + bytes, !output, output, how});
  };
  for (const at::Tensor* t : inputs) add(t, false);
  for (const at::Tensor* t : outputs) add(t, true);
  std::sort(want.begin(), want.end(), [](const Want& a, const Want& b) {
    return a.how != b.how ? a.how < b.how : a.begin < b.begin;
  });
  std::vector<bool> copy_in;
  for (const Want& w : want) {
    if (!ranges_.empty() && ranges_.back().how == w.how && w.begin < ranges_.back().end) {
      Range& r = ranges_.back();
      r.end = std::max(r.end, w.end);
      r.output = r.output || w.output;
      copy_in.back() = copy_in.back() || w.input;
    } else {
      ranges_.push_back({w.begin, w.end, w.output, 0, w.how});
      copy_in.push_back(w.input);
    }
  }
  for (size_t i = 0; i < ranges_.size(); ++i) {
    Range& r = ranges_[i];
    const size_t bytes = r.end - r.begin;
    xal_status_t s = XAL_SUCCESS;
    const char* what = "importing a tensor's memory (xal_mem_import)";
    if (r.how == How::kStaged) {
      what = "staging a tensor in device memory (xal_mem_alloc)";
      s = xal_mem_alloc(dev_, bytes, &r.dev);
      if (s == XAL_SUCCESS && copy_in[i]) {
        what = "copying a tensor to the device (xal_memcpy_htod)";
        s = xal_memcpy_htod(stream_, r.dev, reinterpret_cast<const void*>(r.begin), bytes);
      }
    } else {
      s = xal_mem_import(dev_, r.begin, bytes,
                         r.how == How::kImportHost ? XAL_MEM_IMPORT_HOST : 0u, &r.dev);
    }
    if (s != XAL_SUCCESS) {
      try {
        throw_xal(op_ + ": " + what, s);  // reads this call's error before release() calls xal
      } catch (...) {
        release();
        throw;
      }
    }
  }
}

TensorMemory::~TensorMemory() { release(); }

void TensorMemory::release() {
  bool staged = false;
  for (const Range& r : ranges_) staged = staged || (r.how == How::kStaged && r.dev);
  // Copies in flight read or write the staging: let them finish first.
  if (staged) static_cast<void>(xal_stream_synchronize(stream_));
  for (const Range& r : ranges_)
    if (r.dev) xal_mem_free(dev_, r.dev);
  ranges_.clear();
}

xal_devptr_t TensorMemory::ptr(const at::Tensor& t) const {
  const auto p = reinterpret_cast<uintptr_t>(t.data_ptr());
  const bool device = !t.device().is_cpu();
  for (const Range& r : ranges_)
    if ((r.how == How::kImportDevice) == device && p >= r.begin && p < r.end)
      return r.dev + (p - r.begin);
  return 0;  // an empty tensor: xal is not called with it
}

void TensorMemory::copy_out() {
  bool any = false;
  for (const Range& r : ranges_) {
    if (r.how != How::kStaged || !r.output) continue;
    any = true;
    if (xal_status_t s = xal_memcpy_dtoh(stream_, reinterpret_cast<void*>(r.begin), r.dev,
                                         r.end - r.begin);
        s != XAL_SUCCESS)
      throw_xal(op_ + ": copying a result back from the device (xal_memcpy_dtoh)", s);
  }
  if (any) check_xal(op_ + ": copying results back (xal_stream_synchronize)",
                     xal_stream_synchronize(stream_));
}

size_t TensorMemory::staged_bytes() const {
  size_t n = 0;
  for (const Range& r : ranges_)
    if (r.how == How::kStaged) n += r.end - r.begin;
  return n;
}

}  // namespace xal::torch_backend
