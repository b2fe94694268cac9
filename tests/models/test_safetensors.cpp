// The safetensors reader on good files, single and sharded, and on every kind of malformed one:
// each must be a ModelError naming the file and the tensor, never a crash or a huge allocation.
// The last group goes through load_hf, as a user would meet the errors.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <span>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <random>

#include "models/error.h"
#include "models/model.h"
#include "models/safetensors.h"
#include "tiny_checkpoint.h"

namespace wgx::models::testing {
namespace {

// Runs `f`, which must throw a ModelError whose message holds every one of `parts`.
void expect_error(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
  } catch (const ModelError& e) {
    const std::string what = e.what();
    for (const std::string& p : parts) EXPECT_NE(what.find(p), std::string::npos) << "'" << p << "' not in: " << what;
    return;
  }
  ADD_FAILURE() << "no ModelError";
}

RawTensor f32_tensor(const std::string& name, std::vector<int64_t> shape, float first) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = first + static_cast<float>(i);
  RawTensor t{name, "F32", std::move(shape), std::vector<uint8_t>(v.size() * 4)};
  std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
  return t;
}

TEST(Safetensors, ReadsTensorsDtypesAndMetadata) {
  TempDir dir;
  RawTensor brain{"b.half", "BF16", {3}, {0x80, 0x3f, 0x00, 0xc0, 0x40, 0x40}};  // 1, -2, 3
  RawTensor half{"c.half", "F16", {2}, {0x00, 0x3c, 0x00, 0xb8}};                  // 1, -0.5
  write_safetensors(dir.path() / "x.safetensors", {f32_tensor("a.weight", {2, 3}, 1.5f), brain, half});
  SafetensorsFile f(dir.path() / "x.safetensors");
  ASSERT_EQ(f.tensors().size(), 3u);
  const TensorView* a = f.find("a.weight");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->dtype, TensorDType::F32);
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(to_f32(*a), (std::vector<float>{1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f}));
  EXPECT_EQ(to_f32(*f.find("b.half")), (std::vector<float>{1.f, -2.f, 3.f}));
  EXPECT_EQ(f.find("c.half")->dtype, TensorDType::F16);
  EXPECT_EQ(to_f32(*f.find("c.half")), (std::vector<float>{1.f, -0.5f}));
  EXPECT_EQ(f.metadata().at("format"), "pt");
}

// The same reader on bytes in memory: the tensors are spans into them, errors name the source.
TEST(Safetensors, ParsesBytesInMemory) {
  const std::string header = R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})";
  std::string file(8, '\0');
  file[0] = static_cast<char>(header.size());
  file += header;
  file += std::string("\x00\x3c\x00\xb8", 4);  // 1, -0.5
  std::vector<uint8_t> bytes(file.begin(), file.end());
  const SafetensorsContents c = parse_safetensors(bytes, "memory");
  ASSERT_EQ(c.tensors.size(), 1u);
  EXPECT_EQ(c.tensors[0].name, "w");
  EXPECT_EQ(c.tensors[0].data.data(), bytes.data() + 8 + header.size());
  EXPECT_EQ(to_f32(c.tensors[0]), (std::vector<float>{1.f, -0.5f}));
  EXPECT_EQ(c.metadata.at("format"), "pt");
  bytes.pop_back();
  expect_error([&] { (void)parse_safetensors(bytes, "memory"); }, {"memory", "tensor w", "data_offsets"});
}

TEST(Safetensors, ShardedCheckpointThroughIndex) {
  TempDir dir;
  write_checkpoint(make_tiny({}), dir.path(), 3);
  Checkpoint ck(dir.path());
  EXPECT_EQ(ck.file_count(), 3u);
  EXPECT_NE(ck.find("model.layers.1.mlp.down_proj.weight"), nullptr);
  expect_error([&] { (void)ck.at("model.layers.7.mlp.down_proj.weight"); },
               {"model.safetensors.index.json", "tensor model.layers.7.mlp.down_proj.weight", "missing"});
}

class Malformed : public ::testing::Test {
 protected:
  std::filesystem::path file() const { return dir_.path() / "m.safetensors"; }
  void write_header(const std::string& header, size_t data_bytes) {
    write_raw_safetensors(file(), header, std::vector<uint8_t>(data_bytes, 0));
  }
  void expect(const std::vector<std::string>& parts) {
    std::vector<std::string> all = parts;
    all.push_back(file().string());
    expect_error([&] { SafetensorsFile f(file()); }, all);
  }
  TempDir dir_;
};

