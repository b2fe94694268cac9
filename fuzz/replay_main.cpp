// The fuzz targets' driver where libFuzzer is not there (g++ builds): runs the target's
// LLVMFuzzerTestOneInput once on every file named, and on every file in every folder named (in
// name order), so a committed corpus replays as a regression test. A target that crashes, trips a
// sanitizer or lets an exception out ends the run as it would under libFuzzer; otherwise this
// prints how many inputs it replayed and exits 0. Arguments starting with '-' (libFuzzer's
// options) are ignored, so a fuzzer's command line can be replayed as it is.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

std::vector<uint8_t> read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "replay: cannot open %s\n", path.c_str());
    std::exit(2);
  }
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void run_one(const fs::path& path) {
  // An exactly sized heap copy, as libFuzzer passes it, so that a read past the end is caught.
  const std::vector<uint8_t> bytes = read_all(path);
  auto* copy = new uint8_t[std::max<size_t>(bytes.size(), 1)];
  std::copy(bytes.begin(), bytes.end(), copy);
  LLVMFuzzerTestOneInput(copy, bytes.size());
  delete[] copy;
}

}  // namespace

int main(int argc, char** argv) {
  size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg = argv[i];
    if (arg.string().starts_with("-")) continue;
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      std::vector<fs::path> files;
      for (const fs::directory_entry& e : fs::recursive_directory_iterator(arg)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
      std::sort(files.begin(), files.end());
      for (const fs::path& f : files) {
        run_one(f);
        ++count;
      }
    } else if (fs::is_regular_file(arg, ec)) {
      run_one(arg);
      ++count;
    } else {
      std::fprintf(stderr, "replay: %s is neither a file nor a folder\n", arg.c_str());
      return 2;
    }
  }
  if (count == 0) {
    std::fprintf(stderr, "replay: no inputs (usage: %s FILE_OR_FOLDER...)\n", argc > 0 ? argv[0] : "replay");
    return 2;
  }
  std::printf("replayed %zu inputs\n", count);
  return 0;
}
