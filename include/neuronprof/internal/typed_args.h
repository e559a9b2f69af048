// Typed marker arguments (what neuronprof::Arg makes) and their writer into
// the thread's arena. Not public API: include <neuronprof/trace.h>.
//
// The type of each argument is fixed when the call is compiled, so a marker
// copies its values raw (8 bytes of a number, the bytes of a text) with no
// formatting and no branch on the type; the capture decodes them when it
// builds the XSpace (src/core/event_args.h holds the format and its reader).
// Included in NEURONPROF_DISABLE builds too: Arg() must still compile.
#ifndef NEURONPROF_INTERNAL_TYPED_ARGS_H_
#define NEURONPROF_INTERNAL_TYPED_ARGS_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

namespace neuronprof {
namespace internal {

// A number: kind 'i' (int64), 'u' (uint64) or 'd' (double), and its bits.
struct NumberArg {
  std::string_view key;
  char kind;
  uint64_t bits;
};

// A text, copied when the marker is recorded.
struct TextArg {
  std::string_view key;
  std::string_view text;
};

template <typename T>
struct IsTypedArg : std::integral_constant<bool, std::is_same<T, NumberArg>::value ||
                                                     std::is_same<T, TextArg>::value> {};

// Enables the integer overloads (Arg, TraceArg, TraceCounter): bool is not
// one of them.
template <typename T>
using EnableIfInteger =
    typename std::enable_if<std::is_integral<T>::value && !std::is_same<T, bool>::value, int>::type;

// Enables the variadic marker forms: one or more typed arguments.
template <typename... A>
using EnableIfTypedArgs =
    typename std::enable_if<(sizeof...(A) > 0) && (IsTypedArg<A>::value && ...), int>::type;

// Names, keys and most texts are a few bytes long: two overlapping fixed
// copies instead of a call into the library's memcpy when the size is only
// known at run time (a constant size folds to one path). Never reads
// `text` when `size` is 0 (an empty string_view may hold a null pointer).
inline void CopyBytes(char* out, const char* text, size_t size) {
  if (size >= 8 && size <= 16) {
    std::memcpy(out, text, 8);
    std::memcpy(out + size - 8, text + size - 8, 8);
  } else if (size >= 4 && size < 8) {
    std::memcpy(out, text, 4);
    std::memcpy(out + size - 4, text + size - 4, 4);
  } else if (size < 4) {
    for (size_t i = 0; i < size; ++i) out[i] = text[i];
  } else {
    std::memcpy(out, text, size);
  }
}

// The format's primitives: a text is its uint32 length and its bytes, a
// number its 8 bytes (src/core/event_args.h).
inline char* PutEncodedText(char* out, std::string_view text) {
  const auto length = static_cast<uint32_t>(text.size());
  std::memcpy(out, &length, sizeof(length));
  CopyBytes(out + sizeof(length), text.data(), text.size());
  return out + sizeof(length) + text.size();
}
inline char* PutEncodedNumber(char* out, uint64_t bits) {
  std::memcpy(out, &bits, sizeof(bits));
  return out + sizeof(bits);
}

constexpr size_t EncodedSize(const NumberArg& arg) {
  return 1 + sizeof(uint32_t) + arg.key.size() + sizeof(uint64_t);
}
constexpr size_t EncodedSize(const TextArg& arg) {
  return 1 + sizeof(uint32_t) + arg.key.size() + sizeof(uint32_t) + arg.text.size();
}

inline char* PutTypedArg(char* out, const NumberArg& arg) {
  *out++ = arg.kind;
  return PutEncodedNumber(PutEncodedText(out, arg.key), arg.bits);
}
inline char* PutTypedArg(char* out, const TextArg& arg) {
  *out++ = 's';
  return PutEncodedText(PutEncodedText(out, arg.key), arg.text);
}

}  // namespace internal
}  // namespace neuronprof

#endif  // NEURONPROF_INTERNAL_TYPED_ARGS_H_
