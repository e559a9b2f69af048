#include "src/rpc/parse_error_interceptor.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace neuronprof {
namespace rpc {
namespace {

class ParseErrorInterceptor : public grpc::experimental::Interceptor {
 public:
  explicit ParseErrorInterceptor(std::string method) : method_(std::move(method)) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_STATUS)) {
      const grpc::Status status = methods->GetSendStatus();
      // Our handlers never answer INTERNAL without a message; gRPC's
      // request parsing does.
      if (status.error_code() == grpc::StatusCode::INTERNAL && status.error_message().empty()) {
        methods->ModifySendStatus(
            grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                         absl::StrCat("cannot parse the request of ", method_,
                                      ": a string field (repository_root, session_id, host_name, "
                                      "tools, opts.override_hostname, ...) holds bytes that are "
                                      "not valid UTF-8, or the message is truncated or not of "
                                      "the method's request type")));
      }
    }
    methods->Proceed();
  }

 private:
  const std::string method_;
};

class ParseErrorInterceptorFactory : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new ParseErrorInterceptor(info->method() != nullptr ? info->method() : "");
  }
};

}  // namespace

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
CreateParseErrorInterceptorFactory() {
  return std::make_unique<ParseErrorInterceptorFactory>();
}

}  // namespace rpc
}  // namespace neuronprof
