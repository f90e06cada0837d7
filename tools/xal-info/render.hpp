// Renders an Inventory for people (text) or scripts (JSON).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "inventory.hpp"

namespace xal::info {

// Human-readable listing. Pure function of `inv`; thread-safe.
void render_text(const Inventory& inv, std::ostream& out);

// Machine-readable form; the schema is documented in tools/xal-info/README.md.
// Pure function of `inv`; thread-safe.
nlohmann::json render_json(const Inventory& inv);

}  // namespace xal::info
