// xal_soak: one process's mixed workload for scripts/soak.sh, on four mock
// cards (XAL_MOCK_DEVICES=4*...) behind the fault backend
// (XAL_BACKENDS=fault:mock), in cycles of xal_init .. xal_shutdown.
//
//   xal_soak --seconds S [--cycle-ms MS] [--threads T] [--status FILE] [--trace FILE]
//   xal_soak --cycles C --rounds N [--threads T]
//
// The second form is bounded by work, not time: C cycles in which each
// thread runs N rounds (scripts/tsan.sh --ci runs it under ThreadSanitizer).
//
// Each cycle sets a memory limit on card 0 and, every other cycle,
// partitions card 3; then runs until the cycle's end, concurrently:
//  - T workers (cards 0..2, each with the next card as its peer): copies in
//    every direction, memsets, events across streams, the mock's kernels,
//    page-locked host memory, transient streams; every byte is read back
//    and compared;
//  - a collectives thread: a communicator over cards 0..2, every collective
//    in a group, or from one thread per rank, the results compared,
//    recreated every 25 rounds;
//  - all workers also share one stream and one event per card;
//  - on card 3: faults (an injected OUT_OF_MEMORY, a bit flip, an
//    asynchronous error, a delay, a lost device and its reset), each
//    checked to fire once and to do what it says; or, in a partitioned
//    cycle, the partitions' quotas and limits; and there (the one thread on
//    the card) the errors that bounds and double frees must give.
// The main thread samples the device memory in use. At the cycle's end
// every allocation must be gone; the partitions are undone and xal shut
// down, which writes the trace (XAL_TRACE, --trace). The status file gets
// one JSON line per cycle; the exit status is 0 when every check held.
#include <xal/xal_fault.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "soak_common.hpp"

using namespace xal_soak;

namespace {

constexpr uint64_t kLimit0 = 512ull << 20;  // card 0's memory limit
constexpr uint64_t kPartBytes = 64ull << 20;

struct Cycle {
  uint64_t index = 0;
  Clock::time_point end;
  uint64_t rounds = 0;  // > 0: each thread runs this many rounds, not until `end`
  xal_device_t dev[4]{};
  // One stream and one event per card 0..2 that every worker uses too.
  xal_stream_t shared_stream[3]{};
  xal_event_t shared_event[3]{};
  bool stop(uint64_t round) const {
    return rounds ? round >= rounds : Clock::now() >= end;
  }
};

std::string background_plan() {
  const char* env = std::getenv("XAL_FAULTS");
  return env ? env : "";
}

// Loads the background plan (XAL_FAULTS, whose delays keep firing all along)
// plus `rule`, replacing the rules before.
bool load_plan(const std::string& rule) {
  std::string plan = background_plan();
  if (!rule.empty()) plan += (plan.empty() ? "" : ";") + rule;
  if (plan.empty()) return SOAK_OK(xal_fault_clear());
  return SOAK_CHECK(xal_fault_load_plan(plan.c_str(), XAL_FAULT_PLAN_REPLACE) == XAL_SUCCESS,
                    "load plan %s", plan.c_str());
}

// How often the rule named `name` fired.
uint64_t fired(const char* name) {
  uint32_t n = 0;
  xal_fault_rule_count(&n);
  for (uint32_t i = 0; i < n; ++i) {
    xal_fault_rule_info_t r{};
    r.struct_size = sizeof r;
    if (xal_fault_rule_get_info(i, &r) == XAL_SUCCESS && std::string(r.name) == name)
      return r.fired;
  }
  return 0;
}

std::vector<uint8_t> random_bytes(Rng& rng, size_t n) {
  std::vector<uint8_t> v(n);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint64_t x = rng.next();
    std::memcpy(v.data() + i, &x, 8);
  }
  for (; i < n; ++i) v[i] = static_cast<uint8_t>(rng.next());
  return v;
}

// Reads `bytes` of `p` back through stream `s`.
std::vector<uint8_t> read_back(xal_stream_t s, xal_devptr_t p, size_t bytes) {
  std::vector<uint8_t> out(bytes, 0xEE);
  SOAK_OK(xal_memcpy_dtoh(s, out.data(), p, bytes));
  SOAK_OK(xal_stream_synchronize(s));
  return out;
}

// ---- workers ---------------------------------------------------------------

