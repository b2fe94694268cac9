// The C++ API as an application sees it: this file includes wgx/wgx.hpp alone and links the
// shared library (tests/api/CMakeLists.txt), so it also proves the public header is
// self-contained. The demo model (models/demo) against transformers' own greedy continuations,
// streaming, cancelling, errors that leave the session as it was, sessions sharing a model, and
// chat over a small model with a chat template (made by make_chat_model).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <nlohmann/json.hpp>
#include <thread>

#include "wgx/wgx.hpp"

namespace {

// One engine and the models for the whole suite: building pipelines is the slow part on
// SwiftShader.
wgx::Engine& engine() {
  static wgx::Engine e = [] {
    wgx::EngineOptions o = wgx::EngineOptions::from_env();
    o.announce = false;
    return wgx::Engine(o);
  }();
  return e;
}

// The demo model in f32 (weights and cache), as the references were made.
const wgx::Model& demo_f32() {
  static const wgx::Model m = [] {
    wgx::LoadOptions o;
    o.weights = wgx::WeightFormat::F32;
    o.kv = wgx::KvFormat::F32;
    return wgx::Model::load(engine(), WGX_DEMO_MODEL, o);
  }();
  return m;
}

const wgx::Model& demo_q4() {
  static const wgx::Model m = wgx::Model::load(engine(), WGX_DEMO_MODEL);
  return m;
}

const wgx::Model& chat_model() {
  static const wgx::Model m = wgx::Model::load(engine(), WGX_CHAT_MODEL);
  return m;
}

wgx::GenerateOptions greedy(int64_t n) {
  wgx::GenerateOptions o;
  o.max_tokens = n;
  o.sampling = wgx::Sampling::greedy();
  return o;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// ---- The demo model against transformers ---------------------------------------------------

struct GreedyCase {
  std::string prompt;
  std::vector<int32_t> prompt_ids, generated_ids;
  std::string text;
};

const std::vector<GreedyCase>& greedy_cases() {
  static const std::vector<GreedyCase> cases = [] {
    const nlohmann::json j = nlohmann::json::parse(read(WGX_DEMO_GREEDY));
    std::vector<GreedyCase> out;
    for (const auto& c : j.at("cases")) {
      out.push_back({c.at("prompt"), c.at("prompt_ids"), c.at("generated_ids"), c.at("text")});
    }
    return out;
  }();
  return cases;
}

// Decoding f32 weights on SwiftShader is slow (seconds a token): the streamed text is compared
// for four of the twelve prompts over the first kTokens of each continuation. tests/models checks
// every reference token of all twelve, fed with its prefix in one prefill each.
constexpr size_t kTokens = 16;
constexpr size_t kCases[] = {0, 4, 9, 10};

// The reference's first kTokens, and its text up to there (the whole text where it ended sooner).
std::pair<std::vector<int32_t>, std::string> reference_prefix(const GreedyCase& c) {
  if (c.generated_ids.size() <= kTokens) return {c.generated_ids, c.text};
  std::vector<int32_t> ids(c.generated_ids.begin(), c.generated_ids.begin() + kTokens);
  return {ids, demo_f32().tokenizer().decode(ids)};
}

TEST(DemoModel, PromptsEncodeAsTransformersTokenizer) {
  const wgx::Tokenizer tok = demo_f32().tokenizer();
  ASSERT_EQ(greedy_cases().size(), 12u);
  for (const GreedyCase& c : greedy_cases()) EXPECT_EQ(tok.encode(c.prompt), c.prompt_ids) << c.prompt;
}

TEST(DemoModel, GreedyTextMatchesTransformers) {
  for (const size_t i : kCases) {
    const GreedyCase& c = greedy_cases().at(i);
    wgx::Session s = demo_f32().session();
    std::string streamed;
    const wgx::Result r = s.generate(c.prompt, greedy(kTokens), [&](std::string_view text, int32_t) {
      streamed += text;
      return true;
    });
    const auto [ids, text] = reference_prefix(c);
    EXPECT_EQ(r.tokens, ids) << c.prompt;
    EXPECT_EQ(r.text, text) << c.prompt;
    EXPECT_EQ(streamed, r.text);
    EXPECT_EQ(r.stop, ids.size() < kTokens ? wgx::StopReason::Eos : wgx::StopReason::MaxTokens) << c.prompt;
  }
}

// The negative control: a prompt that starts with the tokenizer_config's bos (the demo's
// post-processor adds none; the old prompt) changes the continuations, so the test above would
// catch it.
TEST(DemoModel, AnExtraBosChangesTheContinuations) {
  const wgx::Tokenizer tok = demo_f32().tokenizer();
  ASSERT_TRUE(tok.bos_id());
  int differ = 0;
  for (const size_t i : kCases) {
    const GreedyCase& c = greedy_cases().at(i);
    std::vector<int32_t> ids{*tok.bos_id()};
    ids.insert(ids.end(), c.prompt_ids.begin(), c.prompt_ids.end());
    wgx::Session s = demo_f32().session();
    differ += s.generate(ids, greedy(8)).tokens != std::vector<int32_t>(c.generated_ids.begin(),
                                                                          c.generated_ids.begin() + 8);
  }
  EXPECT_GE(differ, 3) << "an extra bos should change the continuations within 8 tokens";
}

TEST(DemoModel, PipelinedAndSynchronousDecodingAgree) {
  const GreedyCase& c = greedy_cases().front();
  wgx::GenerateOptions sync = greedy(kTokens);
  sync.in_flight = 0;
  wgx::Session s = demo_f32().session();
  const wgx::Result r = s.generate(c.prompt, sync);
  EXPECT_FALSE(r.stats.pipelined);
  EXPECT_EQ(r.tokens, reference_prefix(c).first);
}

// ---- Sessions -------------------------------------------------------------------------------

TEST(Session, StreamingAndStatistics) {
  wgx::Session s = demo_q4().session();
  int calls = 0;
  const wgx::Result r = s.generate("Once upon a time", greedy(12), [&](std::string_view, int32_t) {
    ++calls;
    return true;
  });
  const auto prompt = static_cast<int64_t>(demo_q4().tokenizer().encode("Once upon a time").size());
  EXPECT_EQ(calls, static_cast<int>(r.tokens.size()));
  EXPECT_EQ(r.stats.generated_tokens, static_cast<int64_t>(r.tokens.size()));
  EXPECT_EQ(r.stats.prompt_tokens, prompt);
  EXPECT_GT(r.stats.prefill_seconds, 0);
  EXPECT_TRUE(r.stats.pipelined);
  EXPECT_EQ(s.context_used(), prompt + static_cast<int64_t>(r.tokens.size()));
  EXPECT_EQ(s.tokens().size(), static_cast<size_t>(s.context_used()));
  EXPECT_EQ(s.context_size(), 1024);
}

TEST(Session, ACallbackReturningFalseCancels) {
  wgx::Session s = demo_q4().session();
  int calls = 0;
  const wgx::Result r = s.generate("Love is", greedy(30), [&](std::string_view, int32_t) { return ++calls < 3; });
  EXPECT_EQ(r.stop, wgx::StopReason::Cancelled);
  EXPECT_EQ(r.tokens.size(), 3u);
}

TEST(Session, CancelFromAnotherThread) {
  wgx::Session s = demo_q4().session();
  std::atomic<int> tokens{0};
  wgx::Result r;
  std::thread worker([&] {
    wgx::GenerateOptions o = greedy(900);
    o.ignore_eos = true;
    r = s.generate("Never trust", o, [&](std::string_view, int32_t) {
      ++tokens;
      return true;
    });
  });
  while (tokens.load() < 2) std::this_thread::yield();
  s.cancel();
  worker.join();
  EXPECT_EQ(r.stop, wgx::StopReason::Cancelled);
  EXPECT_LT(r.tokens.size(), 900u);
}

TEST(Session, ContinuingEqualsOneRunOverTheWhole) {
  wgx::Session a = demo_q4().session();
  const wgx::Result r1 = a.generate("You will meet", greedy(6));
  const wgx::Result r2 = a.generate(std::vector<int32_t>{}, greedy(6));  // goes on from the reply
  wgx::Session b = demo_q4().session();
  const wgx::Result whole = b.generate("You will meet", greedy(12));
  std::vector<int32_t> both = r1.tokens;
  both.insert(both.end(), r2.tokens.begin(), r2.tokens.end());
  EXPECT_EQ(both, whole.tokens);
}

// Sessions of one model take turns: each sees its own conversation, as if alone.
TEST(Session, SessionsOfOneModelKeepTheirOwnConversations) {
  wgx::Session a = demo_q4().session();
  wgx::Session b = demo_q4().session();
  const wgx::Result a1 = a.generate("A friend in need", greedy(5));
  const wgx::Result b1 = b.generate("Computers are", greedy(5));
  const wgx::Result a2 = a.generate(" and", greedy(5));
  wgx::Session alone = demo_q4().session();
  EXPECT_EQ(alone.generate("A friend in need", greedy(5)).tokens, a1.tokens);
  EXPECT_EQ(alone.generate(" and", greedy(5)).tokens, a2.tokens);
  EXPECT_NE(a1.tokens, b1.tokens);
}

TEST(Session, ResetStartsOver) {
  wgx::Session s = demo_q4().session();
  const wgx::Result first = s.generate("If you want to", greedy(8));
  s.generate(" more", greedy(4));
  s.reset();
  EXPECT_EQ(s.context_used(), 0);
  EXPECT_EQ(s.generate("If you want to", greedy(8)).tokens, first.tokens);
}

TEST(Session, SeededSamplingRepeatsAndReportsItsSeed) {
  wgx::GenerateOptions o;
  o.max_tokens = 16;
  o.sampling.seed = 42;
  wgx::Session a = demo_q4().session();
  wgx::Session b = demo_q4().session();
  const wgx::Result ra = a.generate("The best way to", o);
  EXPECT_EQ(ra.seed, 42u);
  EXPECT_EQ(b.generate("The best way to", o).tokens, ra.tokens);
  o.sampling.seed.reset();
  EXPECT_NO_THROW(a.generate(" x", o));
}

// Truncating keeps the prefix's cache rows: what follows is all that is fed, and the reply is
// the one a fresh session gives for the whole prompt. A cache that truncate had wrongly kept past
// the prefix (or dropped) shows as other tokens or another count of cached tokens.
TEST(Session, TruncateKeepsThePrefixCached) {
  const wgx::Tokenizer tok = demo_q4().tokenizer();
  const std::vector<int32_t> a = tok.encode("If you want to be happy, be");
  const std::vector<int32_t> b = tok.encode("If you want to make a friend");
  size_t shared = 0;
  while (shared < a.size() && shared < b.size() && a[shared] == b[shared]) ++shared;
  ASSERT_GT(shared, 2u);
  ASSERT_LT(shared, b.size());
  wgx::Session s = demo_q4().session();
  const wgx::Result first = s.generate(a, greedy(6));
  EXPECT_EQ(first.stats.cached_tokens, 0);
  s.truncate(static_cast<int64_t>(shared));
  EXPECT_EQ(s.context_used(), static_cast<int64_t>(shared));
  const wgx::Result r = s.generate(std::span<const int32_t>(b).subspan(shared), greedy(6));
  EXPECT_EQ(r.stats.cached_tokens, static_cast<int64_t>(shared));
  EXPECT_EQ(r.stats.prompt_tokens, static_cast<int64_t>(b.size() - shared));
  wgx::Session fresh = demo_q4().session();
  EXPECT_EQ(fresh.generate(b, greedy(6)).tokens, r.tokens);
  // Without the truncation the same tokens continue the old conversation instead: other tokens.
  wgx::Session control = demo_q4().session();
  control.generate(a, greedy(6));
  EXPECT_NE(control.generate(std::span<const int32_t>(b).subspan(shared), greedy(6)).tokens, r.tokens);
  EXPECT_THROW(s.truncate(-1), wgx::Error);
}

TEST(Session, StopStringsEndTheText) {
  wgx::Session s = demo_f32().session();
  const GreedyCase& c = greedy_cases().front();  // " the only thing to be\ndesputs ..."
  wgx::GenerateOptions o = greedy(kTokens);
  o.stop = {"thing"};
  const wgx::Result r = s.generate(c.prompt, o);
  EXPECT_EQ(r.stop, wgx::StopReason::StopString);
  EXPECT_EQ(r.text, " the only ");
}

// ---- Errors -----------------------------------------------------------------------------------

template <typename F>
wgx::ErrorKind kind_of(F&& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const wgx::Error& e) {
    EXPECT_NE(std::string(e.what()), "");
    if (message) *message = e.what();
    return e.kind();
  }
  ADD_FAILURE() << "no wgx::Error thrown";
  return wgx::ErrorKind::Internal;
}

TEST(Errors, MissingAndMalformedModels) {
  EXPECT_EQ(kind_of([] { wgx::Model::load(engine(), "/nonexistent/model"); }), wgx::ErrorKind::InvalidModel);
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "wgx_api_bad_model";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "config.json") << "{ not json";
  std::filesystem::copy_file(std::string(WGX_DEMO_MODEL) + "/tokenizer.json", dir / "tokenizer.json",
                             std::filesystem::copy_options::overwrite_existing);
  EXPECT_EQ(kind_of([&] { wgx::Model::load(engine(), dir.string()); }), wgx::ErrorKind::InvalidModel);
  const std::filesystem::path file = dir / "garbage.wgx";
  std::ofstream(file) << "this is not a wgx file";
  EXPECT_EQ(kind_of([&] { wgx::Model::load(engine(), file.string()); }), wgx::ErrorKind::InvalidModel);
  std::filesystem::remove_all(dir);
}

