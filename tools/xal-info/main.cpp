// xal-info: lists the backends xal considered (loaded or not, and why) and
// every device with its properties. `--json` gives the same for scripts;
// `--device-count` the number of devices alone (a JSON number; with
// `--device-count-to FILE` into a file beside the usual output), `--locate
// SONAME` the path where a vendor library lies, for scripts that must not
// read the text.
//
// Exit status: 0 on success (--locate: 1 when the library is not found); 1 when xal_init (or reading the inventory)
// fails, a device cannot be read (it is listed with the error), or stdout
// cannot be written; 2 for
// bad options, and when `--backend NAME` was given and that backend did not
// load.
#include <CLI/CLI.hpp>
#include <exception>
#include <fstream>
#include <iostream>
#include <new>
#include <nlohmann/json.hpp>
#include <string>

#include "inventory.hpp"
#include "locate.hpp"
#include "render.hpp"
#include "tool_support.hpp"
#include "xal/xal.h"
#include "xal_common/cli.hpp"

namespace {

struct Options {
  bool json = false;
  bool device_count = false;
  std::string device_count_to;
  std::string locate;
  xal::tools::BackendOptions load;
};

// --locate: needs no xal at all.
int locate(const std::string& soname) {
  const auto path = xal::info::locate_library(soname);
  if (!path) {
    std::cerr << "xal-info: " << soname << " not found (dynamic loader, then";
    for (const auto& f : xal::info::locate_folders()) std::cerr << ' ' << f;
    std::cerr << ")\n";
    return 1;
  }
  std::cout << *path << '\n';
  return xal::tools::flush_stdout("xal-info", std::cerr) ? 0 : 1;
}

int run(const Options& opt) {
  if (!opt.locate.empty()) return locate(opt.locate);
  const xal::tools::Session session("xal-info", opt.load, std::cerr);
  if (!session.ok()) return 1;

  const xal::info::Inventory inv = xal::info::collect_inventory();
  if (!opt.device_count_to.empty()) {
    std::ofstream count(opt.device_count_to, std::ios::trunc);
    if (!(count << inv.devices.size() << '\n' << std::flush)) {
      std::cerr << "xal-info: --device-count-to: cannot write " << opt.device_count_to << '\n';
      return 1;
    }
  }
  if (opt.device_count) {
    std::cout << inv.devices.size() << '\n';
  } else if (opt.json) {
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
    app.add_flag("--device-count", opt.device_count,
                 "Print the number of devices alone (a JSON number)");
    app.add_option("--device-count-to", opt.device_count_to,
                   "Also write the number of devices (a JSON number) to FILE")
        ->type_name("FILE");
    app.add_option("--locate", opt.locate,
                   "Print the path of the library SONAME alone (exit 1 if nowhere): "
                   "the dynamic loader's pick, else the first under /usr/lib, /usr/local, /opt")
        ->type_name("SONAME");
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
