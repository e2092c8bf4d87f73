// Where the device process comes from: the x86 hexllm-htp next to the executable (or named by
// --htp-device / HEXLLM_HTP_DEVICE), or, for --htp-target hexagon, the static Hexagon build of
// cmake/hexagon.cmake run under qemu-hexagon. A missing piece is an error naming what to
// install or build.
#include <limits.h>
#include <unistd.h>

#include <cstdlib>

#include "base/error.h"
#include "htp-host/transport.h"

namespace hexllm::htp_host {

namespace {

bool usable(const std::string& p) { return !p.empty() && ::access(p.c_str(), X_OK) == 0; }

// The running executable's folder, with a trailing slash; empty when unknown.
std::string self_dir() {
  char self[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return {};
  self[n] = '\0';
  std::string dir(self);
  dir.resize(dir.rfind('/') + 1);
  return dir;
}

// `name` in $PATH, or empty.
std::string in_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string all = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t at = 0;
  while (at <= all.size()) {
    size_t end = all.find(':', at);
    if (end == std::string::npos) end = all.size();
    const std::string dir = end > at ? all.substr(at, end - at) : ".";
    if (usable(dir + "/" + name)) return dir + "/" + name;
    at = end + 1;
  }
  return {};
}

}  // namespace

std::string find_device_binary(const std::string& hint) {
  if (!hint.empty()) {
    if (usable(hint)) return hint;
    fail("HTP device binary '%s' is not an executable file", hint.c_str());
  }
  std::string tried;
  if (const char* env = std::getenv("HEXLLM_HTP_DEVICE"); env != nullptr && *env != '\0') {
    if (usable(env)) return env;
    fail("HEXLLM_HTP_DEVICE: '%s' is not an executable file", env);
  }
  if (const std::string dir = self_dir(); !dir.empty()) {
    const std::string next_to = dir + "hexllm-htp";
    if (usable(next_to)) return next_to;
    tried = next_to;
  }
#ifdef HEXLLM_HTP_DEVICE_BUILD_PATH
  if (usable(HEXLLM_HTP_DEVICE_BUILD_PATH)) return HEXLLM_HTP_DEVICE_BUILD_PATH;
  tried += std::string(", ") + HEXLLM_HTP_DEVICE_BUILD_PATH;
#endif
  fail("HTP device binary hexllm-htp not found (tried %s; give --htp-device or HEXLLM_HTP_DEVICE)", tried.c_str());
}


std::vector<std::string> device_command(const std::string& target, const std::string& hint) {
  if (target == "host" || target.empty()) return {find_device_binary(hint)};
  if (target != "hexagon") fail("--htp-target: '%s' is not a device target (host, hexagon)", target.c_str());

  std::string qemu;
  if (const char* env = std::getenv("HEXLLM_QEMU_HEXAGON"); env != nullptr && *env != '\0') {
    if (!usable(env)) fail("HEXLLM_QEMU_HEXAGON: '%s' is not an executable file", env);
    qemu = env;
  } else {
    qemu = in_path("qemu-hexagon");
    if (qemu.empty())
      fail("--htp-target hexagon: qemu-hexagon not found in PATH (install qemu-user: scripts/setup.sh, or "
           "apt-get install qemu-user; or give HEXLLM_QEMU_HEXAGON)");
  }
  if (!hint.empty()) {
    if (!usable(hint)) fail("HTP device binary '%s' is not an executable file", hint.c_str());
    return {qemu, hint};
  }
  std::string tried;
  if (const std::string dir = self_dir(); !dir.empty()) {
    if (usable(dir + "hexagon/hexllm-htp")) return {qemu, dir + "hexagon/hexllm-htp"};
    tried = dir + "hexagon/hexllm-htp";
  }
#ifdef HEXLLM_HTP_HEXAGON_DEVICE_BUILD_PATH
  if (usable(HEXLLM_HTP_HEXAGON_DEVICE_BUILD_PATH)) return {qemu, HEXLLM_HTP_HEXAGON_DEVICE_BUILD_PATH};
  tried += std::string(tried.empty() ? "" : ", ") + HEXLLM_HTP_HEXAGON_DEVICE_BUILD_PATH;
#endif
#if defined(HEXLLM_HTP_HEXAGON_BUILD) && !HEXLLM_HTP_HEXAGON_BUILD
  fail("--htp-target hexagon: this build has no Hexagon device (tried %s): install clang-19 and lld-19 "
       "(scripts/setup.sh), re-run cmake and build, or give --htp-device", tried.c_str());
#else
  fail("--htp-target hexagon: the Hexagon hexllm-htp is not built (tried %s): run the build "
       "(cmake --build build builds it into build/hexagon/), or give --htp-device", tried.c_str());
#endif
}

}  // namespace hexllm::htp_host