// A folder's matrices are converted while the program builds, on a thread of their own: a
// weight that cannot be quantized still ends the load with an error naming it, and the model
// loaded before it is poisoned (the control) works.
TEST(Errors, AWeightThatIsNotFiniteIsNamed) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "wgx_api_nan_model";
  std::filesystem::remove_all(dir);
  std::filesystem::copy(WGX_DEMO_MODEL, dir);
  EXPECT_NO_THROW(wgx::Model::load(engine(), dir.string()));
  // The first element of a down projection made NaN, in place.
  const std::filesystem::path file = dir / "model.safetensors";
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  uint64_t header_size = 0;
  f.read(reinterpret_cast<char*>(&header_size), 8);
  std::string header(header_size, ' ');
  f.read(header.data(), static_cast<std::streamsize>(header_size));
  const auto entry = nlohmann::json::parse(header).at("model.layers.2.mlp.down_proj.weight");
  ASSERT_EQ(entry.at("dtype"), "BF16");
  f.seekp(static_cast<std::streamoff>(8 + header_size + entry.at("data_offsets")[0].get<uint64_t>()));
  const char nan[2] = {'\xc0', '\x7f'};
  f.write(nan, 2);
  f.close();
  std::string message;
  EXPECT_EQ(kind_of([&] { wgx::Model::load(engine(), dir.string()); }, &message), wgx::ErrorKind::InvalidModel);
  EXPECT_NE(message.find("model.layers.2.mlp.down_proj.weight"), std::string::npos) << message;
  EXPECT_NE(message.find("not finite"), std::string::npos) << message;
  std::filesystem::remove_all(dir);
}

