// One message of a rank's point-to-point batch (CommImpl::p2p): plain data.
#pragma once

#include <cstddef>
#include <cstdint>

#include "xal/xal.h"

namespace xal::core {

struct P2pOp {
  enum class Kind : uint8_t {
    kSend,        // `count` elements at `ptr` to `peer`
    kRecv,        // `count` elements from `peer` into `ptr`
    kRecvReduce,  // `count` elements from `peer`, reduced with `op` into
                  // `ptr` together with every other kRecvReduce of the
                  // batch into the same `ptr`, in op order (reduce_scatterv)
  };
  Kind kind = Kind::kSend;
  uint32_t peer = 0;
  xal_devptr_t ptr = 0;
  size_t count = 0;
  xal_dtype_t dtype = XAL_DTYPE_U8;
  xal_op_t op = XAL_OP_SUM;
};

}  // namespace xal::core
