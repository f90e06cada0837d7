// xal-info: lists the backends xal considered (loaded or not, and why) and
// every device with its properties. `--json` gives the same for scripts.
//
// Exit status: 0 on success; 1 when xal_init (or reading the inventory)
// fails; 2 when `--backend NAME` was given and that backend did not load;
// 105-ish CLI11 codes for bad options.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <new>
#include <string>

#include "inventory.hpp"
#include "render.hpp"
#include "xal/xal.h"

namespace {

struct Options {
  bool json = false;
  std::string backend;
  std::string backend_path;
  std::string selector;
};

// Shuts xal down when it goes out of scope.
struct XalSession {
  XalSession() = default;
  XalSession(const XalSession&) = delete;
  XalSession& operator=(const XalSession&) = delete;
  ~XalSession() { xal_shutdown(); }
};

int run(const Options& opt) {
  xal_init_options_t init{};
  init.struct_size = sizeof(init);
  init.backends = opt.backend.empty() ? nullptr : opt.backend.c_str();
  init.backend_path =
      opt.backend_path.empty() ? nullptr : opt.backend_path.c_str();
  init.device_selector = opt.selector.empty() ? nullptr : opt.selector.c_str();
  init.validation = -1;
  const xal_status_t status = xal_init(&init);
  if (status != XAL_SUCCESS) {
    std::cerr << "xal-info: xal_init failed: "
              << xal::info::last_error_text(status) << '\n';
    return 1;
  }
  XalSession session;

  const xal::info::Inventory inv = xal::info::collect_inventory();
  if (opt.json) {
    std::cout << xal::info::render_json(inv).dump(
                     2, ' ', false, nlohmann::json::error_handler_t::replace)
              << '\n';
  } else {
    xal::info::render_text(inv, std::cout);
  }
  std::cout.flush();

  if (!opt.backend.empty()) {
    for (const auto& b : inv.backends) {
      if (b.info.state != XAL_BACKEND_STATE_LOADED) {
        std::cerr << "xal-info: backend '" << b.info.name << "' is "
                  << xal::info::backend_state_name(b.info.state) << ": "
                  << (b.info.reason[0] != '\0' ? b.info.reason : "no reason")
                  << '\n';
        return 2;
      }
    }
    if (inv.backends.empty()) {
      std::cerr << "xal-info: no backend matched '" << opt.backend << "'\n";
      return 2;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    CLI::App app{"xal-info: lists xal's backends and devices"};
    Options opt;
    app.add_flag("--json", opt.json, "Print JSON for scripts");
    app.add_option("--backend", opt.backend,
                   "Load only this backend (a name or a path, as "
                   "XAL_BACKENDS; e.g. mock, fault:mock)");
    app.add_option("--backend-path", opt.backend_path,
                   "Extra plugin folders, ':'-separated (as XAL_BACKEND_PATH)");
    app.add_option("--selector", opt.selector,
                   "Device selector, e.g. 'mock:0,1;cuda:*' (as "
                   "XAL_DEVICE_SELECTOR)");
    app.set_version_flag("--version", std::string("xal-info, ABI ") +
                                          std::to_string(XAL_ABI_VERSION_MAJOR) +
                                          "." +
                                          std::to_string(XAL_ABI_VERSION_MINOR));
    CLI11_PARSE(app, argc, argv);
    return run(opt);
  } catch (const std::bad_alloc&) {
    std::cerr << "xal-info: out of host memory\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "xal-info: " << e.what() << '\n';
    return 1;
  }
}
