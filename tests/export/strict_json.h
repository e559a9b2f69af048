// Reading our JSON back in tests: strict grammar first (json_reader::IsStrictJson:
// no NaN/Infinity, valid UTF-8, no raw control characters), then protobuf's
// JSON parser for the structure. Either failing fails the test.
#ifndef NEURONPROF_TESTS_EXPORT_STRICT_JSON_H_
#define NEURONPROF_TESTS_EXPORT_STRICT_JSON_H_

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <catch2/catch.hpp>
#include <string>

#include "src/xplane/json_reader.h"

namespace neuronprof {
namespace testing {

inline google::protobuf::Struct ParseStrictJson(const std::string& json) {
  INFO(json.substr(0, 2000));
  REQUIRE(json_reader::IsStrictJson(json));
  google::protobuf::Struct root;
  const auto status = google::protobuf::util::JsonStringToMessage(json, &root);
  INFO(status.ToString());
  REQUIRE(status.ok());
  return root;
}

}  // namespace testing
}  // namespace neuronprof

#endif  // NEURONPROF_TESTS_EXPORT_STRICT_JSON_H_
