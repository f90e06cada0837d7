// xal_mpi_test p2p_direct: messages of 256 KiB and more between processes
// take the direct same-host path (the receiver maps the sender's mock
// device memory and copies from it) unless XAL_P2P_DIRECT=0: exact data for
// many sizes and offsets, a ring (both directions at once on 2 processes),
// alltoallv, imported send memory (the bytes then go through MPI), size
// mismatches on both sides of the threshold, peers that never post
// (TIMEOUT), a mapping cache that stays bounded, and no mapping or file
// descriptor left once the communicators are gone. The mappings are seen in
// /proc/self/maps (the mock's device memory is a memory file per card).
#include <dirent.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "mpi_test.hpp"

namespace xal_mpi_test {

namespace {

constexpr size_t kBig = size_t{8} << 20;

// Mappings of mock device memory in this process (its own cards' and
// those opened from other processes).
size_t arena_maps() {
  std::ifstream in("/proc/self/maps");
  size_t n = 0;
  for (std::string line; std::getline(in, line);) n += line.find("xal-mock-arena") != std::string::npos;
  return n;
}

size_t open_fds() {
  size_t n = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (readdir(d)) ++n;
    closedir(d);
  }
  return n;
}

uint8_t pattern(uint32_t g, size_t i, uint32_t salt) {
  return static_cast<uint8_t>(g * 29 + i * 7 + (i >> 9) + salt);
}

struct Set {
  Job& job;
  std::vector<xal_comm_t> comm;
  std::vector<xal_devptr_t> send, recv;
  uint32_t prev(uint32_t g) const { return (g + job.total - 1) % job.total; }
  uint32_t next(uint32_t g) const { return (g + 1) % job.total; }
  uint32_t g(size_t i) const { return job.first + static_cast<uint32_t>(i); }