TEST(Errors, BadArguments) {
  EXPECT_EQ(kind_of([] {
              wgx::EngineOptions o;
              o.adapter = "quantum";
              wgx::Engine e(o);
            }),
            wgx::ErrorKind::BadArgument);
  wgx::Session s = demo_q4().session();
  wgx::GenerateOptions o = greedy(4);
  o.sampling = {};
  o.sampling.top_p = 0;
  EXPECT_EQ(kind_of([&] { s.generate("x", o); }), wgx::ErrorKind::BadArgument);
  EXPECT_EQ(kind_of([&] { s.generate(std::vector<int32_t>{5000}, greedy(4)); }), wgx::ErrorKind::BadArgument);
  EXPECT_EQ(kind_of([&] { s.generate("\xff\xfe", greedy(4)); }), wgx::ErrorKind::BadArgument);
  EXPECT_EQ(s.context_used(), 0);
}

// A prompt that does not fit is an error, and the conversation so far is kept.
TEST(Errors, AFullContextLosesNothing) {
  wgx::Session s = demo_q4().session();
  const wgx::Result r = s.generate("Once upon a time", greedy(8));
  const std::vector<int32_t> before = s.tokens();
  EXPECT_EQ(kind_of([&] { s.generate(" again", greedy(2000)); }), wgx::ErrorKind::ContextFull);
  EXPECT_EQ(s.tokens(), before);
  // And it goes on as if the failed call had not been made.
  const wgx::Result next = s.generate(std::vector<int32_t>{}, greedy(6));
  wgx::Session t = demo_q4().session();
  const wgx::Result whole = t.generate("Once upon a time", greedy(14));
  std::vector<int32_t> both = r.tokens;
  both.insert(both.end(), next.tokens.begin(), next.tokens.end());
  EXPECT_EQ(both, whole.tokens);
}