struct Kernels {
  xal_module_t module = nullptr;
  xal_kernel_t fill = nullptr, saxpy = nullptr;
  explicit Kernels(xal_device_t d) {
    static constexpr char kImage[] = "fill_u32\nsaxpy_f32\n";
    if (SOAK_OK(xal_module_load(d, XAL_MODULE_FORMAT_NATIVE, kImage, sizeof kImage - 1, &module))) {
      SOAK_OK(xal_kernel_get(module, "fill_u32", &fill));
      SOAK_OK(xal_kernel_get(module, "saxpy_f32", &saxpy));
    }
  }
  ~Kernels() {
    if (module) SOAK_OK(xal_module_unload(module));
  }
  Kernels(const Kernels&) = delete;
  Kernels& operator=(const Kernels&) = delete;
};

void copies(Rng& rng, xal_device_t d, xal_device_t peer, xal_stream_t s) {
  const size_t n = 1 + rng.below(256 << 10);
  DevMem a(d, n), b(d, n), c(peer, n);
  if (!a || !b || !c) return;
  const auto in = random_bytes(rng, n);
  const size_t off = rng.below(n), len = rng.below(n - off + 1);
  const auto v = static_cast<uint8_t>(rng.next());
  SOAK_OK(xal_memcpy_htod(s, a.p, in.data(), n));
  SOAK_OK(xal_memcpy_dtod(s, b.p, a.p, n));
  SOAK_OK(xal_memcpy_peer(s, peer, c.p, d, b.p, n));
  SOAK_OK(xal_memset(s, a.p + off, v, len));
  auto expect_a = in;
  std::fill_n(expect_a.begin() + static_cast<ptrdiff_t>(off), len, v);
  SOAK_CHECK(read_back(s, a.p, n) == expect_a, "htod+memset read back (%zu bytes)", n);
  // Back from the peer into b, through the same stream.
  SOAK_OK(xal_memset(s, b.p, 0, n));
  SOAK_OK(xal_memcpy_peer(s, d, b.p, peer, c.p, n));
  SOAK_CHECK(read_back(s, b.p, n) == in, "dtod+peer round trip (%zu bytes)", n);
  checker().op(7);
}

void events(Rng& rng, xal_device_t d, xal_device_t peer, xal_stream_t s, xal_stream_t sp) {
  const size_t n = 4096 + rng.below(64 << 10);
  DevMem a(d, n), b(peer, n);
  if (!a || !b) return;
  Event e1(d), e2(d);
  SOAK_OK(xal_event_record(e1.e, s));
  SOAK_OK(xal_memset(s, a.p, 0x5A, n));
  SOAK_OK(xal_event_record(e2.e, s));
  // The peer's stream copies a only after e2.
  SOAK_OK(xal_stream_wait_event(sp, e2.e));
  SOAK_OK(xal_memcpy_peer(sp, peer, b.p, d, a.p, n));
  const auto got = read_back(sp, b.p, n);
  SOAK_CHECK(std::all_of(got.begin(), got.end(), [](uint8_t x) { return x == 0x5A; }),
             "a copy ordered after an event saw the memset");
  SOAK_OK(xal_event_synchronize(e2.e));
  SOAK_IS(xal_event_query(e1.e), XAL_SUCCESS);
  SOAK_IS(xal_event_query(e2.e), XAL_SUCCESS);
  float ms = -1;
  SOAK_OK(xal_event_elapsed_ms(e1.e, e2.e, &ms));
  SOAK_CHECK(ms >= 0, "elapsed %f ms", static_cast<double>(ms));
  checker().op(9);
}