  void put(size_t i, xal_devptr_t p, const std::vector<uint8_t>& v) {
    xal_memcpy_htod(job.stream[i], p, v.data(), v.size());
    xal_stream_synchronize(job.stream[i]);
  }
  std::vector<uint8_t> get(size_t i, xal_devptr_t p, size_t bytes) {
    std::vector<uint8_t> v(bytes);
    xal_memcpy_dtoh(job.stream[i], v.data(), p, bytes);
    xal_stream_synchronize(job.stream[i]);
    return v;
  }
  // call(i) on every local rank in one group; then each stream's status
  // must be want(i).
  void grouped(const char* what, const std::function<xal_status_t(size_t)>& call,
               const std::function<xal_status_t(size_t)>& want = {}) {
    CHECK(xal_group_start() == XAL_SUCCESS, "group");
    for (size_t i = 0; i < comm.size(); ++i) CHECK(call(i) == XAL_SUCCESS, "%s: %s", what, last_message().c_str());
    CHECK(xal_group_end() == XAL_SUCCESS, "%s: %s", what, last_message().c_str());
    for (size_t i = 0; i < comm.size(); ++i) {
      const xal_status_t s = xal_stream_synchronize(job.stream[i]);
      const xal_status_t w = want ? want(i) : XAL_SUCCESS;
      CHECK(s == w, "%s: rank %u: status %d, expected %d: %s", what, g(i), s, w, last_message().c_str());
    }
  }
};

std::vector<xal_comm_t> dup(Job& job) {
  std::vector<xal_comm_t> out(job.comm.size(), nullptr);
  CHECK(xal_group_start() == XAL_SUCCESS, "group");
  for (size_t i = 0; i < job.comm.size(); ++i) xal_comm_dup(job.comm[i], &out[i]);
  CHECK(xal_group_end() == XAL_SUCCESS, "dup: %s", last_message().c_str());
  return out;
}

// Ring of `bytes` from send + src_off to recv + dst_off; checks the data
// and the guard bytes around it.
void ring(Set& s, size_t bytes, size_t src_off, size_t dst_off, uint32_t salt) {
  for (size_t i = 0; i < s.comm.size(); ++i) {
    std::vector<uint8_t> v(kBig);
    for (size_t k = 0; k < kBig; ++k) v[k] = pattern(s.g(i), k, salt);
    s.put(i, s.send[i], v);
    s.put(i, s.recv[i], std::vector<uint8_t>(kBig, 0xee));
  }
  s.grouped("ring", [&](size_t i) {
    xal_status_t r = xal_recv(s.comm[i], s.recv[i] + dst_off, bytes, XAL_DTYPE_U8, s.prev(s.g(i)), s.job.stream[i]);
    return r ? r : xal_send(s.comm[i], s.send[i] + src_off, bytes, XAL_DTYPE_U8, s.next(s.g(i)), s.job.stream[i]);
  });
  for (size_t i = 0; i < s.comm.size(); ++i) {
    const auto got = s.get(i, s.recv[i], kBig);
    size_t wrong = 0;
    for (size_t k = 0; k < bytes; ++k) wrong += got[dst_off + k] != pattern(s.prev(s.g(i)), src_off + k, salt);
    const bool guards = (dst_off == 0 || got[dst_off - 1] == 0xee) &&
                        (dst_off + bytes == kBig || got[dst_off + bytes] == 0xee);
    CHECK(wrong == 0 && guards, "ring of %zu bytes (+%zu -> +%zu): rank %u: %zu wrong bytes, guards %d",
          bytes, src_off, dst_off, s.g(i), wrong, guards);
  }
}

void alltoallv(Set& s) {
  const uint32_t n = s.job.total;
  const size_t block = (300 << 10) + 3;  // bytes per pair
  std::vector<size_t> counts(n, block), displs(n);
  for (uint32_t p = 0; p < n; ++p) displs[p] = p * (block + 5);
  if (displs[n - 1] + block > kBig) return;
  for (size_t i = 0; i < s.comm.size(); ++i) {
    std::vector<uint8_t> v(kBig);
    for (size_t k = 0; k < kBig; ++k) v[k] = pattern(s.g(i), k, 3);
    s.put(i, s.send[i], v);
  }
  s.grouped("alltoallv", [&](size_t i) {
    return xal_alltoallv(s.comm[i], s.send[i], counts.data(), displs.data(), s.recv[i], counts.data(),
                         displs.data(), XAL_DTYPE_U8, s.job.stream[i]);
  });
  for (size_t i = 0; i < s.comm.size(); ++i) {
    const auto got = s.get(i, s.recv[i], kBig);
    size_t wrong = 0;
    for (uint32_t p = 0; p < n; ++p)
      for (size_t k = 0; k < block; ++k) wrong += got[displs[p] + k] != pattern(p, displs[s.g(i)] + k, 3);
    CHECK(wrong == 0, "alltoallv: rank %u has %zu wrong bytes", s.g(i), wrong);
  }
}

// Rank 0 sends `sent` bytes to the last rank, which expects `expected`.
// The sender learns of it on the direct path only (plain MPI sends end
// before the receive looks at them).
void mismatch(Set& s, size_t sent, size_t expected, bool direct) {
  const uint32_t last = s.job.total - 1;
  s.grouped("mismatch", [&](size_t i) {
    if (s.g(i) == 0) return xal_send(s.comm[i], s.send[i], sent, XAL_DTYPE_U8, last, s.job.stream[i]);
    if (s.g(i) == last) return xal_recv(s.comm[i], s.recv[i], expected, XAL_DTYPE_U8, 0, s.job.stream[i]);
    return XAL_SUCCESS;
  }, [&](size_t i) {
    if (s.g(i) == 0 && !direct) return XAL_SUCCESS;
    return s.g(i) == 0 || s.g(i) == last ? XAL_ERROR_COLLECTIVE_MISMATCH : XAL_SUCCESS;
  });
}

// One message of rank 0 to the last rank from each of `count` allocations.
void many_allocations(Set& s, size_t count) {
  const uint32_t last = s.job.total - 1;
  const size_t bytes = 256 << 10;
  const bool sender = s.g(0) == 0;
  std::vector<xal_devptr_t> kept(count, 0);  // alive to the end: each its own handle
  for (size_t k = 0; k < count; ++k) {
    if (sender) {
      CHECK(xal_mem_alloc(s.job.dev[0], bytes, &kept[k]) == XAL_SUCCESS, "%s", last_message().c_str());
      s.put(0, kept[k], std::vector<uint8_t>(bytes, static_cast<uint8_t>(k)));
    }
    s.grouped("many", [&](size_t i) {
      if (s.g(i) == 0) return xal_send(s.comm[i], kept[k], bytes, XAL_DTYPE_U8, last, s.job.stream[i]);
      if (s.g(i) == last) return xal_recv(s.comm[i], s.recv[i], bytes, XAL_DTYPE_U8, 0, s.job.stream[i]);
      return XAL_SUCCESS;
    });
    const size_t i = s.comm.size() - 1;
    if (s.g(i) == last) {
      const auto got = s.get(i, s.recv[i], bytes);
      CHECK(got == std::vector<uint8_t>(bytes, static_cast<uint8_t>(k)), "many: message %zu", k);
    }
  }
  for (xal_devptr_t p : kept)
    if (p) xal_mem_free(s.job.dev[0], p);
}

}  // namespace

