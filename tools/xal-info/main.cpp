// xal-info: lists the backends xal considered (loaded or not, and why) and
// every device with its properties. `--json` gives the same for scripts.
//
// Exit status: 0 on success; 1 when xal_init (or reading the inventory)
// fails, a device cannot be read (it is listed with the error), or stdout
// cannot be written; 2 for
// bad options, and when `--backend NAME` was given and that backend did not
// load.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <new>
#include <string>

#include "inventory.hpp"
#include "render.hpp"
#include "tool_support.hpp"
#include "xal/xal.h"
#include "xal_common/cli.hpp"

namespace {

struct Options {
  bool json = false;
  xal::tools::BackendOptions load;
};

int run(const Options& opt) {
  const xal::tools::Session session("xal-info", opt.load, std::cerr);
  if (!session.ok()) return 1;

  const xal::info::Inventory inv = xal::info::collect_inventory();
  if (opt.json) {
    std::cout << xal::info::render_json(inv).dump(
                     2, ' ', false, nlohmann::json::error_handler_t::replace)
              << '\n';
  } else {
    xal::info::render_text(inv, std::cout);
  }
  if (!xal::tools::flush_stdout("xal-info", std::cerr)) return 1;

  if (const int status = xal::tools::check_backend_option("xal-info", opt.load, std::cerr)) {
    return status;
  }
  return xal::info::unreadable_devices(inv, "xal-info", std::cerr) ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    CLI::App app{"xal-info: lists xal's backends and devices"};
    Options opt;
    app.add_flag("--json", opt.json, "Print JSON for scripts");
    xal::tools::add_backend_options(app, opt.load);
    app.add_option("--selector", opt.load.selector,
                   "Device selector, e.g. 'mock:0,1;cuda:*' (as "
                   "XAL_DEVICE_SELECTOR)");
    xal::tools::add_version_flag(app, "xal-info");
    if (const auto status = xal::common::parse_options(app, "xal-info", argc, argv)) {
      return *status;
    }
    return run(opt);
  } catch (const std::bad_alloc&) {
    std::cerr << "xal-info: out of host memory\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "xal-info: " << e.what() << '\n';
    return 1;
  }
}