void kernels(Rng& rng, xal_device_t d, xal_stream_t s, const Kernels& k) {
  if (!k.fill || !k.saxpy) return;
  uint64_t n = 1 + rng.below(100000);
  DevMem x(d, n * 4), y(d, n * 4);
  if (!x || !y) return;
  const float xv = static_cast<float>(rng.below(100)), yv = static_cast<float>(rng.below(100));
  const float a = static_cast<float>(rng.below(8));
  uint32_t xb, yb;
  std::memcpy(&xb, &xv, 4);
  std::memcpy(&yb, &yv, 4);
  xal_launch_config_t cfg{};
  cfg.struct_size = sizeof cfg;
  cfg.grid[0] = cfg.grid[1] = cfg.grid[2] = 1;
  cfg.block[0] = cfg.block[1] = cfg.block[2] = 1;
  void* fx[] = {&x.p, &xb, &n};
  void* fy[] = {&y.p, &yb, &n};
  void* sx[] = {&y.p, &x.p, const_cast<float*>(&a), &n};
  SOAK_OK(xal_kernel_launch(s, k.fill, &cfg, fx, 3));
  SOAK_OK(xal_kernel_launch(s, k.fill, &cfg, fy, 3));
  SOAK_OK(xal_kernel_launch(s, k.saxpy, &cfg, sx, 4));
  std::vector<float> out(n, -1.0f);
  SOAK_OK(xal_memcpy_dtoh(s, out.data(), y.p, n * 4));
  SOAK_OK(xal_stream_synchronize(s));
  const float want = yv + a * xv;
  SOAK_CHECK(std::all_of(out.begin(), out.end(), [&](float f) { return f == want; }),
             "saxpy of %llu elements", static_cast<unsigned long long>(n));
  checker().op(5);
}

void host_memory(Rng& rng, xal_device_t d, xal_stream_t s) {
  const size_t n = 1 + rng.below(128 << 10);
  void* h = nullptr;
  if (!SOAK_OK(xal_host_alloc(n, rng.below(2) ? XAL_HOST_ALLOC_WRITE_COMBINED : 0, &h))) return;
  const auto in = random_bytes(rng, n);
  std::memcpy(h, in.data(), n);
  {
    DevMem a(d, n);
    if (a) {
      SOAK_OK(xal_memcpy_htod(s, a.p, h, n));
      SOAK_OK(xal_stream_synchronize(s));
      std::memset(h, 0, n);
      SOAK_OK(xal_memcpy_dtoh(s, h, a.p, n));
      SOAK_OK(xal_stream_synchronize(s));
      SOAK_CHECK(std::memcmp(h, in.data(), n) == 0, "page-locked round trip (%zu bytes)", n);
    }
  }
  SOAK_OK(xal_host_free(h));
  checker().op(4);
}

void errors(Rng& rng, xal_device_t d, xal_stream_t s) {
  const size_t n = 256 + rng.below(4096);
  std::vector<uint8_t> buf(n + 1);
  xal_devptr_t p = 0;
  if (!SOAK_OK(xal_mem_alloc(d, n, &p))) return;
  SOAK_IS(xal_memcpy_htod(s, p, buf.data(), n + 1), XAL_ERROR_OUT_OF_BOUNDS);
  SOAK_IS(xal_memset(s, p + n, 0, 1), XAL_ERROR_OUT_OF_BOUNDS);
  xal_error_info_t e{};
  e.struct_size = sizeof e;
  xal_last_error(&e);
  SOAK_CHECK(e.status == XAL_ERROR_OUT_OF_BOUNDS, "last error is the thread's own");
  uint64_t free_b = 0, total = 0;
  SOAK_OK(xal_mem_get_info(d, &free_b, &total));
  SOAK_CHECK(free_b <= total && total > 0, "mem_get_info %llu of %llu",
             static_cast<unsigned long long>(free_b), static_cast<unsigned long long>(total));
  SOAK_OK(xal_mem_free(d, p));
  SOAK_IS(xal_mem_free(d, p), XAL_ERROR_INVALID_ARGUMENT);
  SOAK_IS(xal_stream_query(nullptr), XAL_ERROR_INVALID_HANDLE);
  checker().op(7);
}

void transient_stream(Rng& rng, xal_device_t d) {
  Stream t(d, rng.below(2) ? XAL_STREAM_NON_BLOCKING : XAL_STREAM_DEFAULT);
  if (!t.s) return;
  const size_t n = 1 + rng.below(32 << 10);
  DevMem a(d, n);
  if (!a) return;
  const auto v = static_cast<uint8_t>(rng.next());
  SOAK_OK(xal_memset(t.s, a.p, v, n));
  const auto got = read_back(t.s, a.p, n);
  SOAK_CHECK(std::all_of(got.begin(), got.end(), [&](uint8_t x) { return x == v; }),
             "memset on a new stream");
  checker().op(5);
}

