// wgx convert: a Hugging Face model folder -> one .wgx file holding the decoder graph, the
// weights already converted to their GPU format, the config and the tokenizer
// (models/wgx_model_file.h lists the metadata). wgx run, chat and bench then load the file by
// memory mapping it, skipping the safetensors reading and the quantization a folder costs.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "api/internal.h"
#include "cli/commands.h"
#include "cli/llm_common.h"
#include "cli/progress_line.h"

namespace wgx::cli {

namespace {

namespace fs = std::filesystem;

constexpr const char* kConvertUsage = R"(usage: wgx convert DIR -o OUT.wgx [options]
       wgx convert --synthetic NAME --tokenizer DIR -o OUT.wgx [options]

Converts the Hugging Face model folder DIR (config.json, tokenizer.json, *.safetensors) into one
.wgx file: the weights in the format chosen, the graph, the config and the tokenizer. wgx run,
chat and bench --model OUT.wgx then load it without converting anything. The options below are
fixed in the file.

  -o, --output FILE     the .wgx file to write (replaced atomically if it exists)
  --weights q4|f16|f32  how the weights are held on the GPU (default q4: 4-bit, groups of 32)
  --kv f16|f32          how the KV cache holds keys and values (default f16)
  --ctx N               context length (default 4096; at most the model's max_position_embeddings)
  --max-prefill N       the most prompt tokens one step feeds (default 512)
  --synthetic NAME      instead of DIR: random weights at a named geometry (wgx bench's), for
                        benchmarks where only files load (the web build); its text is noise
  --tokenizer DIR       with --synthetic: the folder whose tokenizer the file carries (ids past
                        its vocabulary decode to nothing)
  --seed N              with --synthetic: of the random weights (default 1)
)";

}  // namespace

int run_convert(const GlobalOptions&, const std::vector<std::string>& argv) {
  for (const std::string& a : argv) {
    if (a == "-h" || a == "--help") {
      std::fputs(kConvertUsage, stdout);
      return 0;
    }
  }
  ModelArgs model;
  std::string output, tokenizer;
  ArgWalker args("convert", argv);
  while (!args.done()) {
    if (take_model_option(args, model)) continue;
    if (args.take("--output", "-o")) {
      output = args.value();
    } else if (args.take("--synthetic")) {
      model.synthetic = args.value();
    } else if (args.take("--tokenizer")) {
      tokenizer = args.value();
    } else if (args.take("--seed")) {
      model.seed = static_cast<uint64_t>(parse_int("--seed", args.value(), 0, INT64_MAX));
    } else if (args.take("--max-prefill")) {
      model.load.max_prefill = parse_int("--max-prefill", args.value(), 1, int64_t{1} << 20);
    } else if (model.path.empty() && args.current().rfind("-", 0) != 0) {
      model.path = args.current();
      args.skip();
    } else {
      args.unknown();
    }
  }
  if (output.empty()) throw std::invalid_argument("convert: name the output with -o OUT.wgx");
  const bool synthetic = !model.synthetic.empty();
  if (synthetic) {
    if (!model.path.empty()) throw std::invalid_argument("convert: give a model folder or --synthetic, not both");
    if (tokenizer.empty()) throw std::invalid_argument("convert: --synthetic needs --tokenizer DIR");
  } else {
    if (model.path.empty()) {
      throw std::invalid_argument("convert: name the model folder (usage: wgx convert DIR -o OUT.wgx)");
    }
    if (!tokenizer.empty()) throw std::invalid_argument("convert: --tokenizer goes with --synthetic");
    if (!fs::is_directory(model.path)) throw std::invalid_argument("convert: " + model.path + " is not a model folder");
  }
  ModelInfo info;
  {
    ProgressLine line("converting " + (synthetic ? "synthetic " + model.synthetic : model.path));
    LoadOptions o = model.load;
    o.on_progress = line.callback();
    info = synthetic ? Internals::convert_synthetic(model.synthetic, tokenizer, output, o, model.seed)
                     : convert(model.path, output, o);
  }
  std::fprintf(stderr, "wgx: wrote %s: %.1f MiB (%s) in %.1f s\n", output.c_str(),
               static_cast<double>(fs::file_size(output)) / (1 << 20), info.description.c_str(), info.load_seconds);
  return 0;
}

}  // namespace wgx::cli
