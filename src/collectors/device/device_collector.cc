// The public device plug-in API (neuronprof/device.h): a registry of
// plug-in factories and one adapter Collector per plug-in and capture.
#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "neuronprof/device.h"
#include "src/collectors/collector.h"
#include "src/collectors/device/device_activity.h"
#include "src/collectors/device/device_planes.h"
#include "src/core/clock.h"
#include "src/xplane/absl_view.h"
#include "src/xplane/plain_name.h"

namespace neuronprof {
namespace collectors {
namespace {

std::mutex& RegistryMutex() {
  static auto* mutex = new std::mutex();
  return *mutex;
}

// name -> factory. Looked up per capture, so unregistering takes effect at
// the next capture.
std::map<std::string, DeviceCollectorFactory, std::less<>>& Registry() {
  static auto* registry = new std::map<std::string, DeviceCollectorFactory, std::less<>>();
  return *registry;
}

// Runs a plug-in callback; an exception escaping it becomes an error
// instead of ending the capture (or the program).
template <typename Call>
absl::Status Guarded(Call&& call) {
  try {
    return call();
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("threw an exception: ", e.what()));
  } catch (...) {
    return absl::InternalError("threw an exception");
  }
}

class DevicePluginCollector : public Collector {
 public:
  DevicePluginCollector(std::string name, std::unique_ptr<DeviceCollector> plugin)
      : name_(std::move(name)), plugin_(std::move(plugin)) {}

  std::string name() const override { return absl::StrCat("device plug-in '", name_, "'"); }

  // A plug-in that cannot start is left out of this capture, and says why
  // in its errors; the capture itself goes on.
  absl::Status Start() override {
    device_type_ = std::string(plugin_->device_type());
    if (auto s = xplane::CheckPlainName(device_type_, "device_type()"); !s.ok()) {
      start_error_ = s;
      return absl::OkStatus();
    }
    start_error_ = Guarded([&] { return plugin_->Start(); });
    return absl::OkStatus();
  }

  absl::Status Stop() override {
    if (!start_error_.ok()) return absl::OkStatus();
    return Guarded([&] { return plugin_->Stop(); });
  }

  absl::Status Collect(tensorflow::profiler::XSpace* space, CollectStats* stats) override {
    if (!start_error_.ok()) {
      return absl::Status(start_error_.code(),
                          absl::StrCat("not started: ", start_error_.message()));
    }
    DeviceActivityBuffer buffer;
    absl::Status flushed = Guarded([&] { return plugin_->Flush(buffer); });
    // What arrived before a failure is still shown; the error says the
    // rest is missing.
    AddDeviceActivity(name_, device_type_, buffer.activity(), space, stats);
    if (!flushed.ok()) {
      return absl::Status(
          flushed.code(),
          absl::StrCat("Flush failed, its activity may be incomplete: ", flushed.message()));
    }
    return absl::OkStatus();
  }

 private:
  std::string name_;
  std::unique_ptr<DeviceCollector> plugin_;
  std::string device_type_;
  absl::Status start_error_;
};

// One Collector per registered plug-in and capture, created only when the
// capture asks for device tracing and the plug-in is still registered.
std::unique_ptr<Collector> CreatePluginCollector(const std::string& name,
                                                 const CollectorOptions& options) {
  if (options.device_tracer_level <= 0) return nullptr;
  DeviceCollectorFactory factory;
  {
    std::lock_guard<std::mutex> lock(RegistryMutex());
    auto it = Registry().find(name);
    if (it == Registry().end()) return nullptr;
    factory = it->second;
  }
  // Outside the lock: a factory may take its time or register others.
  std::unique_ptr<DeviceCollector> plugin = factory();
  if (plugin == nullptr) return nullptr;  // Its device is absent.
  return std::make_unique<DevicePluginCollector>(name, std::move(plugin));
}

}  // namespace
}  // namespace collectors

int64_t HostEpochNowNs() { return core::EpochNowNs(); }

absl::Status RegisterDeviceCollector(std::string_view name, DeviceCollectorFactory factory) {
  if (auto s = xplane::CheckPlainName(name, "device collector name"); !s.ok()) return s;
  if (!factory) {
    return absl::InvalidArgumentError(
        absl::StrCat("device collector \"", xplane::AbslView(name), "\" has an empty factory"));
  }
  std::unique_lock<std::mutex> lock(collectors::RegistryMutex());
  auto& registry = collectors::Registry();
  if (registry.find(name) != registry.end()) {
    return absl::AlreadyExistsError(absl::StrCat(
        "a device collector named \"", xplane::AbslView(name), "\" is already registered"));
  }
  registry.emplace(std::string(name), std::move(factory));
  // The session's factory list only grows: a name gets one entry for the
  // life of the process, which finds nothing while it is unregistered.
  static auto* with_session_factory = new std::set<std::string, std::less<>>();
  if (!with_session_factory->insert(std::string(name)).second) {
    return absl::OkStatus();
  }
  lock.unlock();  // CreateCollectors locks its list, then ours.
  collectors::RegisterCollectorFactory(
      [plugin_name = std::string(name)](const collectors::CollectorOptions& options) {
        return collectors::CreatePluginCollector(plugin_name, options);
      });
  return absl::OkStatus();
}

absl::Status UnregisterDeviceCollector(std::string_view name) {
  std::lock_guard<std::mutex> lock(collectors::RegistryMutex());
  auto it = collectors::Registry().find(name);
  if (it == collectors::Registry().end()) {
    return absl::NotFoundError(
        absl::StrCat("no device collector named \"", xplane::AbslView(name), "\" is registered"));
  }
  collectors::Registry().erase(it);
  return absl::OkStatus();
}

}  // namespace neuronprof
