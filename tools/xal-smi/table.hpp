// A plain text table with boxed borders, columns sized to their content.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace xal::smi {

class Table {
 public:
  // `right_align[i]` right-aligns column i (numbers).
  Table(std::vector<std::string> headers, std::vector<bool> right_align);

  // A row must have as many cells as there are headers (extra cells are
  // dropped, missing ones left empty).
  void add_row(std::vector<std::string> cells);

  void print(std::ostream& out) const;

 private:
  std::vector<std::string> headers_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace xal::smi
