// Runs a fuzz target's LLVMFuzzerTestOneInput once per file, without
// libFuzzer: the regression test of the ordinary build. Arguments are
// files or folders (every regular file in a folder, sorted by name).
// Exits 0 when every input ran; a broken contract aborts the process with
// the target's message after the name of the file that caused it.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_check.hpp"

namespace fs = std::filesystem;

extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

bool collect(const fs::path& arg, std::vector<fs::path>& files) {
  std::error_code ec;
  if (fs::is_directory(arg, ec)) {
    std::vector<fs::path> found;
    for (const auto& entry : fs::directory_iterator(arg, ec))
      if (entry.is_regular_file()) found.push_back(entry.path());
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
    return !ec;
  }
  if (fs::is_regular_file(arg, ec)) {
    files.push_back(arg);
    return true;
  }
  std::fprintf(stderr, "%s: not a file or folder\n", arg.c_str());
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE|FOLDER...\n", argv[0]);
    return 2;
  }
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i)
    if (!collect(argv[i], files)) return 2;
  for (const fs::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(in),
                            std::istreambuf_iterator<char>()};
    if (!in.good() && !in.eof()) {
      std::fprintf(stderr, "%s: cannot be read\n", file.c_str());
      return 2;
    }
    std::fprintf(stderr, "running %s (%zu bytes)\n", file.c_str(), bytes.size());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()),
                           bytes.size());
  }
  std::printf("%zu input(s) ran without a crash or a broken check\n", files.size());
  return files.empty() ? 1 : 0;
}
