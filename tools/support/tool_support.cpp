#include "tool_support.hpp"

#include <array>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <stdexcept>

namespace xal::tools {

void add_backend_options(CLI::App& app, BackendOptions& opt) {
  app.add_option("--backend", opt.backend,
                 "Load only this backend (a name or a path, as "
                 "XAL_BACKENDS; e.g. mock, fault:mock)");
  app.add_option("--backend-path", opt.backend_path,
                 "Extra plugin folders, ':'-separated (as XAL_BACKEND_PATH)");
}

void add_version_flag(CLI::App& app, const std::string& tool) {
  app.set_version_flag("--version",
                       tool + ", ABI " + std::to_string(XAL_ABI_VERSION_MAJOR) +
                           "." + std::to_string(XAL_ABI_VERSION_MINOR));
}

void read_memory(xal_device_t device, MemoryReading& out) {
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
  const xal_status_t mem = xal_mem_get_info(device, &free_bytes, &total_bytes);
  if (mem == XAL_SUCCESS) {
    out.mem_free = free_bytes;
    out.mem_total = total_bytes;
  } else {
    out.mem_error = last_error_text(mem);
  }
  if (xal_device_get_compute_share(device, &out.compute_percent) != XAL_SUCCESS) {
    out.compute_percent = 100;
  }
}

Session::Session(const std::string& tool, const BackendOptions& opt,
                 std::ostream& err) {
  xal_init_options_t init{};
  init.struct_size = sizeof(init);
  init.backends = opt.backend.empty() ? nullptr : opt.backend.c_str();
  init.backend_path =
      opt.backend_path.empty() ? nullptr : opt.backend_path.c_str();
  init.device_selector = opt.selector.empty() ? nullptr : opt.selector.c_str();
  init.validation = -1;
  const xal_status_t status = xal_init(&init);
  ok_ = status == XAL_SUCCESS;
  if (!ok_) {
    err << tool << ": xal_init failed: " << last_error_text(status) << '\n';
  }
}

Session::~Session() {
  if (ok_) xal_shutdown();
}

int check_backend_option(const std::string& tool, const BackendOptions& opt,
                         std::ostream& err) {
  if (opt.backend.empty()) return 0;
  uint32_t count = 0;
  check(xal_backend_count(&count), "xal_backend_count");
  if (count == 0) {
    err << tool << ": no backend matched '" << opt.backend << "'\n";
    return kExitBackendNotLoaded;
  }
  for (uint32_t i = 0; i < count; ++i) {
    xal_backend_info_t info{};
    info.struct_size = sizeof(info);
    check(xal_backend_get_info(i, &info),
          "xal_backend_get_info(" + std::to_string(i) + ")");
    if (info.state != XAL_BACKEND_STATE_LOADED) {
      err << tool << ": backend '" << info.name << "' is "
          << backend_state_name(info.state) << ": "
          << (info.reason[0] != '\0' ? info.reason : "no reason") << '\n';
      return kExitBackendNotLoaded;
    }
  }
  return 0;
}

std::string last_error_text(xal_status_t status) {
  xal_error_info_t error{};
  error.struct_size = sizeof(error);
  std::string text = xal_status_name(status);
  if (xal_last_error(&error) == XAL_SUCCESS && error.message[0] != '\0') {
    text += ": ";
    text += error.message;
    if (error.vendor_code != 0) {
      text += " (vendor code " + std::to_string(error.vendor_code);
      if (error.vendor_name[0] != '\0') {
        text += std::string(" ") + error.vendor_name;
      }
      text += ")";
    }
  }
  return text;
}

void check(xal_status_t status, const std::string& what) {
  if (status != XAL_SUCCESS) {
    throw std::runtime_error(what + " failed: " + last_error_text(status));
  }
}

const char* backend_state_name(uint32_t state) {
  switch (state) {
    case XAL_BACKEND_STATE_LOADED:
      return "LOADED";
    case XAL_BACKEND_STATE_UNAVAILABLE:
      return "UNAVAILABLE";
    case XAL_BACKEND_STATE_FAILED:
      return "FAILED";
    default:
      return "UNKNOWN";
  }
}

std::string backend_state_label(uint32_t state) {
  std::string label = backend_state_name(state);
  for (char& c : label) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return label;
}

std::string format_uuid(const uint8_t (&uuid)[16]) {
  std::string text;
  text.reserve(36);
  std::array<char, 3> hex{};
  for (size_t i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
    std::snprintf(hex.data(), hex.size(), "%02x", uuid[i]);
    text += hex.data();
  }
  return text;
}

std::string format_abi_version(uint32_t version) {
  return std::to_string(XAL_ABI_MAJOR(version)) + "." +
         std::to_string(XAL_ABI_MINOR(version));
}

bool flush_stdout(const std::string& tool, std::ostream& err) {
  errno = 0;
  std::cout.flush();
  const int error = errno;
  if (std::cout && std::fflush(stdout) == 0 && std::ferror(stdout) == 0) {
    return true;
  }
  err << tool << ": cannot write to stdout"
      << (error != 0 ? std::string(": ") + std::strerror(error) : std::string())
      << '\n';
  return false;
}

}  // namespace xal::tools
