#include "table.hpp"

#include <algorithm>
#include <utility>

namespace xal::smi {

Table::Table(std::vector<std::string> headers, std::vector<bool> right_align)
    : headers_(std::move(headers)), right_(std::move(right_align)) {
  right_.resize(headers_.size(), false);
}

void Table::add_row(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

void Table::print(std::ostream& out) const {
  std::vector<size_t> width(headers_.size());
  for (size_t c = 0; c < headers_.size(); ++c) {
    width[c] = headers_[c].size();
    for (const auto& row : rows_) width[c] = std::max(width[c], row[c].size());
  }
  auto rule = [&](char fill) {
    out << '+';
    for (const size_t w : width) out << std::string(w + 2, fill) << '+';
    out << '\n';
  };
  auto line = [&](const std::vector<std::string>& cells, bool header) {
    out << '|';
    for (size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(width[c] - cells[c].size(), ' ');
      if (right_[c] && !header) {
        out << ' ' << pad << cells[c] << " |";
      } else {
        out << ' ' << cells[c] << pad << " |";
      }
    }
    out << '\n';
  };
  rule('-');
  line(headers_, true);
  rule('=');
  for (const auto& row : rows_) line(row, false);
  rule('-');
}

}  // namespace xal::smi
