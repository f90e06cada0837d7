// Point-to-point pairing and the streams' failures (xalsupport/message_pairs.h).
#include <gtest/gtest.h>

#include <string>

#include "xalsupport/message_pairs.h"

namespace xal::support {
namespace {

const int kStreamA = 0;
const int kStreamB = 1;

TEST(MessagePairs, PairsTheKthSendWithTheKthReceiveInEitherOrder) {
  MessagePairs pairs;
  // Rank 0 sends twice to rank 1, then rank 1 receives twice: both agree.
  EXPECT_FALSE(pairs.post(true, 0, 1, {10, XAL_DTYPE_F32, &kStreamA}));
  EXPECT_FALSE(pairs.post(true, 0, 1, {20, XAL_DTYPE_F32, &kStreamA}));
  EXPECT_FALSE(pairs.post(false, 1, 0, {10, XAL_DTYPE_F32, &kStreamB}));
  EXPECT_FALSE(pairs.post(false, 1, 0, {20, XAL_DTYPE_F32, &kStreamB}));
  // The receive first, and the other direction kept apart.
  EXPECT_FALSE(pairs.post(false, 0, 1, {5, XAL_DTYPE_U8, &kStreamA}));
  EXPECT_FALSE(pairs.post(true, 0, 1, {7, XAL_DTYPE_U8, &kStreamA}));
  EXPECT_FALSE(pairs.post(true, 1, 0, {5, XAL_DTYPE_U8, &kStreamB}));
  EXPECT_FALSE(pairs.post(false, 1, 0, {7, XAL_DTYPE_U8, &kStreamB}));
}

TEST(MessagePairs, ADisagreementNamesBothStreamsAndBothHalves) {
  MessagePairs pairs;
  EXPECT_FALSE(pairs.post(false, 1, 0, {11, XAL_DTYPE_U8, &kStreamB}));
  const auto mismatch = pairs.post(true, 0, 1, {10, XAL_DTYPE_U8, &kStreamA});
  ASSERT_TRUE(mismatch);
  EXPECT_EQ(mismatch->send_stream, &kStreamA);
  EXPECT_EQ(mismatch->recv_stream, &kStreamB);
  EXPECT_EQ(mismatch->why,
            "the send of rank 0 to rank 1 has 10 x u8, its matching receive 11 x u8");
  // A dtype that differs with the same count, and the next pair agrees.
  EXPECT_FALSE(pairs.post(true, 0, 1, {4, XAL_DTYPE_F32, &kStreamA}));
  EXPECT_TRUE(pairs.post(false, 1, 0, {4, XAL_DTYPE_I32, &kStreamB}));
  EXPECT_FALSE(pairs.post(true, 0, 1, {4, XAL_DTYPE_F32, &kStreamA}));
  EXPECT_FALSE(pairs.post(false, 1, 0, {4, XAL_DTYPE_F32, &kStreamB}));
}

TEST(StreamFailures, TheFirstFailureIsTakenOnceAndForgotten) {
  StreamFailures failures;
  std::string message;
  EXPECT_EQ(failures.take(&kStreamA, &message), XAL_SUCCESS);
  failures.note(&kStreamA, XAL_ERROR_COLLECTIVE_MISMATCH, "first");
  failures.note(&kStreamA, XAL_ERROR_TIMEOUT, "second");
  failures.note(&kStreamB, XAL_ERROR_TIMEOUT, "other stream");
  EXPECT_EQ(failures.take(&kStreamA, &message), XAL_ERROR_COLLECTIVE_MISMATCH);
  EXPECT_EQ(message, "first");
  EXPECT_EQ(failures.take(&kStreamA, &message), XAL_SUCCESS);
  failures.forget(&kStreamB);
  EXPECT_EQ(failures.take(&kStreamB, &message), XAL_SUCCESS);
}

}  // namespace
}  // namespace xal::support
