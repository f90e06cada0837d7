// xal_mpi_test p2p: point-to-point, the v-collectives, gather/scatter and
// split across processes (local ranks meet in host memory, messages to
// other processes go through MPI), exact results; a mismatch across
// processes, a peer that never sends (TIMEOUT) and local ranks that choose
// different colors (NOT_SUPPORTED).
#include <cstring>
#include <functional>
#include <numeric>
#include <vector>

#include "mpi_test.hpp"
#include "xal_common/reduce.hpp"

namespace xal_mpi_test {

namespace {

constexpr size_t kBytes = 1 << 16;

uint8_t pattern(uint32_t g, size_t i) { return static_cast<uint8_t>(g * 37 + i * 11 + 1); }

struct Buffers {
  std::vector<xal_devptr_t> send, recv;
};

Buffers make_buffers(Job& job) {
  Buffers b;
  for (size_t i = 0; i < job.dev.size(); ++i) {
    xal_devptr_t s = 0, r = 0;
    CHECK(xal_mem_alloc(job.dev[i], kBytes, &s) == XAL_SUCCESS, "%s", last_message().c_str());
    CHECK(xal_mem_alloc(job.dev[i], kBytes, &r) == XAL_SUCCESS, "%s", last_message().c_str());
    b.send.push_back(s);
    b.recv.push_back(r);
  }
  return b;
}

void fill(Job& job, const Buffers& b) {
  std::vector<uint8_t> v(kBytes), clear(kBytes, 0xee);
  for (size_t i = 0; i < job.dev.size(); ++i) {
    for (size_t k = 0; k < kBytes; ++k) v[k] = pattern(job.first + static_cast<uint32_t>(i), k);
    xal_memcpy_htod(job.stream[i], b.send[i], v.data(), kBytes);
    xal_memcpy_htod(job.stream[i], b.recv[i], clear.data(), kBytes);
    xal_stream_synchronize(job.stream[i]);
  }
}

std::vector<uint8_t> read(Job& job, size_t i, xal_devptr_t p, size_t bytes) {
  std::vector<uint8_t> v(bytes);
  xal_memcpy_dtoh(job.stream[i], v.data(), p, bytes);
  xal_stream_synchronize(job.stream[i]);
  return v;
}

// call(local index, global rank) for every local rank, in one group; then
// every stream, which must pass.
void grouped(Job& job, const char* what, const std::function<xal_status_t(size_t, uint32_t)>& call) {
  CHECK(xal_group_start() == XAL_SUCCESS, "group");
  for (size_t i = 0; i < job.dev.size(); ++i) {
    const xal_status_t s = call(i, job.first + static_cast<uint32_t>(i));
    CHECK(s == XAL_SUCCESS, "%s: %s", what, last_message().c_str());
  }
  CHECK(xal_group_end() == XAL_SUCCESS, "%s: %s", what, last_message().c_str());
  for (size_t i = 0; i < job.dev.size(); ++i) {
    const xal_status_t s = xal_stream_synchronize(job.stream[i]);
    CHECK(s == XAL_SUCCESS, "%s: stream of local %zu: %d %s", what, i, s, last_message().c_str());
  }
}

void ring(Job& job, const Buffers& b) {
  const uint32_t n = job.total;
  fill(job, b);
  grouped(job, "ring", [&](size_t i, uint32_t g) {
    xal_status_t s = xal_recv(job.comm[i], b.recv[i], 999, XAL_DTYPE_U8, (g + n - 1) % n, job.stream[i]);
    return s ? s : xal_send(job.comm[i], b.send[i], 999, XAL_DTYPE_U8, (g + 1) % n, job.stream[i]);
  });
  for (size_t i = 0; i < job.dev.size(); ++i) {
    const uint32_t g = job.first + static_cast<uint32_t>(i);
    const auto got = read(job, i, b.recv[i], 1000);
    int wrong = 0;
    for (size_t k = 0; k < 999; ++k) wrong += got[k] != pattern((g + n - 1) % n, k);
    CHECK(wrong == 0 && got[999] == 0xee, "ring: rank %u has %d wrong bytes", g, wrong);
  }
}

void vcollectives(Job& job, const Buffers& b) {
  const uint32_t n = job.total;
  // alltoallv: rank f sends (f + 1) * (t + 1) u32 to t, blocks back to back.
  auto cnt = [](uint32_t f, uint32_t t) { return size_t{(f + 1) * (t + 1)}; };
  std::vector<std::vector<size_t>> sc(n, std::vector<size_t>(n)), sd = sc, rc = sc, rd = sc;
  for (uint32_t g = 0; g < n; ++g) {
    size_t s_at = 0, r_at = 0;
    for (uint32_t p = 0; p < n; ++p) {
      sc[g][p] = cnt(g, p), sd[g][p] = s_at, s_at += sc[g][p];
      rc[g][p] = cnt(p, g), rd[g][p] = r_at, r_at += rc[g][p] + 1;
    }
  }
  fill(job, b);
  grouped(job, "alltoallv", [&](size_t i, uint32_t g) {
    return xal_alltoallv(job.comm[i], b.send[i], sc[g].data(), sd[g].data(), b.recv[i],
                         rc[g].data(), rd[g].data(), XAL_DTYPE_U32, job.stream[i]);
  });
  for (size_t i = 0; i < job.dev.size(); ++i) {
    const uint32_t g = job.first + static_cast<uint32_t>(i);
    const auto got = read(job, i, b.recv[i], kBytes);
    int wrong = 0;
    for (uint32_t p = 0; p < n; ++p)
      for (size_t k = 0; k < rc[g][p] * 4; ++k) wrong += got[rd[g][p] * 4 + k] != pattern(p, sd[p][g] * 4 + k);
    CHECK(wrong == 0, "alltoallv: rank %u has %d wrong bytes", g, wrong);
  }
  // allgatherv: rank p gives 3p + 1 f64 at displacement 40p.
  std::vector<size_t> ac(n), ad(n);
  for (uint32_t p = 0; p < n; ++p) ac[p] = 3 * p + 1, ad[p] = 40 * p;
  fill(job, b);
  grouped(job, "allgatherv", [&](size_t i, uint32_t g) {
    return xal_allgatherv(job.comm[i], b.send[i], ac[g], b.recv[i], ac.data(), ad.data(),
                          XAL_DTYPE_F64, job.stream[i]);
  });
  for (size_t i = 0; i < job.dev.size(); ++i) {
    const auto got = read(job, i, b.recv[i], 40 * 8 * n);
    int wrong = 0;
    for (uint32_t p = 0; p < n; ++p)
      for (size_t k = 0; k < ac[p] * 8; ++k) wrong += got[ad[p] * 8 + k] != pattern(p, k);
    CHECK(wrong == 0, "allgatherv: local %zu has %d wrong bytes", i, wrong);
  }
  // gather and scatter from every root.
  for (uint32_t root = 0; root < n; ++root) {
    fill(job, b);
    grouped(job, "gather", [&](size_t i, uint32_t) {
      return xal_gather(job.comm[i], b.send[i], b.recv[i], 21, XAL_DTYPE_I8, root, job.stream[i]);
    });
    for (size_t i = 0; i < job.dev.size(); ++i) {
      if (job.first + i != root) continue;
      const auto got = read(job, i, b.recv[i], 21 * n);
      int wrong = 0;
      for (uint32_t p = 0; p < n; ++p)
        for (size_t k = 0; k < 21; ++k) wrong += got[p * 21 + k] != pattern(p, k);
      CHECK(wrong == 0, "gather to %u: %d wrong bytes", root, wrong);
    }
    grouped(job, "scatter", [&](size_t i, uint32_t) {
      return xal_scatter(job.comm[i], b.send[i], b.recv[i], 21, XAL_DTYPE_I8, root, job.stream[i]);
    });
    for (size_t i = 0; i < job.dev.size(); ++i) {
      const uint32_t g = job.first + static_cast<uint32_t>(i);
      const auto got = read(job, i, b.recv[i], 21);
      int wrong = 0;
      for (size_t k = 0; k < 21; ++k) wrong += got[k] != pattern(root, g * 21 + k);
      CHECK(wrong == 0, "scatter from %u: rank %u has %d wrong bytes", root, g, wrong);
    }
  }
  // reduce_scatterv, i32 sum: block p has p + 5 elements; input g * 1000 + k.
  std::vector<size_t> counts(n);
  for (uint32_t p = 0; p < n; ++p) counts[p] = p + 5;
  const size_t total = std::accumulate(counts.begin(), counts.end(), size_t{0});
  for (size_t i = 0; i < job.dev.size(); ++i) {
    std::vector<int32_t> v(total);
    for (size_t k = 0; k < total; ++k) v[k] = static_cast<int32_t>((job.first + i) * 1000 + k);
    xal_memcpy_htod(job.stream[i], b.send[i], v.data(), total * 4);
  }
  grouped(job, "reduce_scatterv", [&](size_t i, uint32_t) {
    return xal_reduce_scatterv(job.comm[i], b.send[i], b.recv[i], counts.data(), XAL_DTYPE_I32,
                               XAL_OP_SUM, job.stream[i]);
  });
  for (size_t i = 0; i < job.dev.size(); ++i) {
    const uint32_t g = job.first + static_cast<uint32_t>(i);
    const auto bytes = read(job, i, b.recv[i], counts[g] * 4);
    std::vector<int32_t> got(counts[g]);
    std::memcpy(got.data(), bytes.data(), bytes.size());
    const size_t offset = std::accumulate(counts.begin(), counts.begin() + g, size_t{0});
    int wrong = 0;
    for (size_t k = 0; k < counts[g]; ++k) {
      int64_t want = 0;
      for (uint32_t p = 0; p < n; ++p) want += p * 1000 + offset + k;
      wrong += got[k] != want;
    }
    CHECK(wrong == 0, "reduce_scatterv: rank %u has %d wrong elements", g, wrong);
  }
}

void splits(Job& job, const Buffers& b) {
  // Color: process parity; key: reversed global rank.
  const int32_t color = job.rank % 2;
  std::vector<xal_comm_t> child(job.dev.size(), nullptr);
  CHECK(xal_group_start() == XAL_SUCCESS, "group");
  for (size_t i = 0; i < job.dev.size(); ++i)
    CHECK(xal_comm_split(job.comm[i], color, -static_cast<int32_t>(job.first + i), nullptr, &child[i]) == XAL_SUCCESS,
          "split: %s", last_message().c_str());
  CHECK(xal_group_end() == XAL_SUCCESS, "split: %s", last_message().c_str());
  uint32_t expect_size = 0, before = 0;  // ranks of the color; those after this process's
  for (int p = 0; p < job.size; ++p)
    if (p % 2 == color) {
      expect_size += job.local[static_cast<size_t>(p)];
      if (p > job.rank) before += job.local[static_cast<size_t>(p)];
    }
  for (size_t i = 0; i < child.size(); ++i) {
    CHECK(child[i] != nullptr, "split: no child");
    if (!child[i]) return;
    xal_comm_info_t info{};
    info.struct_size = sizeof info;
    xal_comm_get_info(child[i], &info);
    CHECK(info.size == expect_size, "split: size %u, expected %u", info.size, expect_size);
    // Processes by reversed key: later processes first; local ranks reversed.
    const uint32_t want = before + static_cast<uint32_t>(job.dev.size() - 1 - i);
    CHECK(info.rank == want, "split: rank %u, expected %u", info.rank, want);
    CHECK(info.path == XAL_COMM_PATH_MPI, "split: path %u", info.path);
  }
  // The child works: an allreduce over it.
  for (size_t i = 0; i < child.size(); ++i) {
    const int32_t one = 1;
    xal_memcpy_htod(job.stream[i], b.send[i], &one, 4);
  }
  grouped(job, "child allreduce", [&](size_t i, uint32_t) {
    return xal_allreduce(child[i], b.send[i], b.recv[i], 1, XAL_DTYPE_I32, XAL_OP_SUM, job.stream[i]);
  });
  for (size_t i = 0; i < child.size(); ++i) {
    int32_t got = 0;
    const auto bytes = read(job, i, b.recv[i], 4);
    std::memcpy(&got, bytes.data(), 4);
    CHECK(got == static_cast<int32_t>(expect_size), "child allreduce: %d, expected %u", got, expect_size);
    CHECK(xal_comm_destroy(child[i]) == XAL_SUCCESS, "%s", last_message().c_str());
  }
  // Local ranks of one process with different colors: NOT_SUPPORTED there.
  std::fill(child.begin(), child.end(), nullptr);
  CHECK(xal_group_start() == XAL_SUCCESS, "group");
  for (size_t i = 0; i < job.dev.size(); ++i)
    xal_comm_split(job.comm[i], static_cast<int32_t>(i), 0, nullptr, &child[i]);
  const xal_status_t s = xal_group_end();
  if (job.dev.size() > 1) {
    CHECK(s == XAL_ERROR_NOT_SUPPORTED, "mixed colors: status %d", s);
    CHECK(last_message().find("different colors") != std::string::npos, "%s", last_message().c_str());
  } else {
    CHECK(s == XAL_SUCCESS, "one local rank: %s", last_message().c_str());
  }
  for (xal_comm_t c : child)
    if (c) xal_comm_destroy(c);
}

// A receive expecting more than its send: COLLECTIVE_MISMATCH at the
// receiver, then the communicator still pairs; then a receive that no one
// answers: TIMEOUT (on a duplicate, which it breaks).
void errors(Job& job, const Buffers& b) {
  const uint32_t last = job.total - 1;  // in another process than rank 0
  for (size_t i = 0; i < job.dev.size(); ++i) {
    const uint32_t g = job.first + static_cast<uint32_t>(i);
    if (g == 0) CHECK(xal_send(job.comm[i], b.send[i], 10, XAL_DTYPE_U8, last, job.stream[i]) == XAL_SUCCESS, "send");
    if (g == last) CHECK(xal_recv(job.comm[i], b.recv[i], 11, XAL_DTYPE_U8, 0, job.stream[i]) == XAL_SUCCESS, "recv");
  }
  for (size_t i = 0; i < job.dev.size(); ++i) {
    const xal_status_t s = xal_stream_synchronize(job.stream[i]);
    if (job.first + i == last)
      CHECK(s == XAL_ERROR_COLLECTIVE_MISMATCH, "mismatch: status %d %s", s, last_message().c_str());
  }
  ring(job, b);
  std::vector<xal_comm_t> dup(job.dev.size(), nullptr);
  CHECK(xal_group_start() == XAL_SUCCESS, "group");
  for (size_t i = 0; i < job.dev.size(); ++i) xal_comm_dup(job.comm[i], &dup[i]);
  CHECK(xal_group_end() == XAL_SUCCESS, "dup: %s", last_message().c_str());
  for (size_t i = 0; i < job.dev.size(); ++i) {
    if (job.first + i != last || !dup[i]) continue;
    CHECK(xal_recv(dup[i], b.recv[i], 4, XAL_DTYPE_U8, 0, job.stream[i]) == XAL_SUCCESS, "recv");
    const xal_status_t s = xal_stream_synchronize(job.stream[i]);
    CHECK(s == XAL_ERROR_TIMEOUT, "a send that never comes: status %d %s", s, last_message().c_str());
  }
  for (xal_comm_t c : dup)
    if (c) xal_comm_destroy(c);
}

}  // namespace

void run_p2p(Job& job) {
  if (!open(job, 2000)) return;
  Buffers b = make_buffers(job);
  ring(job, b);
  vcollectives(job, b);
  splits(job, b);
  errors(job, b);
  for (size_t i = 0; i < job.dev.size(); ++i) {
    xal_mem_free(job.dev[i], b.send[i]);
    xal_mem_free(job.dev[i], b.recv[i]);
  }
}

}  // namespace xal_mpi_test