TEST(Errors, ACallbackThatThrowsPassesItsExceptionThrough) {
  wgx::Session s = demo_q4().session();
  EXPECT_THROW(s.generate("Love is", greedy(8), [](std::string_view, int32_t) -> bool { throw std::logic_error("mine"); }),
               std::logic_error);
  EXPECT_EQ(s.context_used(), 0);  // as before the call
}

TEST(Errors, ConvertedFilesRefuseOtherSettings) {
  const std::filesystem::path file = std::filesystem::temp_directory_path() / "wgx_api_demo.wgx";
  wgx::convert(WGX_DEMO_MODEL, file.string());
  wgx::LoadOptions o;
  o.weights = wgx::WeightFormat::F32;
  EXPECT_EQ(kind_of([&] { wgx::Model::load(engine(), file.string(), o); }), wgx::ErrorKind::BadArgument);
  const wgx::Model m = wgx::Model::load(engine(), file.string());
  EXPECT_EQ(m.info().weights, "q4");
  wgx::Session a = m.session();
  wgx::Session b = demo_q4().session();
  EXPECT_EQ(a.generate("Love is", greedy(10)).tokens, b.generate("Love is", greedy(10)).tokens);
  std::filesystem::remove(file);
}

// ---- Streamed .wgx files ------------------------------------------------------------------------

// A model folder converted to a .wgx, as bytes.
std::vector<char> wgx_bytes(const std::string& folder) {
  const std::filesystem::path file = std::filesystem::temp_directory_path() / "wgx_api_stream.wgx";
  wgx::convert(folder, file.string());
  std::ifstream in(file, std::ios::binary);
  std::vector<char> b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(file);
  return b;
}

const std::vector<char>& demo_wgx_bytes() {
  static const std::vector<char> bytes = wgx_bytes(WGX_DEMO_MODEL);
  return bytes;
}

