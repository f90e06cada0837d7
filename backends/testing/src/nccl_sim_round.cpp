// nccl_sim_round.cpp -- what the simulated NCCL does when every rank of a
// round has come (SIMULATION ONLY): collectives computed into scratch and
// then copied out (NCCL allows them in place). Sends and receives are
// nccl_sim_p2p.cpp's.
#include <cstring>
#include <span>

#include "nccl_sim_state.h"
#include "xal_common/reduce.hpp"

namespace xalsim_nccl {
namespace {

// A rank's collectives of a round, in order.
std::vector<const Op*> collectives(const std::vector<Op>& ops) {
  std::vector<const Op*> out;
  for (const Op& o : ops) {
    if (!is_p2p(o)) out.push_back(&o);
  }
  return out;
}

}  // namespace

void run_round(Clique& clique, Clique::Round& round) {
  const int n = clique.size;
  std::vector<std::vector<const Op*>> colls(n);
  for (int r = 0; r < n; ++r) colls[r] = collectives(round.ops[r]);
  std::vector<std::vector<char>> scratch(n);
  for (size_t i = 0; i < colls[0].size(); ++i) {
    if (colls[0][i]->count == 0) continue;  // (counts agree: consistent())
    const size_t es = xal::common::dtype_size(colls[0][i]->dtype);
    std::vector<const void*> sends(n);
    for (int q = 0; q < n; ++q) sends[q] = colls[q][i]->send;
    for (int r = 0; r < n; ++r) {
      const Op& o = *colls[r][i];
      const size_t elems = o.kind == Kind::kAllGather ? o.count * n : o.count;
      scratch[r].assign(elems * es, 0);
      void* out = scratch[r].data();
      switch (o.kind) {
        case Kind::kAllReduce:
        case Kind::kReduce:
          if (o.kind == Kind::kAllReduce || r == o.root) {
            xal::common::reduce(o.dtype, o.op, std::span<void* const>(&out, 1), sends, o.count,
                                static_cast<uint32_t>(n));
          }
          break;
        case Kind::kReduceScatter: {
          std::vector<const void*> slices(n);
          for (int q = 0; q < n; ++q) {
            slices[q] = static_cast<const char*>(sends[q]) + r * o.count * es;
          }
          xal::common::reduce(o.dtype, o.op, std::span<void* const>(&out, 1), slices, o.count,
                              static_cast<uint32_t>(n));
          break;
        }
        case Kind::kBroadcast: std::memcpy(out, sends[o.root], o.count * es); break;
        case Kind::kAllGather:
          for (int q = 0; q < n; ++q) {
            std::memcpy(scratch[r].data() + q * o.count * es, sends[q], o.count * es);
          }
          break;
        default: break;
      }
    }
    for (int r = 0; r < n; ++r) {
      const Op& o = *colls[r][i];
      if (o.kind == Kind::kReduce && r != o.root) continue;
      std::memcpy(o.recv, scratch[r].data(), scratch[r].size());
    }
  }
}

bool consistent(const Clique::Round& round, std::string* why) {
  const std::vector<const Op*> first = collectives(round.ops[0]);
  for (size_t r = 1; r < round.ops.size(); ++r) {
    const std::vector<const Op*> other = collectives(round.ops[r]);
    if (other.size() != first.size()) {
      *why = "rank " + std::to_string(r) + " launched " + std::to_string(other.size()) +
             " collectives, rank 0 " + std::to_string(first.size());
      return false;
    }
    for (size_t i = 0; i < first.size(); ++i) {
      const Op& x = *first[i];
      const Op& y = *other[i];
      if (x.kind != y.kind || x.count != y.count || x.dtype != y.dtype || x.op != y.op ||
          x.root != y.root) {
        *why = "rank " + std::to_string(r) + " disagrees with rank 0 on collective " +
               std::to_string(i);
        return false;
      }
    }
  }
  return true;
}

}  // namespace xalsim_nccl