// Work on the streams and events every worker shares: a copy on the peer's
// shared stream, ordered after the shared event of this card's.
void shared(Rng& rng, const Cycle& cy, int di, int pi, xal_stream_t s) {
  xal_device_t peer = cy.dev[pi];
  const size_t n = 1 + rng.below(16 << 10);
  DevMem a(peer, n);
  if (!a) return;
  SOAK_OK(xal_event_record(cy.shared_event[di], cy.shared_stream[di]));
  SOAK_OK(xal_stream_wait_event(cy.shared_stream[pi], cy.shared_event[di]));
  SOAK_OK(xal_stream_wait_event(s, cy.shared_event[di]));
  const xal_status_t q = xal_event_query(cy.shared_event[di]);
  SOAK_CHECK(q == XAL_SUCCESS || q == XAL_NOT_READY, "event query %s", xal_status_name(q));
  const auto in = random_bytes(rng, n);
  std::vector<uint8_t> out(n, 0);
  SOAK_OK(xal_memcpy_htod(cy.shared_stream[pi], a.p, in.data(), n));
  SOAK_OK(xal_memcpy_dtoh(cy.shared_stream[pi], out.data(), a.p, n));
  // The stream is shared: synchronising it waits for the others' work too.
  SOAK_OK(xal_stream_synchronize(cy.shared_stream[pi]));
  SOAK_CHECK(out == in, "a round trip on a shared stream (%zu bytes)", n);
  checker().op(6);
}

void worker(const Cycle& cy, int i) {
  const int di = i % 3, pi = (i + 1) % 3;
  xal_device_t d = cy.dev[di], peer = cy.dev[pi];
  Rng rng(cy.index * 1000003u + static_cast<uint64_t>(i) * 7919u + 1);
  Stream s(d), sp(peer);
  auto k = std::make_unique<Kernels>(d);
  if (!s.s || !sp.s) return;
  for (uint64_t it = 0; !cy.stop(it); ++it) {
    switch (rng.below(7)) {
      case 6: shared(rng, cy, di, pi, s.s); break;
      case 0: copies(rng, d, peer, s.s); break;
      case 1: events(rng, d, peer, s.s, sp.s); break;
      case 2: kernels(rng, d, s.s, *k); break;
      case 3: host_memory(rng, d, s.s); break;
      case 4: host_memory(rng, peer, sp.s); break;
      default: transient_stream(rng, d); break;
    }
    if (it % 50 == 49) {  // a module loaded and unloaded while others run
      k.reset();
      k = std::make_unique<Kernels>(d);
    }
  }
}

// ---- collectives -----------------------------------------------------------

using Vec = std::vector<int32_t>;

int32_t val(uint32_t rank, size_t i, uint64_t it) {
  return static_cast<int32_t>(rank * 7 + i + it % 1000);
}