// Streams `bytes` in pieces whose sizes cycle through `pieces` (none a multiple of 4 apart from
// the big one, so words of weights straddle the pieces).
wgx::Model stream_model(const std::vector<char>& bytes, std::vector<size_t> pieces) {
  wgx::ModelStream stream(engine(), {}, "demo stream");
  size_t at = 0;
  for (size_t i = 0; at < bytes.size(); ++i) {
    const size_t n = std::min(pieces[i % pieces.size()], bytes.size() - at);
    stream.write(bytes.data() + at, n);
    at += n;
  }
  EXPECT_EQ(stream.size(), bytes.size());
  return stream.finish();
}

TEST(ModelStream, PiecesOfAnySizeGiveTheModelOfTheFile) {
  const wgx::Model streamed = stream_model(demo_wgx_bytes(), {1, 3, 63, 70001, 5, 4093, 2});
  const wgx::Model whole = stream_model(demo_wgx_bytes(), {demo_wgx_bytes().size()});
  EXPECT_EQ(streamed.info().memory.total, demo_q4().info().memory.total);
  wgx::Session a = streamed.session();
  wgx::Session b = demo_q4().session();
  wgx::Session c = whole.session();
  const std::vector<int32_t> expected = b.generate("Love is", greedy(16)).tokens;
  EXPECT_EQ(a.generate("Love is", greedy(16)).tokens, expected);
  EXPECT_EQ(c.generate("Love is", greedy(16)).tokens, expected);
}

// Qwen3's q and k norm weights reach flash decoding and rope through a table each node fills
// from the constants: a streamed model's arrive after its program is built, and must still be
// the ones used (the chat model is a small Qwen3; before the table waited for them, its greedy
// tokens differed here).
TEST(ModelStream, AQwen3ModelStreamedAnswersAsLoaded) {
  const wgx::Model streamed = stream_model(wgx_bytes(WGX_CHAT_MODEL), {4093, 70001});
  wgx::GenerateOptions o = greedy(12);
  EXPECT_EQ(streamed.session().generate("Hi there, how are", o).tokens,
            chat_model().session().generate("Hi there, how are", o).tokens);
}

// The negative control: changed bytes in the weights must change what the model says, or the
// comparison above could not see weights put in the wrong place.
TEST(ModelStream, ChangedWeightBytesChangeTheOutput) {
  std::vector<char> bytes = demo_wgx_bytes();
  // The last tensor ends at the end of the file: zeros for some of its values (finite, unlike
  // flipped bits that may make an infinity).
  std::fill(bytes.end() - 64, bytes.end(), char{0});
  const wgx::Model damaged = stream_model(bytes, {4096});
  wgx::Session a = damaged.session();
  wgx::Session b = demo_q4().session();
  EXPECT_NE(a.generate("Love is", greedy(16)).tokens, b.generate("Love is", greedy(16)).tokens);
}

TEST(ModelStream, CutShortTooLongAndDamagedStreamsAreRefused) {
  const std::vector<char>& bytes = demo_wgx_bytes();
  {
    wgx::ModelStream s(engine());
    s.write(bytes.data(), bytes.size() - 100);
    EXPECT_EQ(kind_of([&] { s.finish(); }), wgx::ErrorKind::InvalidModel);
  }
  {
    wgx::ModelStream s(engine());
    s.write(bytes.data(), bytes.size());
    const char extra = 0;
    EXPECT_EQ(kind_of([&] { s.write(&extra, 1); }), wgx::ErrorKind::InvalidModel);
    EXPECT_EQ(kind_of([&] { s.finish(); }), wgx::ErrorKind::BadArgument);  // failed before
  }
  {
    std::vector<char> bad = bytes;
    bad[0] = 'X';  // the magic
    wgx::ModelStream s(engine());
    try {
      s.write(bad.data(), 64);
      ADD_FAILURE() << "a bad magic was accepted";
    } catch (const wgx::Error& e) {
      EXPECT_EQ(e.kind(), wgx::ErrorKind::InvalidModel);
      EXPECT_NE(std::string(e.what()).find("magic"), std::string::npos) << e.what();
    }
  }
  {
    wgx::ModelStream s(engine());
    EXPECT_EQ(kind_of([&] { s.finish(); }), wgx::ErrorKind::InvalidModel);  // nothing arrived
  }
}

// ---- Model information, the tokenizer, progress ----------------------------------------------

