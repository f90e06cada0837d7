#include "pieces.hpp"

#include <algorithm>
#include <cstdlib>

namespace xal::mpi {

bool piece_limit_from_env(size_t* limit, std::string* why) {
  *limit = kMaxPieceCount;
  const char* v = std::getenv("XAL_MPI_TEST_MAX_COUNT");
  if (!v) return true;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  if (end == v || *end != '\0' || *v == '-' || n == 0 || n > kMaxPieceCount) {
    *why = std::string("XAL_MPI_TEST_MAX_COUNT='") + v + "' is not a count in [1, " +
           std::to_string(kMaxPieceCount) + "]";
    return false;
  }
  *limit = static_cast<size_t>(n);
  return true;
}

size_t piece_count(size_t count, size_t limit) {
  return count / limit + (count % limit ? 1 : 0);
}

Piece piece_at(size_t i, size_t count, size_t limit) {
  Piece p;
  p.offset = i * limit;
  p.count = std::min(limit, count - p.offset);
  return p;
}

bool layout_fits(std::span<const size_t> counts, std::span<const size_t> displs, size_t limit) {
  size_t sum = 0;
  for (size_t p = 0; p < counts.size(); ++p) {
    if (counts[p] > limit - sum) return false;
    sum += counts[p];
    if (!displs.empty() && (displs[p] > limit || counts[p] > limit - displs[p])) return false;
  }
  return true;
}

std::vector<BlockPiece> block_pieces(std::span<const size_t> counts,
                                     std::span<const size_t> displs, size_t limit) {
  std::vector<BlockPiece> out;
  size_t packed = 0;
  for (size_t p = 0; p < counts.size(); ++p) {
    const size_t base = displs.empty() ? packed : displs[p];
    for (size_t i = 0, n = piece_count(counts[p], limit); i < n; ++i) {
      const Piece piece = piece_at(i, counts[p], limit);
      out.push_back({static_cast<uint32_t>(p), base + piece.offset, piece.offset, piece.count});
    }
    packed += counts[p];
  }
  return out;
}

}  // namespace xal::mpi