void collectives(const Cycle& cy) {
  constexpr uint32_t R = 3;
  constexpr size_t kMax = 4096;
  xal_device_t devs[R] = {cy.dev[0], cy.dev[1], cy.dev[2]};
  std::vector<Stream> st;
  std::vector<DevMem> send, recv;
  for (uint32_t r = 0; r < R; ++r) {
    st.emplace_back(devs[r]);
    send.emplace_back(devs[r], kMax * R * 4);
    recv.emplace_back(devs[r], kMax * R * 4);
    if (!st.back().s || !send.back() || !recv.back()) return;
  }
  Rng rng(cy.index * 31 + 5);
  std::vector<Comm> comms;
  auto create = [&] {
    comms.clear();
    std::vector<xal_comm_t> raw(R);
    xal_comm_options_t o{};
    o.struct_size = sizeof o;
    o.timeout_ms = 20000;
    if (!SOAK_OK(xal_comm_create(devs, R, &o, raw.data()))) return false;
    for (xal_comm_t c : raw) comms.emplace_back().c = c;
    for (uint32_t r = 0; r < R; ++r) {
      xal_comm_info_t info{};
      info.struct_size = sizeof info;
      SOAK_OK(xal_comm_get_info(comms[r].c, &info));
      SOAK_CHECK(info.rank == r && info.size == R, "comm info rank %u size %u", info.rank, info.size);
    }
    return true;
  };
  if (!create()) return;
  for (uint64_t it = 0; !cy.stop(it); ++it) {
    if (it % 25 == 24 && !create()) return;
    const size_t count = 1 + rng.below(kMax);
    const int op = static_cast<int>(rng.below(7));
    const uint32_t root = static_cast<uint32_t>(rng.below(R));
    // Host inputs and what each rank must hold after.
    std::vector<Vec> in(R), want(R);
    size_t in_n = count, out_n = count;
    if (op == 4) out_n = count * R;                 // allgather
    if (op == 5 || op == 6) in_n = out_n = count * R;  // alltoall
    if (op == 5) out_n = count;                     // reduce_scatter: in R*count, out count
    for (uint32_t r = 0; r < R; ++r) {
      in[r].resize(in_n);
      for (size_t i = 0; i < in_n; ++i)
        in[r][i] = op == 6 ? static_cast<int32_t>(r * 100003 + i) : val(r, i, it);
    }
    for (uint32_t r = 0; r < R; ++r) {
      want[r].assign(out_n, -1);
      for (size_t i = 0; i < out_n; ++i) {
        switch (op) {
          case 0: case 3:  // allreduce / reduce sum
            want[r][i] = in[0][i] + in[1][i] + in[2][i];
            break;
          case 1:  // allreduce max
            want[r][i] = std::max({in[0][i], in[1][i], in[2][i]});
            break;
          case 2: want[r][i] = in[root][i]; break;      // broadcast
          case 4: want[r][i] = in[i / count][i % count]; break;  // allgather
          case 5:  // reduce_scatter sum: block r of every rank
            want[r][i] = in[0][r * count + i] + in[1][r * count + i] + in[2][r * count + i];
            break;
          default:  // alltoall: block j from rank j's block r
            want[r][i] = in[i / count][r * count + i % count];
        }
      }
    }
    for (uint32_t r = 0; r < R; ++r) {
      SOAK_OK(xal_memcpy_htod(st[r].s, send[r].p, in[r].data(), in_n * 4));
      SOAK_OK(xal_memset(st[r].s, recv[r].p, 0xFF, out_n * 4));
    }
    auto issue = [&](uint32_t r) -> xal_status_t {
      xal_comm_t c = comms[r].c;
      const auto sp = send[r].p, rp = recv[r].p;
      switch (op) {
        case 0: return xal_allreduce(c, sp, rp, count, XAL_DTYPE_I32, XAL_OP_SUM, st[r].s);
        case 1: return xal_allreduce(c, sp, rp, count, XAL_DTYPE_I32, XAL_OP_MAX, st[r].s);
        case 2: return xal_broadcast(c, sp, rp, count, XAL_DTYPE_I32, root, st[r].s);
        case 3: return xal_reduce(c, sp, rp, count, XAL_DTYPE_I32, XAL_OP_SUM, root, st[r].s);
        case 4: return xal_allgather(c, sp, rp, count, XAL_DTYPE_I32, st[r].s);
        case 5: return xal_reduce_scatter(c, sp, rp, count, XAL_DTYPE_I32, XAL_OP_SUM, st[r].s);
        default: return xal_alltoall(c, sp, rp, count, XAL_DTYPE_I32, st[r].s);
      }
    };
    if (it % 4 == 3) {  // one thread per rank, as a process with a thread per device
      std::vector<std::thread> ranks;
      for (uint32_t r = 0; r < R; ++r)
        ranks.emplace_back([&, r] { SOAK_CHECK(issue(r) == XAL_SUCCESS, "collective %d rank %u", op, r); });
      for (auto& t : ranks) t.join();
    } else {  // one thread for every rank, in a group
      SOAK_OK(xal_group_start());
      for (uint32_t r = 0; r < R; ++r)
        SOAK_CHECK(issue(r) == XAL_SUCCESS, "collective %d rank %u in a group", op, r);
      SOAK_OK(xal_group_end());
    }
    for (uint32_t r = 0; r < R; ++r) {
      if (op == 3 && r != root) continue;  // reduce: only the root's recv
      Vec got(out_n, -2);
      SOAK_OK(xal_memcpy_dtoh(st[r].s, got.data(), recv[r].p, out_n * 4));
      SOAK_OK(xal_stream_synchronize(st[r].s));
      SOAK_CHECK(got == want[r], "collective %d rank %u count %zu", op, r, count);
    }
    for (uint32_t r = 0; r < R; ++r) {
      SOAK_OK(xal_stream_synchronize(st[r].s));
      xal_status_t async = XAL_SUCCESS;
      SOAK_OK(xal_comm_get_async_error(comms[r].c, &async));
      SOAK_CHECK(async == XAL_SUCCESS, "async error %s", xal_status_name(async));
    }
    checker().op(2 * R + 1);
  }
}