// wgx::Batch over the public API: sequences added at different steps finish with the tokens each
// gets alone in the batch, chat turns end at the template's end of turn, and what cannot run is
// refused (the batching itself: tests/llm/test_batch.cpp, tests/models/test_rows_decoder.cpp).
TEST(Batch, SequencesJoinAndLeaveAndAgreeWithRunningAlone) {
  wgx::LoadOptions o;
  o.context = 64;
  o.max_prefill = 32;
  o.parallel = 3;
  const wgx::Model m = wgx::Model::load(engine(), WGX_DEMO_MODEL, o);
  EXPECT_EQ(m.info().parallel, 3);
  const wgx::Tokenizer tok = m.tokenizer();
  const std::vector<std::string> prompts = {"You will meet", "A friend in need", "Computers are"};
  std::map<uint64_t, wgx::Result> alone;
  std::vector<std::vector<int32_t>> want;
  for (const std::string& p : prompts) {
    wgx::Batch b(m);
    const uint64_t id = b.add(tok.encode(p), greedy(6));
    while (b.running() > 0) {
      for (auto& f : b.step()) alone[f.id] = f.result;
    }
    want.push_back(alone.at(id).tokens);
  }
  wgx::Batch b(m);
  EXPECT_THROW(wgx::Batch{m}, wgx::Error);  // one at a time
  std::string streamed;
  std::vector<uint64_t> ids{b.add(tok.encode(prompts[0]), greedy(6),
                                  [&](std::string_view text, int32_t) {
                                    streamed += text;
                                    return true;
                                  })};
  std::map<uint64_t, wgx::Result> got;
  for (auto& f : b.step()) got[f.id] = f.result;
  ids.push_back(b.add(tok.encode(prompts[1]), greedy(6)));
  ids.push_back(b.add(tok.encode(prompts[2]), greedy(6)));
  EXPECT_EQ(b.free_slots(), 0u);
  EXPECT_THROW(b.add(tok.encode(prompts[0]), greedy(6)), wgx::Error);
  while (b.running() > 0) {
    for (auto& f : b.step()) got[f.id] = f.result;
  }
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(got.at(ids[i]).tokens, want[i]) << prompts[i];
  EXPECT_EQ(streamed, got.at(ids[0]).text);
  EXPECT_EQ(got.at(ids[0]).stats.generated_tokens, 6);
  // A chat reply ends at the template's end of turn, which is not text.
  const uint64_t chat = b.add_chat({{"user", "Hello"}}, greedy(40));
  while (b.running() > 0) {
    for (auto& f : b.step()) got[f.id] = f.result;
  }
  EXPECT_EQ(got.at(chat).text.find("<|im_end|>"), std::string::npos);
  try {
    b.add(tok.encode(prompts[0]), greedy(64));
    ADD_FAILURE() << "a prompt and max_tokens over the context were taken";
  } catch (const wgx::Error& e) {
    EXPECT_EQ(e.kind(), wgx::ErrorKind::ContextFull);
  }
  // A model loaded without batching has none.
  try {
    wgx::Batch none(demo_q4());
    ADD_FAILURE() << "a Batch of a model loaded without LoadOptions::parallel";
  } catch (const wgx::Error& e) {
    EXPECT_EQ(e.kind(), wgx::ErrorKind::BadArgument);
  }
  o.parallel = -1;
  EXPECT_THROW(wgx::Model::load(engine(), WGX_DEMO_MODEL, o), wgx::Error);
}

// A Qwen3 folder loaded for batching: its matrices are written after both programs are built,
// and the rows program's copies of the q and k norm weights (rope's table) wait for them. Its
// greedy tokens are a session's.
TEST(Batch, AQwen3FolderBatchesAsASessionAnswers) {
  wgx::LoadOptions o;
  o.parallel = 2;
  const wgx::Model m = wgx::Model::load(engine(), WGX_CHAT_MODEL, o);
  const std::vector<int32_t> prompt = m.tokenizer().encode("Hi there, how are");
  wgx::Batch b(m);
  const uint64_t id = b.add(prompt, greedy(12));
  std::map<uint64_t, wgx::Result> got;
  while (b.running() > 0) {
    for (auto& f : b.step()) got[f.id] = f.result;
  }
  EXPECT_EQ(got.at(id).tokens, chat_model().session().generate(prompt, greedy(12)).tokens);
}

// Model::log_probs (wgx perplexity): a sentence the demo model has seen the like of scores
// better than its own tokens reversed; the values are log-probabilities; what cannot be scored
// is refused (the numbers against transformers: tests/models/test_score.cpp).
TEST(Model, LogProbsScoreText) {
  wgx::LoadOptions o;
  o.context = 64;
  o.parallel = 1;
  const wgx::Model m = wgx::Model::load(engine(), WGX_DEMO_MODEL, o);
  std::vector<int32_t> ids = m.tokenizer().encode("A friend in need is a friend indeed.");
  const std::vector<double> lp = m.log_probs(ids);
  ASSERT_EQ(lp.size(), ids.size() - 1);
  for (double v : lp) EXPECT_LE(v, 0.0);
  std::vector<int32_t> reversed(ids.rbegin(), ids.rend());
  const std::vector<double> rp = m.log_probs(reversed);
  const auto mean = [](const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / v.size(); };
  EXPECT_GT(mean(lp), mean(rp) + 1.0) << "the sentence scored no better than its tokens reversed";
  EXPECT_EQ(m.log_probs(ids), lp) << "the same text scored twice differs";
  const auto kind = [&](std::vector<int32_t> t) {
    try {
      m.log_probs(t);
    } catch (const wgx::Error& e) {
      return e.kind();
    }
    ADD_FAILURE() << "scored " << t.size() << " tokens that it should have refused";
    return wgx::ErrorKind::Internal;
  };
  EXPECT_EQ(kind({ids[0]}), wgx::ErrorKind::BadArgument);
  EXPECT_EQ(kind({ids[0], 5000}), wgx::ErrorKind::BadArgument);
  EXPECT_EQ(kind(std::vector<int32_t>(65, ids[0])), wgx::ErrorKind::ContextFull);
  {
    wgx::Batch b(m);
    EXPECT_EQ(kind(ids), wgx::ErrorKind::BadArgument);  // the batch has the program
  }
  EXPECT_EQ(m.log_probs(ids), lp);
  try {
    demo_q4().log_probs(ids);
    ADD_FAILURE() << "a model loaded without LoadOptions::parallel scored text";
  } catch (const wgx::Error& e) {
    EXPECT_EQ(e.kind(), wgx::ErrorKind::BadArgument);
  }
}