TEST_F(Malformed, TruncatedData) {
  write_safetensors(file(), {f32_tensor("a", {4}, 0), f32_tensor("b", {4}, 0)});
  std::filesystem::resize_file(file(), std::filesystem::file_size(file()) - 5);
  expect({"tensor b", "data_offsets [16,32] reach past the data area of 27 bytes"});
}

TEST_F(Malformed, TruncatedHeader) {
  write_safetensors(file(), {f32_tensor("a", {4}, 0)});
  std::filesystem::resize_file(file(), 20);
  expect({"header", "the file has only 12"});
  std::filesystem::resize_file(file(), 5);
  expect({"5 bytes, too short"});
  std::filesystem::resize_file(file(), 0);
  expect({"0 bytes, too short"});
}

TEST_F(Malformed, BadHeaderJson) {
  write_header(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},)", 4);
  expect({"header", "not valid JSON"});
  write_header(R"(["a"])", 0);
  expect({"header", "not a JSON object"});
  write_header(R"({"a": {"dtype": "F32", "shape": [1e400], "data_offsets": [0, 4]}})", 4);
  expect({"header", "not valid JSON", "number overflow"});
}

TEST_F(Malformed, UnsupportedDtypeIsNamed) {
  write_header(R"({"layers.0.q.weight": {"dtype": "I8", "shape": [4], "data_offsets": [0, 4]}})", 4);
  expect({"tensor layers.0.q.weight", "dtype I8", "F32, F16 and BF16"});
}

TEST_F(Malformed, SpanDoesNotMatchShape) {
  write_header(R"({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 20]}})", 24);
  expect({"tensor w", "F32[2, 3] needs 24 bytes", "span 20"});
}

TEST_F(Malformed, OverlappingOffsets) {
  write_header(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
                   "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}})",
               24);
  expect({"tensor b", "overlaps tensor a"});
}

TEST_F(Malformed, BadFieldsAndHugeSizes) {
  write_header(R"({"w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}})", 4);
  expect({"tensor w", "not a size"});
  write_header(R"({"w": {"dtype": "F32", "shape": [4], "data_offsets": [8, 4]}})", 8);
  expect({"tensor w", "end before they begin"});
  write_header(R"({"w": {"dtype": "F32", "shape": [4]}})", 16);
  expect({"tensor w", "no \"data_offsets\""});
  // Sizes the file cannot back are refused before anything is allocated.
  write_header(R"({"w": {"dtype": "F32", "shape": [4611686018427387904, 4611686018427387904],
                   "data_offsets": [0, 16]}})", 16);
  expect({"tensor w", "too large"});
  write_header(R"({"w": {"dtype": "F32", "shape": [1099511627776], "data_offsets": [0, 4398046511104]}})", 16);
  expect({"tensor w", "reach past the data area of 16 bytes"});
  write_header(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                   "w": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})", 8);
  expect({"tensor w", "named twice"});
  write_header(R"({"__metadata__": {"format": 3}})", 0);
  expect({"__metadata__.format", "not a string"});
  // Values too deep to print whole (nlohmann's dump() recursed until the stack overflowed) are
  // shown cut short.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  write_header(R"({"w": {"dtype": "F32", "shape": [)" + deep + R"(], "data_offsets": [0, 4]}})", 4);
  expect({"tensor w", "shape holds [[[...]]], not a size"});
  write_header(R"({"w": {"dtype": "F32", "shape": [4611686018427387905, )" + deep + R"(], "data_offsets": [0, 4]}})", 4);
  expect({"tensor w", "shape [4611686018427387905,[[...]]] is too large"});
  write_header(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": )" + deep + "}}", 4);
  expect({"tensor w", "data_offsets is not a pair of byte offsets: [[[...]]]"});
}

