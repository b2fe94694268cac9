// Writes a Hugging Face folder the API's chat tests load: a tiny seeded random Qwen3 checkpoint
// (tests/models/tiny_checkpoint.h) with the toy tokenizer (tests/llm/toy_model.h: printable ASCII
// and ChatML's special tokens), so the model has a chat template. Its replies are noise, but a
// deterministic function of the whole conversation, which is what the tests compare.
//   make_chat_model OUT_DIR
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>

#include "tiny_checkpoint.h"
#include "toy_model.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fputs("usage: make_chat_model OUT_DIR\n", stderr);
    return 2;
  }
  try {
    namespace fs = std::filesystem;
    using namespace wgx;
    models::testing::TinySpec spec;
    spec.arch = models::Architecture::Qwen3;
    spec.vocab = llm::test::toy::kVocab;
    spec.max_position = 256;
    spec.seed = 7;
    models::testing::TinyModel model = models::testing::make_tiny(spec);
    model.config.eos_token_ids = {llm::test::toy::im_end};
    const fs::path dir = argv[1];
    fs::create_directories(dir);
    models::testing::write_checkpoint(model, dir);
    std::ofstream(dir / "tokenizer.json") << llm::test::toy_tokenizer_json();
    std::ofstream(dir / "tokenizer_config.json") << llm::test::kToyTokenizerConfig;
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_chat_model: %s\n", e.what());
    return 1;
  }
}