TEST(Model, InfoAndProgress) {
  std::vector<std::string> stages;
  wgx::LoadOptions o;
  o.context = 256;
  o.on_progress = [&](const wgx::LoadProgress& p) {
    if (stages.empty() || stages.back() != p.stage) stages.push_back(p.stage);
  };
  const wgx::Model m = wgx::Model::load(engine(), WGX_DEMO_MODEL, o);
  EXPECT_EQ(stages, (std::vector<std::string>{"converting", "building", "done"}));
  const wgx::ModelInfo i = m.info();
  EXPECT_EQ(i.architecture, "llama");
  EXPECT_EQ(i.weights, "q4");
  EXPECT_EQ(i.kv_cache, "f16");
  EXPECT_EQ(i.context, 256);
  EXPECT_EQ(i.vocab_size, 2048);
  EXPECT_EQ(i.layers, 4);
  EXPECT_EQ(i.chat_template, "qwen3");  // its tokenizer has ChatML's tokens
  EXPECT_GT(i.memory.weights, 0u);
  EXPECT_GE(i.memory.total, i.memory.weights + i.memory.state);
  EXPECT_GT(i.kernels, 0u);
  EXPECT_LE(i.build_seconds, i.load_seconds);
}

TEST(Model, TokenizerRoundTrip) {
  const wgx::Tokenizer tok = wgx::Tokenizer::load(WGX_DEMO_MODEL);
  const std::vector<int32_t> ids = tok.encode("Hello, world!");
  EXPECT_EQ(tok.decode(ids), "Hello, world!");
  EXPECT_EQ(tok.vocab_size(), 2048);
  ASSERT_TRUE(tok.token_id("<|endoftext|>"));
  EXPECT_TRUE(tok.is_special(*tok.token_id("<|endoftext|>")));
  EXPECT_EQ(tok.token(*tok.token_id("<|endoftext|>")), "<|endoftext|>");
  wgx::EncodeOptions plain;
  plain.parse_special = false;
  EXPECT_GT(tok.encode("<|endoftext|>", plain).size(), 1u);
  EXPECT_EQ(tok.encode("<|endoftext|>").size(), 1u);
}

TEST(Model, SyntheticModelsTakeTokenIds) {
  wgx::LoadOptions o;
  o.context = 64;
  const wgx::Model m = wgx::Model::synthetic(engine(), "demo-tiny", o);
  EXPECT_EQ(kind_of([&] { m.tokenizer(); }), wgx::ErrorKind::InvalidModel);
  wgx::Session s = m.session();
  EXPECT_EQ(kind_of([&] { s.generate("text"); }), wgx::ErrorKind::BadArgument);
  wgx::GenerateOptions g = greedy(4);
  g.ignore_eos = true;
  const wgx::Result r = s.generate(std::vector<int32_t>{1, 2, 3}, g);
  EXPECT_EQ(r.tokens.size(), 4u);
  EXPECT_EQ(r.text, "");
  EXPECT_EQ(kind_of([] { wgx::Model::synthetic(engine(), "llama-9000"); }), wgx::ErrorKind::BadArgument);
}