// ---- card 3: faults, or partitions -----------------------------------------

void faults(const Cycle& cy) {
  xal_device_t d = cy.dev[3];
  Rng rng(cy.index * 17 + 3);
  for (uint64_t it = 0; !cy.stop(it); ++it) {
    const size_t n = 4096;
    switch (it % 5) {
      case 0: {  // an allocation runs out of memory once
        load_plan("mem_alloc=name(soak_oom)device(3)nth(1)OUT_OF_MEMORY");
        xal_devptr_t p = 0;
        SOAK_IS(xal_mem_alloc(d, n, &p), XAL_ERROR_OUT_OF_MEMORY);
        DevMem ok(d, n);
        SOAK_CHECK(fired("soak_oom") == 1, "the OUT_OF_MEMORY rule fired once");
        break;
      }
      case 1: {  // a silent bit flip in an htod copy: exactly one bit differs
        load_plan("memcpy_htod=name(soak_flip)device(3)nth(1)bitflip(1)");
        Stream s(d);
        DevMem a(d, n);
        if (!s.s || !a) break;
        const auto in = random_bytes(rng, n);
        SOAK_OK(xal_memcpy_htod(s.s, a.p, in.data(), n));
        const auto got = read_back(s.s, a.p, n);
        int bits = 0;
        for (size_t i = 0; i < n; ++i) bits += __builtin_popcount(static_cast<unsigned>(in[i] ^ got[i]));
        SOAK_CHECK(bits == 1, "the bit flip changed %d bits", bits);
        SOAK_CHECK(fired("soak_flip") == 1, "the bitflip rule fired once");
        break;
      }
      case 2: {  // an asynchronous error reaches the next synchronisation, once
        load_plan("memset=name(soak_async)device(3)nth(1)transient async(TIMEOUT)");
        Stream s(d);
        DevMem a(d, n);
        if (!s.s || !a) break;
        SOAK_OK(xal_memset(s.s, a.p, 1, n));
        SOAK_IS(xal_stream_synchronize(s.s), XAL_ERROR_TIMEOUT);
        SOAK_OK(xal_memset(s.s, a.p, 2, n));
        const auto got = read_back(s.s, a.p, n);
        SOAK_CHECK(got[0] == 2 && got[n - 1] == 2, "the stream works after the error");
        break;
      }
      case 3: {  // a delay changes nothing but the time
        load_plan("memcpy_dtoh=name(soak_delay)device(3)nth(1)delay(5)");
        Stream s(d);
        DevMem a(d, n);
        if (!s.s || !a) break;
        const auto in = random_bytes(rng, n);
        SOAK_OK(xal_memcpy_htod(s.s, a.p, in.data(), n));
        SOAK_CHECK(read_back(s.s, a.p, n) == in, "a delayed copy");
        SOAK_CHECK(fired("soak_delay") == 1, "the delay rule fired once");
        break;
      }
      default: {  // the device is lost; a reset brings it back
        load_plan("mem_alloc=name(soak_lost)device(3)nth(1)device_lost");
        xal_devptr_t p = 0;
        SOAK_IS(xal_mem_alloc(d, n, &p), XAL_ERROR_DEVICE_LOST);
        xal_device_health_t h{};
        h.struct_size = sizeof h;
        SOAK_OK(xal_device_get_health(d, &h));
        SOAK_CHECK(h.state == XAL_HEALTH_LOST, "health %u after device_lost", h.state);
        SOAK_IS(xal_mem_alloc(d, n, &p), XAL_ERROR_DEVICE_LOST);
        SOAK_OK(xal_device_reset(d));
        SOAK_OK(xal_device_get_health(d, &h));
        SOAK_CHECK(h.state == XAL_HEALTH_OK, "health %u after the reset", h.state);
        DevMem ok(d, n);
        break;
      }
    }
    load_plan("");
    {
      Stream s(d);
      if (s.s) errors(rng, d, s.s);
    }
    checker().op(4);
  }
}

