#include "src/core/event_args.h"

#include <charconv>
#include <cstring>

namespace neuronprof {
namespace core {

std::string_view PlainName(const internal::EventRecord& record) {
  if (record.args_offset != 0) {
    return std::string_view(record.name, record.args_offset - 1);
  }
  // Literal names: stop at a NUL in case the array was longer than its text.
  return std::string_view(record.name,
                          strnlen(record.name, record.name_length));
}

void DecodeArgs(const internal::EventRecord& record, std::vector<DecodedArg>* out) {
  out->clear();
  if (record.args_offset == 0) return;
  std::string_view rest(record.name + record.args_offset - 1,
                        record.name_length - (record.args_offset - 1));
  while (!rest.empty() && rest.front() == kArgSeparator) {
    rest.remove_prefix(1);
    const size_t end = rest.find(kArgSeparator);
    std::string_view item = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end);
    const size_t split = item.find(kKindSeparator);
    // An item needs a key, the kind separator and a kind char.
    if (split == std::string_view::npos || split + 1 >= item.size()) continue;
    DecodedArg arg;
    arg.key = item.substr(0, split);
    arg.kind = item[split + 1];
    std::string_view value = item.substr(split + 2);
    const char* first = value.data();
    const char* last = value.data() + value.size();
    switch (arg.kind) {
      case 'i': std::from_chars(first, last, arg.int_value); break;
      case 'u': std::from_chars(first, last, arg.uint_value); break;
      case 'd': std::from_chars(first, last, arg.double_value); break;
      default: arg.kind = 's'; arg.string_value = value; break;
    }
    out->push_back(arg);
  }
}

}  // namespace core
}  // namespace neuronprof
