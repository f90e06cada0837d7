// The piece plans of libxal_mpi (src/pieces.hpp): exchanges over MPI's int
// counts are cut into pieces. Pure arithmetic, so counts past INT_MAX are
// checked without allocating them.
#include <gtest/gtest.h>

#include <cstdlib>

#include "pieces.hpp"

using namespace xal::mpi;

namespace {

constexpr size_t kInt = kMaxPieceCount;  // INT_MAX

}  // namespace

TEST(MpiPieces, CountsPastIntMaxAreCutIntoIntSizedPieces) {
  EXPECT_EQ(piece_count(0, kInt), 0u);
  EXPECT_EQ(piece_count(kInt, kInt), 1u);
  EXPECT_EQ(piece_count(kInt + 1, kInt), 2u);
  const size_t five_g = size_t{5} << 30;
  ASSERT_EQ(piece_count(five_g, kInt), 3u);
  size_t next = 0;
  for (size_t i = 0; i < 3; ++i) {
    const Piece p = piece_at(i, five_g, kInt);
    EXPECT_EQ(p.offset, next);
    EXPECT_GE(p.count, 1u);
    EXPECT_LE(p.count, kInt);
    next += p.count;
  }
  EXPECT_EQ(next, five_g);
  EXPECT_EQ(piece_at(2, five_g, kInt).count, five_g - 2 * kInt);
}

TEST(MpiPieces, BlocksOfEveryProcessAreCutAlike) {
  // Process 1's block of 2 500 elements at 1 000, limit 1 000.
  const size_t counts[] = {1000, 2500, 0, 1};
  const auto pieces = block_pieces(counts, {}, 1000);
  ASSERT_EQ(pieces.size(), 5u);
  EXPECT_EQ(pieces[0].process, 0u);
  EXPECT_EQ(pieces[1].process, 1u);
  EXPECT_EQ(pieces[1].offset, 1000u);
  EXPECT_EQ(pieces[1].block_offset, 0u);
  EXPECT_EQ(pieces[3].offset, 3000u);
  EXPECT_EQ(pieces[3].block_offset, 2000u);
  EXPECT_EQ(pieces[3].count, 500u);
  EXPECT_EQ(pieces[4].process, 3u);  // the empty block has no piece
  EXPECT_EQ(pieces[4].offset, 3500u);
  // With displacements (bytes of an allgatherv past 2 GiB).
  const size_t bytes[] = {kInt + 10, 3};
  const size_t displs[] = {0, size_t{3} << 30};
  const auto big = block_pieces(bytes, displs, kInt);
  ASSERT_EQ(big.size(), 3u);
  EXPECT_EQ(big[1].offset, kInt);
  EXPECT_EQ(big[1].count, 10u);
  EXPECT_EQ(big[2].offset, size_t{3} << 30);
}

TEST(MpiPieces, ALayoutFitsOneCallOnlyWithinTheLimit) {
  const size_t small[] = {10, 20, 30};
  EXPECT_TRUE(layout_fits(small, {}, 60));
  EXPECT_FALSE(layout_fits(small, {}, 59));  // the sum passes the limit
  const size_t displs[] = {0, 10, 40};
  EXPECT_TRUE(layout_fits(small, displs, 70));
  EXPECT_FALSE(layout_fits(small, displs, 69));  // the last block ends at 70
  const size_t huge[] = {kInt, kInt};
  EXPECT_FALSE(layout_fits(huge, {}, kInt));  // no overflow of the sum
  const size_t far[] = {0, size_t{1} << 40};
  const size_t one[] = {1, 1};
  EXPECT_FALSE(layout_fits(one, far, kInt));
}

TEST(MpiPieces, TheTestLimitComesFromTheEnvironment) {
  size_t limit = 0;
  std::string why;
  unsetenv("XAL_MPI_TEST_MAX_COUNT");
  EXPECT_TRUE(piece_limit_from_env(&limit, &why));
  EXPECT_EQ(limit, kInt);
  setenv("XAL_MPI_TEST_MAX_COUNT", "1000", 1);
  EXPECT_TRUE(piece_limit_from_env(&limit, &why));
  EXPECT_EQ(limit, 1000u);
  for (const char* bad : {"0", "-5", "12x", "", "4294967296"}) {
    setenv("XAL_MPI_TEST_MAX_COUNT", bad, 1);
    EXPECT_FALSE(piece_limit_from_env(&limit, &why)) << bad;
    EXPECT_NE(why.find("XAL_MPI_TEST_MAX_COUNT"), std::string::npos) << why;
  }
  unsetenv("XAL_MPI_TEST_MAX_COUNT");
}