void partitions(const Cycle& cy, xal_device_t* parts) {
  Rng rng(cy.index * 13 + 7);
  for (uint64_t it = 0; !cy.stop(it); ++it) {
    xal_device_t p = parts[it % 2];
    uint32_t share = 0;
    SOAK_OK(xal_device_get_compute_share(p, &share));
    SOAK_CHECK(share == (it % 2 ? 70u : 30u), "compute share %u", share);
    xal_devptr_t x = 0;
    SOAK_IS(xal_mem_alloc(p, kPartBytes + 4096, &x), XAL_ERROR_OUT_OF_MEMORY);
    {
      DevMem half(p, kPartBytes / 2);
      SOAK_IS(xal_device_set_memory_limit(p, kPartBytes / 4), XAL_ERROR_OUT_OF_MEMORY);
    }
    SOAK_OK(xal_device_set_memory_limit(p, 1 << 20));
    SOAK_IS(xal_mem_alloc(p, 2 << 20, &x), XAL_ERROR_OUT_OF_MEMORY);
    SOAK_OK(xal_device_set_memory_limit(p, 0));
    Stream s(p);
    const size_t n = 1 + rng.below(64 << 10);
    DevMem a(p, n);
    if (!s.s || !a) continue;
    const auto in = random_bytes(rng, n);
    SOAK_OK(xal_memcpy_htod(s.s, a.p, in.data(), n));
    SOAK_CHECK(read_back(s.s, a.p, n) == in, "a partition's copy");
    errors(rng, p, s.s);
    checker().op(9);
  }
}

struct CycleFigures {
  uint64_t peak_bytes = 0;  // device memory in use, sampled
  uint64_t end_bytes = 0;   // and at the end, once everything is freed
  uint64_t end_allocs = 0;
  uint64_t injected = 0;
  uint64_t heap_after = 0;  // heap_in_use() after xal_shutdown
  uint64_t rss_trim_kb = 0;  // rss_after_trim_kb() after that
  uint64_t threads_after = 0;  // threads_now() after xal_shutdown
};

uint64_t bytes_in_use(xal_device_t* devs, int n, uint64_t* allocs) {
  uint64_t sum = 0;
  for (int i = 0; i < n; ++i) {
    xal_device_metrics_t m{};
    m.struct_size = sizeof m;
    if (xal_device_get_metrics(devs[i], &m) != XAL_SUCCESS) continue;
    sum += m.xal_alloc_bytes_current;
    if (allocs) *allocs += m.xal_alloc_count_current;
  }
  return sum;
}

