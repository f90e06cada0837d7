// MPI counts are `int`: an exchange of more elements than that runs as
// several MPI calls of at most `limit` elements each. Pure functions, no
// MPI; thread-safe.
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace xal::mpi {

// The most elements one MPI call carries.
constexpr size_t kMaxPieceCount = static_cast<size_t>(INT_MAX);

// For tests only: XAL_MPI_TEST_MAX_COUNT=<n> (1 <= n <= INT_MAX) lowers the
// limit so that the splitting runs on small buffers. Returns false (with
// *why) when the variable is set but malformed; *limit is kMaxPieceCount
// when it is unset.
bool piece_limit_from_env(size_t* limit, std::string* why);

// [0, count) cut into pieces of at most `limit` (>= 1) elements: how many
// (0 for count 0), and piece i's first element and length.
size_t piece_count(size_t count, size_t limit);
struct Piece {
  size_t offset = 0;
  size_t count = 0;
};
Piece piece_at(size_t i, size_t count, size_t limit);

// True when every [displs[p], displs[p] + counts[p]) ends at or below
// `limit` and the counts sum to at most `limit`, so that one MPI call with
// int counts and displacements describes the whole layout. displs may be
// empty (then the counts are packed one after another).
bool layout_fits(std::span<const size_t> counts, std::span<const size_t> displs, size_t limit);

// A buffer of one block per process, cut into pieces: process p's block is
// counts[p] elements at displs[p] (displs empty: packed in process order).
struct BlockPiece {
  uint32_t process = 0;
  size_t offset = 0;        // in the whole buffer
  size_t block_offset = 0;  // in the process's block
  size_t count = 0;
};
std::vector<BlockPiece> block_pieces(std::span<const size_t> counts,
                                     std::span<const size_t> displs, size_t limit);

}  // namespace xal::mpi
