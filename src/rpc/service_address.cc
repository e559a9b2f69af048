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
  return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not a host:port address: ", why));
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
    if (close == std::string::npos || close + 1 >= address.size() || address[close + 1] != ':') {
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
  if (port_text.empty() || !absl::SimpleAtoi(port_text, &port) || port < 1 || port > 65535 ||
      port_text[0] == '+' || port_text[0] == '-') {
    return Bad(text, "the port must be a number 1..65535");
  }
  parsed.port = port;
  return parsed;
}

absl::StatusOr<std::vector<ServiceAddress>> ParseServiceAddresses(const std::string& text) {
  // A range is "<host>:<low>-<high>"; the host may hold '-' but not after
  // its last ':' (IPv6 hosts are bracketed).
  const size_t colon = text.rfind(':');
  const size_t dash = text.find('-', colon == std::string::npos ? 0 : colon);
  if (colon == std::string::npos || dash == std::string::npos ||
      text.find(']', colon) != std::string::npos) {
    auto single = ParseServiceAddress(text);
    if (!single.ok()) return single.status();
    return std::vector<ServiceAddress>{std::move(*single)};
  }
  auto bad_range = [&](const std::string& why) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is not a host:port or host:low-high port range: ", why));
  };
  const std::string high_text = text.substr(dash + 1);
  int high = 0;
  if (high_text.empty() || high_text[0] == '+' || high_text[0] == '-' ||
      !absl::SimpleAtoi(high_text, &high) || high < 1 || high > 65535) {
    return bad_range("the ports must be numbers 1..65535");
  }
  auto first = ParseServiceAddress(text.substr(0, dash));
  if (!first.ok()) return bad_range(std::string(first.status().message()));
  const int low = first->port;
  if (high < low) {
    return bad_range(absl::StrCat("the range is reversed (", low, " > ", high, ")"));
  }
  if (high - low + 1 > kMaxPortRange) {
    return bad_range(absl::StrCat("it names ", high - low + 1, " ports, at most ", kMaxPortRange,
                                  " are allowed"));
  }
  std::vector<ServiceAddress> addresses;
  for (int port = low; port <= high; ++port) {
    ServiceAddress address = *first;
    address.port = port;
    address.address = address.Target();
    addresses.push_back(std::move(address));
  }
  return addresses;
}

}  // namespace rpc
}  // namespace neuronprof
