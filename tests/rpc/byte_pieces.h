// Received bytes as gRPC hands them over: in slices of any size.
#ifndef NEURONPROF_TESTS_RPC_BYTE_PIECES_H_
#define NEURONPROF_TESTS_RPC_BYTE_PIECES_H_

#include <string>
#include <string_view>

#include "src/rpc/response_scan.h"

namespace neuronprof {
namespace testing {

// `bytes` cut into pieces of `size` bytes (the last one shorter).
inline rpc::BytePieces Cut(const std::string& bytes, size_t size) {
  rpc::BytePieces pieces;
  for (size_t at = 0; at < bytes.size(); at += size) {
    pieces.push_back(std::string_view(bytes).substr(at, size));
  }
  return pieces;
}

}  // namespace testing
}  // namespace neuronprof

#endif  // NEURONPROF_TESTS_RPC_BYTE_PIECES_H_