TEST(Model, VersionAndOptions) {
  EXPECT_STREQ(wgx::version(), WGX_EXPECTED_VERSION);
  const std::vector<wgx::OptionInfo> table = wgx::options();
  ASSERT_FALSE(table.empty());
  const auto x8 = std::find_if(table.begin(), table.end(), [](const wgx::OptionInfo& o) { return o.name == "quant_gemv_x8"; });
  ASSERT_NE(x8, table.end());
  EXPECT_EQ(x8->default_value, "auto");
  EXPECT_TRUE(x8->changes_results);
  for (const wgx::OptionInfo& o : table) EXPECT_FALSE(o.doc.empty()) << o.name;
  // A valid map passes; an unknown name or a bad value is a BadArgument that says what is valid,
  // from check_options and from an Engine, before any device is made.
  EXPECT_NO_THROW(wgx::check_options({{"quant_gemv_x8", "off"}}));
  try {
    wgx::check_options({{"no_such_option", "1"}});
    ADD_FAILURE() << "an unknown option was accepted";
  } catch (const wgx::Error& e) {
    EXPECT_EQ(e.kind(), wgx::ErrorKind::BadArgument);
    EXPECT_NE(std::string(e.what()).find("quant_gemv_x8"), std::string::npos) << e.what();
  }
  EXPECT_EQ(kind_of([] { wgx::check_options({{"quant_gemv_x8", "sometimes"}}); }), wgx::ErrorKind::BadArgument);
  wgx::EngineOptions bad;
  bad.adapter = "no such adapter";  // never reached: the options are checked first
  bad.options["no_such_option"] = "1";
  try {
    wgx::Engine e(bad);
    ADD_FAILURE() << "an engine took an unknown option";
  } catch (const wgx::Error& e) {
    EXPECT_EQ(e.kind(), wgx::ErrorKind::BadArgument);
    EXPECT_NE(std::string(e.what()).find("no_such_option"), std::string::npos) << e.what();
  }
}

// ---- Chat -------------------------------------------------------------------------------------

TEST(Chat, RendersTheTemplateAndKeepsTheHistory) {
  const wgx::Model& m = chat_model();
  EXPECT_EQ(m.info().chat_template, "qwen3");
  wgx::SessionOptions so;
  so.system_prompt = "Be brief.";
  so.thinking = false;
  wgx::Session s = m.session(so);
  const wgx::Result r = s.chat("Hi!", greedy(6));
  const std::vector<wgx::Message> first = {{"system", "Be brief."}, {"user", "Hi!"}};
  EXPECT_EQ(m.render_chat(first, false),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi!<|im_end|>\n"
            "<|im_start|>assistant\n<think>\n\n</think>\n\n");
  wgx::EncodeOptions raw;
  raw.add_special_tokens = false;
  const std::vector<int32_t> prompt = m.tokenizer().encode(m.render_chat(first, false), raw);
  const std::vector<int32_t> tokens = s.tokens();
  ASSERT_EQ(tokens.size(), prompt.size() + r.tokens.size());
  EXPECT_TRUE(std::equal(prompt.begin(), prompt.end(), tokens.begin()));
  ASSERT_EQ(s.history().size(), 3u);
  EXPECT_EQ(s.history()[2].role, "assistant");
  EXPECT_EQ(s.history()[2].content, r.text);
}

// A second turn feeds only what the cache lacks, and replies as a fresh session given the whole
// conversation does.
TEST(Chat, ASecondTurnReusesTheCacheAndMatchesAFreshSession) {
  const wgx::Model& m = chat_model();
  wgx::Session s = m.session();
  s.chat("Hi", greedy(5));
  const wgx::Result second = s.chat("More?", greedy(5));
  const std::vector<wgx::Message> history = s.history();
  wgx::Session fresh = m.session();
  const std::vector<wgx::Message> asked(history.begin(), history.end() - 1);
  const wgx::Result whole = fresh.chat(asked, greedy(5));
  EXPECT_EQ(second.tokens, whole.tokens);
  EXPECT_LT(second.stats.prompt_tokens, whole.stats.prompt_tokens);
}

// Messages that differ from what the session holds (an edited turn) are fed from the difference.
TEST(Chat, AnEditedConversationIsFedFromWhereItDiffers) {
  const wgx::Model& m = chat_model();
  wgx::Session s = m.session();
  s.chat("Tell me a joke", greedy(5));
  const std::vector<wgx::Message> edited = {{"user", "Tell me a story"}};
  const wgx::Result r = s.chat(edited, greedy(5));
  wgx::Session fresh = m.session();
  EXPECT_EQ(fresh.chat(edited, greedy(5)).tokens, r.tokens);
}

TEST(Chat, AFullConversationIsContextFull) {
  wgx::LoadOptions o;
  o.context = 64;
  const wgx::Model m = wgx::Model::load(engine(), WGX_CHAT_MODEL, o);
  wgx::Session s = m.session();
  const wgx::Result r = s.chat("Hi", greedy(1000));  // lowered to what is left
  EXPECT_LE(s.context_used(), 64);
  EXPECT_TRUE(r.stop == wgx::StopReason::MaxTokens || r.stop == wgx::StopReason::Eos);
  EXPECT_EQ(kind_of([&] { s.chat("again and again and again", greedy(5)); }), wgx::ErrorKind::ContextFull);
  s.reset();
  EXPECT_TRUE(s.history().empty());
  EXPECT_NO_THROW(s.chat("again", greedy(5)));
}

}  // namespace