bool run_cycle(const Options& opt, uint64_t index, Clock::time_point deadline, CycleFigures& fig) {
  if (!opt.trace.empty()) setenv("XAL_TRACE", opt.trace.c_str(), 1);
  if (!SOAK_OK(xal_init(nullptr))) return false;
  Cycle cy;
  cy.index = index;
  cy.end = std::min(deadline, Clock::now() + std::chrono::milliseconds(opt.cycle_ms));
  cy.rounds = opt.rounds;
  uint32_t count = 0;
  SOAK_OK(xal_device_count(&count));
  if (!SOAK_CHECK(count >= 4, "%u devices, 4 needed (XAL_MOCK_DEVICES=4*...)", count)) {
    xal_shutdown();
    return false;
  }
  for (uint32_t i = 0; i < 4; ++i) SOAK_OK(xal_device_get(i, &cy.dev[i]));
  load_plan("");

  // Card 0's memory limit.
  SOAK_OK(xal_device_set_memory_limit(cy.dev[0], kLimit0));
  uint64_t free_b = 0, total = 0;
  SOAK_OK(xal_mem_get_info(cy.dev[0], &free_b, &total));
  SOAK_CHECK(total == kLimit0, "total %llu under a limit of %llu", static_cast<unsigned long long>(total),
             static_cast<unsigned long long>(kLimit0));
  xal_devptr_t big = 0;
  SOAK_IS(xal_mem_alloc(cy.dev[0], kLimit0 + 1, &big), XAL_ERROR_OUT_OF_MEMORY);

  // Every other cycle card 3 is split in two.
  const bool partitioned = index % 2 == 1;
  xal_device_t parts[2]{};
  if (partitioned) {
    xal_partition_desc_t desc[2]{};
    desc[0] = {sizeof desc[0], kPartBytes, 30};
    desc[1] = {sizeof desc[1], kPartBytes, 0};
    SOAK_OK(xal_device_partition(cy.dev[3], 2, desc, parts));
    uint32_t now = 0;
    SOAK_OK(xal_device_count(&now));
    SOAK_CHECK(now == count + 2, "%u devices with 2 partitions, %u before", now, count);
  }

  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) {
    SOAK_OK(xal_stream_create(cy.dev[i], 0, &cy.shared_stream[i]));
    SOAK_OK(xal_event_create(cy.dev[i], XAL_EVENT_DISABLE_TIMING, &cy.shared_event[i]));
  }
  std::atomic<size_t> finished{0};
  auto spawn = [&](auto body) {
    threads.emplace_back([&finished, body] {
      body();
      finished.fetch_add(1);
    });
  };
  for (int i = 0; i < opt.threads; ++i) spawn([&cy, i] { worker(cy, i); });
  spawn([&cy] { collectives(cy); });
  if (partitioned) spawn([&cy, &parts] { partitions(cy, parts); });
  else spawn([&cy] { faults(cy); });
  while (finished.load() < threads.size() && (cy.rounds || !cy.stop(0))) {
    fig.peak_bytes = std::max(fig.peak_bytes, bytes_in_use(cy.dev, 4, nullptr) +
                                                  (partitioned ? bytes_in_use(parts, 2, nullptr) : 0));
    std::this_thread::sleep_for(std::chrono::milliseconds(cy.rounds ? 10 : 100));
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < 3; ++i) {
    SOAK_OK(xal_event_destroy(cy.shared_event[i]));
    SOAK_OK(xal_stream_destroy(cy.shared_stream[i]));
  }

  fig.end_bytes = bytes_in_use(cy.dev, 4, &fig.end_allocs) +
                  (partitioned ? bytes_in_use(parts, 2, &fig.end_allocs) : 0);
  SOAK_CHECK(fig.end_bytes == 0 && fig.end_allocs == 0, "%llu bytes in %llu allocations left",
             static_cast<unsigned long long>(fig.end_bytes),
             static_cast<unsigned long long>(fig.end_allocs));
  xal_fault_counters_t fc{};
  fc.struct_size = sizeof fc;
  SOAK_OK(xal_fault_get_counters(&fc));
  fig.injected = fc.injected;
  if (partitioned) SOAK_OK(xal_device_unpartition(cy.dev[3]));
  SOAK_OK(xal_device_set_memory_limit(cy.dev[0], 0));
  SOAK_OK(xal_shutdown());
  if (!opt.trace.empty())
    SOAK_CHECK(file_size(opt.trace) > 0, "the trace %s was written", opt.trace.c_str());
  fig.heap_after = heap_in_use();
  fig.rss_trim_kb = rss_after_trim_kb();
  fig.threads_after = threads_now();
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse_options(argc, argv);
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::milliseconds(static_cast<int64_t>(opt.seconds * 1000));
  uint64_t cycle = 0;
  while (opt.cycles ? cycle < opt.cycles : Clock::now() < deadline) {
    CycleFigures fig;
    const bool ran = run_cycle(opt, cycle, deadline, fig);
    const double t = std::chrono::duration<double>(Clock::now() - start).count();
    char line[640];
    std::snprintf(line, sizeof line,
                  "{\"t\":%.1f,\"cycle\":%llu,\"ops\":%llu,\"checks\":%llu,\"failures\":%llu,"
                  "\"faults_injected\":%llu,\"device_bytes_peak\":%llu,\"device_bytes_end\":%llu,"
                  "\"heap_after_shutdown\":%llu,\"rss_after_trim_kb\":%llu,"
                  "\"threads_after_shutdown\":%llu}",
                  t, static_cast<unsigned long long>(cycle),
                  static_cast<unsigned long long>(checker().ops()),
                  static_cast<unsigned long long>(checker().checks()),
                  static_cast<unsigned long long>(checker().failures()),
                  static_cast<unsigned long long>(fig.injected),
                  static_cast<unsigned long long>(fig.peak_bytes),
                  static_cast<unsigned long long>(fig.end_bytes),
                  static_cast<unsigned long long>(fig.heap_after),
                  static_cast<unsigned long long>(fig.rss_trim_kb),
                  static_cast<unsigned long long>(fig.threads_after));
    status_line(opt.status, line);
    ++cycle;
    if (!ran) break;
  }
  std::fprintf(stderr, "xal_soak: %llu cycles, %llu operations, %llu checks, %llu failed\n",
               static_cast<unsigned long long>(cycle), static_cast<unsigned long long>(checker().ops()),
               static_cast<unsigned long long>(checker().checks()),
               static_cast<unsigned long long>(checker().failures()));
  return checker().failures() == 0 && cycle > 0 ? 0 : 1;
}