// Random truncations and byte flips of a valid file: each must parse or be refused with a
// ModelError (the sanitizer build checks that nothing reads out of bounds).
TEST_F(Malformed, RandomCorruptionIsRefusedOrRead) {
  write_safetensors(file(), {f32_tensor("a", {2, 3}, 0), RawTensor{"b", "BF16", {2}, {1, 2, 3, 4}}});
  std::ifstream in(file(), std::ios::binary);
  const std::vector<char> good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::mt19937 rng(7);
  int refused = 0;
  for (int i = 0; i < 400; ++i) {
    std::vector<char> bytes = good;
    if (i % 2 == 0) {
      bytes.resize(rng() % bytes.size());
    } else {
      for (int k = 0; k < 3; ++k) bytes[rng() % bytes.size()] = static_cast<char>(rng());
    }
    std::ofstream(file(), std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    try {
      SafetensorsFile f(file());
      for (const TensorView& t : f.tensors()) (void)to_f32(t);
    } catch (const ModelError&) {
      ++refused;
    }
  }
  EXPECT_GT(refused, 200);  // every truncation, and most flips, are caught
}

TEST(MalformedShards, DuplicatesAndBadIndex) {
  TempDir dir;
  write_safetensors(dir.path() / "s1.safetensors", {f32_tensor("a", {2}, 0), f32_tensor("b", {2}, 0)});
  write_safetensors(dir.path() / "s2.safetensors", {f32_tensor("b", {2}, 0)});
  write_text(dir.path() / "model.safetensors.index.json", R"({"weight_map": {"a": "s1.safetensors", "b": "s2.safetensors"}})");
  expect_error([&] { Checkpoint ck(dir.path()); }, {"s2.safetensors", "tensor b", "also in", "s1.safetensors"});

  write_safetensors(dir.path() / "s2.safetensors", {f32_tensor("c", {2}, 0)});
  write_text(dir.path() / "model.safetensors.index.json", R"({"weight_map": {"a": "s1.safetensors", "b": "s2.safetensors"}})");
  expect_error([&] { Checkpoint ck(dir.path()); }, {"index.json", "tensor b", "mapped to s2.safetensors"});

  write_text(dir.path() / "model.safetensors.index.json", R"({"weight_map": {"a": "../s1.safetensors"}})");
  expect_error([&] { Checkpoint ck(dir.path()); }, {"index.json", "weight_map.a", "not a file in the folder"});

  write_text(dir.path() / "model.safetensors.index.json", R"({"weight_map": {"a": "s3.safetensors"}})");
  expect_error([&] { Checkpoint ck(dir.path()); }, {"s3.safetensors", "cannot open"});

  std::filesystem::remove(dir.path() / "model.safetensors.index.json");
  expect_error([&] { Checkpoint ck(dir.path()); }, {"neither model.safetensors nor"});
}

// The same failures met through load_hf on a whole tiny checkpoint.
class LoadErrors : public ::testing::Test {
 protected:
  void SetUp() override { model_ = make_tiny({}); }
  void expect_load_error(const std::vector<std::string>& parts) {
    LoadOptions o;
    expect_error([&] { (void)load_hf(dir_.path(), o); }, parts);
  }
  std::filesystem::path file() const { return dir_.path() / "model.safetensors"; }
  TempDir dir_;
  TinyModel model_;
};

TEST_F(LoadErrors, TruncatedCheckpoint) {
  write_checkpoint(model_, dir_.path());
  std::filesystem::resize_file(file(), std::filesystem::file_size(file()) - 100);
  expect_load_error({file().string(), "tensor lm_head.weight", "reach past the data area"});
}

TEST_F(LoadErrors, MissingTensor) {
  std::erase_if(model_.tensors, [](const RawTensor& t) { return t.name == "model.layers.1.mlp.up_proj.weight"; });
  write_checkpoint(model_, dir_.path());
  expect_load_error({file().string(), "tensor model.layers.1.mlp.up_proj.weight", "missing"});
}

TEST_F(LoadErrors, MissingLmHeadWhenUntied) {
  std::erase_if(model_.tensors, [](const RawTensor& t) { return t.name == "lm_head.weight"; });
  write_checkpoint(model_, dir_.path());
  expect_load_error({"tensor lm_head.weight", "missing"});
}

TEST_F(LoadErrors, ShapeDoesNotMatchConfig) {
  model_.config.intermediate_size = 96;  // the tensors keep 128
  write_checkpoint(model_, dir_.path());
  expect_load_error({file().string(), "tensor model.layers.0.mlp.gate_proj.weight", "has shape [128, 64]",
                     "config gives [96, 64]", "intermediate_size"});
}

TEST_F(LoadErrors, HeadDimDoesNotMatchConfig) {
  model_.config.head_dim = 8;
  write_checkpoint(model_, dir_.path());
  expect_load_error({"tensor model.layers.0.self_attn.q_proj.weight", "config gives [32, 64]",
                     "num_attention_heads * head_dim"});
}

TEST_F(LoadErrors, DtypeI8InCheckpoint) {
  for (RawTensor& t : model_.tensors) {
    if (t.name == "model.norm.weight") {
      t.dtype = "I8";
      t.shape = {static_cast<int64_t>(t.bytes.size())};
    }
  }
  write_checkpoint(model_, dir_.path());
  expect_load_error({file().string(), "tensor model.norm.weight", "dtype I8"});
}

TEST_F(LoadErrors, Q4NeedsWholeGroups) {
  write_checkpoint(model_, dir_.path());
  LoadOptions o;
  o.q4_group_size = 128;  // hidden 64 is not a multiple
  expect_error([&] { (void)load_hf(dir_.path(), o); },
               {"tensor model.embed_tokens.weight", "not a multiple of the q4 group size 128"});
}

// LoadOptions::defer_weights: the graph comes first, every matrix's bytes later, the same bytes
// as a load that converts at once. The checkpoint stays open for them (its folder can be gone).
// Controls: until they are made the deferred blobs are empty; a weight that is not finite fails
// when its bytes are made, naming the tensor, not in the graph's build.
TEST(DeferredWeights, SameBytesAsConvertingAtOnce) {
  for (const auto& [spec, format] : {std::pair{tiny_llama_gqa(3), WeightFormat::Q4}, std::pair{tiny_qwen3(4), WeightFormat::Q4},
                                      std::pair{tiny_llama_gqa(3), WeightFormat::F16}}) {
    TempDir dir;
    write_checkpoint(make_tiny(spec), dir.path(), 2);
    LoadOptions o;
    o.weights = format;
    const BuiltModel now = load_hf(dir.path(), o);
    o.defer_weights = true;
    BuiltModel later = load_hf(dir.path(), o);
    std::filesystem::remove_all(dir.path());
    ASSERT_EQ(later.graph.constants.size(), now.graph.constants.size());
    ASSERT_FALSE(later.later.empty());
    std::map<size_t, std::vector<uint8_t>> made;  // by constant
    for (const auto& c : later.later) {
      EXPECT_TRUE(later.weights.blob(later.graph.constants.at(c.constant).data.blob).empty());
      made[c.constant] = c.make();
    }
    for (size_t c = 0; c < now.graph.constants.size(); ++c) {
      const graph::Constant& a = now.graph.constants[c];
      const graph::Constant& b = later.graph.constants[c];
      EXPECT_EQ(a.name, b.name);
      EXPECT_EQ(now.graph.type(a.value), later.graph.type(b.value)) << a.name;
      const auto x = now.weights.bytes(a.data);
      const auto it = made.find(c);
      const std::span<const uint8_t> y = it != made.end() ? std::span<const uint8_t>(it->second) : later.weights.bytes(b.data);
      EXPECT_TRUE(std::equal(x.begin(), x.end(), y.begin(), y.end())) << a.name;
    }
  }
}

TEST(DeferredWeights, AWeightThatIsNotFiniteFailsWhenMade) {
  TinyModel model = make_tiny({});
  for (RawTensor& t : model.tensors) {
    if (t.name != "model.layers.1.mlp.down_proj.weight") continue;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::memcpy(t.bytes.data() + 4 * 5, &nan, 4);  // F32: element 5
  }
  TempDir dir;
  write_checkpoint(model, dir.path());
  LoadOptions o;
  o.defer_weights = true;
  BuiltModel later = load_hf(dir.path(), o);
  expect_error([&] { for (const auto& c : later.later) (void)c.make(); },
               {"tensor model.layers.1.mlp.down_proj.weight", "cannot be quantized", "not finite"});
  o.defer_weights = false;
  expect_error([&] { (void)load_hf(dir.path(), o); }, {"tensor model.layers.1.mlp.down_proj.weight", "not finite"});
}

}  // namespace
}  // namespace wgx::models::testing