void run_p2p_direct(Job& job) {
  const char* env = std::getenv("XAL_P2P_DIRECT");
  const bool direct = !(env && std::strcmp(env, "0") == 0);
  if (!open(job, 2000)) return;
  const size_t fds0 = open_fds(), maps0 = arena_maps();
  Set s{job, dup(job), {}, {}};
  for (size_t i = 0; i < job.dev.size(); ++i) {
    xal_devptr_t a = 0, b = 0;
    CHECK(xal_mem_alloc(job.dev[i], kBig, &a) == XAL_SUCCESS && xal_mem_alloc(job.dev[i], kBig, &b) == XAL_SUCCESS,
          "%s", last_message().c_str());
    s.send.push_back(a);
    s.recv.push_back(b);
  }
  const size_t maps1 = arena_maps();
  uint32_t salt = 0;
  // From 4 MiB the receiver copies with streaming stores (stream_copy.hpp):
  // sizes on both sides of it, at odd offsets.
  for (size_t bytes : {size_t{256} << 10, (size_t{256} << 10) + 1, (size_t{1} << 20) + 3, (size_t{3} << 20) + 7,
                       (size_t{4} << 20) - 1, (size_t{4} << 20) + 5, (size_t{5} << 20) + 1, size_t{100}})
    for (size_t off : {size_t{0}, size_t{1}, size_t{4099}}) ring(s, bytes, off, (off * 3) % 4096, ++salt);
  // Every process receives from another one in the ring.
  const size_t maps2 = arena_maps();
  CHECK(direct ? maps2 > maps1 : maps2 == maps1, "direct %d: %zu mappings before the ring, %zu after", direct,
        maps1, maps2);
  note(job, "mappings " + std::to_string(maps1) + " -> " + std::to_string(maps2));
  alltoallv(s);
  // Imported host memory cannot be exported: its bytes go through MPI (no
  // mapping opened; the ring's other senders' mappings are cached).
  const size_t maps_before_import = arena_maps();
  std::vector<uint8_t> host(kBig);
  for (size_t k = 0; k < kBig; ++k) host[k] = pattern(job.first, k, 9);
  xal_devptr_t imported = 0;
  CHECK(xal_mem_import(job.dev[0], reinterpret_cast<uintptr_t>(host.data()), kBig, XAL_MEM_IMPORT_HOST,
                       &imported) == XAL_SUCCESS, "import: %s", last_message().c_str());
  s.grouped("imported", [&](size_t i) {
    xal_status_t r = xal_recv(s.comm[i], s.recv[i], 1 << 20, XAL_DTYPE_U8, s.prev(s.g(i)), job.stream[i]);
    const xal_devptr_t from = i == 0 ? imported : s.send[i];
    return r ? r : xal_send(s.comm[i], from, 1 << 20, XAL_DTYPE_U8, s.next(s.g(i)), job.stream[i]);
  });
  for (size_t i = 0; i < job.dev.size(); ++i) {
    // The sender's first local rank sent the imported memory.
    const uint32_t p = s.prev(s.g(i));
    bool first_local = false;
    for (uint32_t q = 0, at = 0; q < job.local.size(); at += job.local[q++]) first_local |= at == p;
    const auto got = s.get(i, s.recv[i], 1 << 20);
    size_t wrong = 0;
    for (size_t k = 0; k < got.size(); ++k) wrong += got[k] != pattern(p, k, first_local ? 9 : 3);
    CHECK(wrong == 0, "imported: rank %u has %zu wrong bytes", s.g(i), wrong);
  }
  xal_mem_free(job.dev[0], imported);
  CHECK(arena_maps() == maps_before_import, "imported memory was mapped: %zu mappings, %zu before",
        arena_maps(), maps_before_import);
  // Sizes that disagree, both above the threshold; then the set still
  // pairs. (Across the threshold: below, on a set of its own.)
  mismatch(s, 1 << 20, (1 << 20) + 8, direct);
  ring(s, 1 << 20, 0, 0, 77);
  many_allocations(s, 70);
  const size_t maps3 = arena_maps();
  CHECK(maps3 <= maps1 + 64, "the mapping cache holds %zu mappings (at most 64 expected)", maps3 - maps1);
  // The last rank's process opened more than 70 handles: the cache is full.
  const bool receiver = job.first + job.dev.size() == job.total;
  CHECK(!direct || !receiver || maps3 >= maps1 + 48, "the receiver holds only %zu mappings", maps3 - maps1);
  note(job, "mappings after 70 allocations " + std::to_string(maps3));
  for (size_t i = 0; i < job.dev.size(); ++i) {
    xal_mem_free(job.dev[i], s.send[i]);
    xal_mem_free(job.dev[i], s.recv[i]);
  }
  for (xal_comm_t c : s.comm) CHECK(xal_comm_destroy(c) == XAL_SUCCESS, "%s", last_message().c_str());
  CHECK(arena_maps() == maps0, "mappings left: %zu, %zu before", arena_maps(), maps0);
  CHECK(open_fds() == fds0, "file descriptors: %zu, %zu before", open_fds(), fds0);
  // Peers that never post: the sender and the receiver time out.
  const uint32_t last = job.total - 1;
  // Sizes that disagree across the threshold (1 MiB sent, 1000 bytes
  // expected): the receive fails with MISMATCH at once; a direct sender
  // waits for the reply that never comes and ends with TIMEOUT within the
  // timeout (a plain MPI send of it ends before the receive looks at it).
  {
    std::vector<xal_comm_t> d = dup(job);
    std::vector<xal_devptr_t> p(job.dev.size(), 0);
    for (size_t i = 0; i < job.dev.size(); ++i)
      CHECK(xal_mem_alloc(job.dev[i], kBig, &p[i]) == XAL_SUCCESS, "%s", last_message().c_str());
    for (size_t i = 0; i < job.dev.size(); ++i) {
      const uint32_t g = job.first + static_cast<uint32_t>(i);
      if (g != 0 && g != last) continue;
      const xal_status_t r = g == 0 ? xal_send(d[i], p[i], 1 << 20, XAL_DTYPE_U8, last, job.stream[i])
                                    : xal_recv(d[i], p[i], 1000, XAL_DTYPE_U8, 0, job.stream[i]);
      CHECK(r == XAL_SUCCESS, "%s", last_message().c_str());
    }
    for (size_t i = 0; i < job.dev.size(); ++i) {
      const uint32_t g = job.first + static_cast<uint32_t>(i);
      if (g != 0 && g != last) continue;
      const xal_status_t st = xal_stream_synchronize(job.stream[i]);
      const xal_status_t want = g == last ? XAL_ERROR_COLLECTIVE_MISMATCH
                                : direct  ? XAL_ERROR_TIMEOUT
                                          : XAL_SUCCESS;
      CHECK(st == want, "across the threshold, rank %u: status %d (want %d) %s", g, st, want,
            last_message().c_str());
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (xal_comm_t c : d) xal_comm_destroy(c);
    for (size_t i = 0; i < job.dev.size(); ++i) xal_mem_free(job.dev[i], p[i]);
  }
  for (int side = 0; side < 2; ++side) {
    std::vector<xal_comm_t> d = dup(job);
    const size_t i = side == 0 ? 0 : job.dev.size() - 1;
    xal_devptr_t p = 0;
    CHECK(xal_mem_alloc(job.dev[i], kBig, &p) == XAL_SUCCESS, "%s", last_message().c_str());
    const uint32_t g = job.first + static_cast<uint32_t>(i);
    if ((side == 0 && g == 0) || (side == 1 && g == last)) {
      const xal_status_t r = side == 0 ? xal_send(d[i], p, 1 << 20, XAL_DTYPE_U8, last, job.stream[i])
                                       : xal_recv(d[i], p, 1 << 20, XAL_DTYPE_U8, 0, job.stream[i]);
      CHECK(r == XAL_SUCCESS, "%s", last_message().c_str());
      const xal_status_t st = xal_stream_synchronize(job.stream[i]);
      CHECK(st == XAL_ERROR_TIMEOUT, "a peer that never posts: status %d %s", st, last_message().c_str());
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (xal_comm_t c : d) xal_comm_destroy(c);
    xal_mem_free(job.dev[i], p);
  }
}

}  // namespace xal_mpi_test
