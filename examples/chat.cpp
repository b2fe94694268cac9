// A terminal chat over wgx's C++ API: one line in, the reply streamed out. A model without a chat
// template (a plain text model such as models/demo) continues each line as text instead.
//
//   chat MODEL [--greedy] [-n MAX_TOKENS]       (Ctrl-D or an empty line ends it)
#include <cstdlib>
#include <iostream>
#include <string>

#include <wgx/wgx.hpp>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: chat MODEL [--greedy] [-n MAX_TOKENS]\n";
    return 2;
  }
  wgx::GenerateOptions options;
  options.max_tokens = 128;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--greedy") {
      options.sampling = wgx::Sampling::greedy();
    } else if (arg == "-n" && i + 1 < argc) {
      options.max_tokens = std::atoll(argv[++i]);
    } else {
      std::cerr << "chat: unknown argument " << arg << "\n";
      return 2;
    }
  }
  try {
    wgx::LoadOptions load;
    load.on_progress = [](const wgx::LoadProgress& p) {
      if (p.stage != "done") std::cerr << "\rloading: " << p.stage << " " << p.step << "          " << std::flush;
    };
    const wgx::Model model = wgx::Model::load(argv[1], load);
    const wgx::ModelInfo info = model.info();
    std::cerr << "\r" << info.description << "\n";
    const bool chat = !info.chat_template.empty();
    wgx::Session session = model.session();
    const auto print = [](std::string_view text, int32_t) {
      std::cout << text << std::flush;
      return true;
    };
    std::string line;
    while (std::cout << "> " << std::flush, std::getline(std::cin, line) && !line.empty()) {
      const wgx::Result r = chat ? session.chat(line, options, print) : session.generate(line, options, print);
      std::cout << "\n";
      std::cerr << "[" << r.stats.generated_tokens << " tokens, " << r.stats.decode_tokens_per_second()
                << " tok/s, stop: " << wgx::to_string(r.stop) << "]\n";
    }
    return 0;
  } catch (const wgx::Error& e) {
    std::cerr << "\nchat: " << wgx::to_string(e.kind()) << ": " << e.what() << "\n";
    return 1;
  }
}
