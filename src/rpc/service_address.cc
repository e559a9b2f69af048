#include "src/rpc/service_address.h"

#include <cctype>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace neuronprof {
namespace rpc {
namespace {

constexpr char kGrpcScheme[] = "grpc://";

absl::Status Bad(const std::string& text, const std::string& why) {
  return absl::InvalidArgumentError(
      absl::StrCat("'", text, "' is not a host:port address: ", why));
}

}  // namespace

std::string ServiceAddress::Target() const {
  // gRPC needs brackets to tell an IPv6 host from the port.
  if (host.find(':') != std::string::npos) return absl::StrCat("[", host, "]:", port);
  return absl::StrCat(host, ":", port);
}

absl::StatusOr<ServiceAddress> ParseServiceAddress(const std::string& text) {
  ServiceAddress parsed;
  parsed.address = text;
  if (absl::StartsWith(parsed.address, kGrpcScheme)) {
    parsed.address = parsed.address.substr(sizeof(kGrpcScheme) - 1);
  }
  const std::string& address = parsed.address;
  if (address.empty()) return Bad(text, "it is empty");
  for (char c : address) {
    if (std::isspace(static_cast<unsigned char>(c)) || c == '/') {
      return Bad(text, "it holds a space or '/'");
    }
  }
  std::string port_text;
  if (address[0] == '[') {
    const size_t close = address.find(']');
    if (close == std::string::npos || close + 1 >= address.size() ||
        address[close + 1] != ':') {
      return Bad(text, "an IPv6 address is written [addr]:port");
    }
    parsed.host = address.substr(1, close - 1);
    port_text = address.substr(close + 2);
  } else {
    const size_t colon = address.rfind(':');
    if (colon == std::string::npos) return Bad(text, "the port is missing");
    parsed.host = address.substr(0, colon);
    if (parsed.host.find(':') != std::string::npos) {
      return Bad(text, "an IPv6 address is written [addr]:port");
    }
    port_text = address.substr(colon + 1);
  }
  if (parsed.host.empty()) return Bad(text, "the host is missing");
  int port = 0;
  if (port_text.empty() || !absl::SimpleAtoi(port_text, &port) || port < 1 ||
      port > 65535 || port_text[0] == '+' || port_text[0] == '-') {
    return Bad(text, "the port must be a number 1..65535");
  }
  parsed.port = port;
  return parsed;
}

}  // namespace rpc
}  // namespace neuronprof
