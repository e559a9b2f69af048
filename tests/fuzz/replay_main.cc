// A main() for the fuzz targets where libFuzzer is not available (gcc, the
// normal and ASan/UBSan builds): runs LLVMFuzzerTestOneInput on every seed
// file given (files or folders), then on a fixed number of deterministic
// mutations of each, so that ctest replays the corpus and a slice of the
// input space on every run, under the sanitizers where they are on.
//   fuzz_target [--mutations N] CORPUS_DIR_OR_FILE...
// A finding aborts (sanitizer) or crashes; the mutation is saved first to
// $NEURONPROF_FUZZ_ARTIFACT (default ./fuzz-replay-input) so that it can be
// replayed and kept as a regression input.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "src/export/xspace_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

// xorshift64*: the same mutations on every run and every machine.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed | 1) {}
  uint64_t Next() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return state_ * 0x2545F4914F6CDD1DULL;
  }
  size_t Below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(Next() % n); }

 private:
  uint64_t state_;
};

// Varints a crafted file would use: INT64_MAX, INT64_MIN, -1, 2^63 / 1000.
const std::vector<std::string>& ExtremeVarints() {
  static const std::vector<std::string> values = {
      std::string("\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 9),
      std::string("\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 10),
      std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10),
      std::string("\xef\xa7\xc6\x8b\x94\x9f\x86\x10", 8)};
  return values;
}

std::string Mutate(std::string input, Random& random) {
  const int edits = 1 + static_cast<int>(random.Below(4));
  for (int e = 0; e < edits && !input.empty(); ++e) {
    const size_t at = random.Below(input.size());
    switch (random.Below(6)) {
      case 0:  // flip a bit
        input[at] = static_cast<char>(input[at] ^ (1u << random.Below(8)));
        break;
      case 1: {  // an interesting byte
        static const char kBytes[] = {0, 1, 0x7f, static_cast<char>(0x80), static_cast<char>(0xff)};
        input[at] = kBytes[random.Below(sizeof(kBytes))];
        break;
      }
      case 2:  // truncate
        input.resize(at);
        break;
      case 3: {  // overwrite with an extreme varint
        const std::string& v = ExtremeVarints()[random.Below(ExtremeVarints().size())];
        input.replace(at, std::min(v.size(), input.size() - at), v);
        break;
      }
      case 4: {  // duplicate a chunk
        const size_t length = 1 + random.Below(std::min<size_t>(64, input.size() - at));
        input.insert(random.Below(input.size()), input.substr(at, length));
        break;
      }
      default:  // erase a chunk
        input.erase(at, 1 + random.Below(std::min<size_t>(16, input.size() - at)));
        break;
    }
  }
  return input;
}

// FNV-1a: a seed per file name, the same with every standard library.
uint64_t Fnv1a(const std::string& text) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) hash = (hash ^ c) * 0x100000001b3ULL;
  return hash;
}

void Run(const std::string& input) {
  const char* artifact = std::getenv("NEURONPROF_FUZZ_ARTIFACT");
  if (FILE* f = std::fopen(artifact ? artifact : "fuzz-replay-input", "wb")) {
    std::fwrite(input.data(), 1, input.size(), f);
    std::fclose(f);
  }
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

}  // namespace

int main(int argc, char** argv) {
  int mutations = 200;
  std::vector<fs::path> seeds;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--mutations") == 0 && i + 1 < argc) {
      mutations = std::atoi(argv[++i]);
    } else if (fs::is_directory(argv[i])) {
      for (const auto& entry : fs::directory_iterator(argv[i])) {
        if (entry.is_regular_file()) seeds.push_back(entry.path());
      }
    } else {
      seeds.push_back(argv[i]);
    }
  }
  if (seeds.empty()) {
    std::fprintf(stderr, "usage: %s [--mutations N] CORPUS_DIR_OR_FILE...\n", argv[0]);
    return 2;
  }
  std::sort(seeds.begin(), seeds.end());
  for (const fs::path& seed : seeds) {
    auto data = neuronprof::exporter::ReadRegularFile(seed.string(), 1 << 20, "seed cap");
    if (!data.ok()) {
      std::fprintf(stderr, "%s\n", std::string(data.status().message()).c_str());
      return 1;
    }
    Run(*data);
    Random random(Fnv1a(seed.filename().string()));
    for (int m = 0; m < mutations; ++m) Run(Mutate(*data, random));
    std::printf("%s: seed and %d mutations ok\n", seed.filename().c_str(), mutations);
  }
  const char* artifact = std::getenv("NEURONPROF_FUZZ_ARTIFACT");
  std::remove(artifact ? artifact : "fuzz-replay-input");
  return 0;
}
