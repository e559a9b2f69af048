// Plain names: the one rule for every name a user or a plug-in gives that
// becomes a file, folder or plane name (run and host names, session ids,
// device collector names and device types): [A-Za-z0-9._-]+, not "." or
// "..", at most kMaxFileNameBytes. One check, one error message.
#ifndef NEURONPROF_SRC_XPLANE_PLAIN_NAME_H_
#define NEURONPROF_SRC_XPLANE_PLAIN_NAME_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace neuronprof {
namespace xplane {

// The longest file or folder name Linux file systems take (NAME_MAX).
inline constexpr size_t kMaxFileNameBytes = 255;

// Input echoed in an error message: quoted, cut to 200 bytes with
// "...(N bytes)" so that a hostile 100 KB field keeps a message short
// (gRPC drops a status whose message overflows its metadata limit).
std::string QuoteForMessage(std::string_view input);

bool IsPlainChar(char c);
bool IsPlainName(std::string_view name);

// InvalidArgument unless `name` is a plain name and `name` + `suffix` (the
// file written for it, e.g. "<host>.xplane.pb") fits kMaxFileNameBytes:
// "<what> '<name>' is not a plain name: use letters, digits, '.', '-' and
// '_' only (...)", or, when only the length is wrong, "<what> '<name>' is
// too long: ... (NAME_MAX)". `what` is the setting the user can change.
absl::Status CheckPlainName(std::string_view name, std::string_view what,
                            std::string_view suffix = {});

}  // namespace xplane
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_XPLANE_PLAIN_NAME_H_
