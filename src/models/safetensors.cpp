#include "models/safetensors.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "format/error.h"
#include "format/mapped_file.h"
#include "graph/storage.h"
#include "models/error.h"
#include "models/json_excerpt.h"

namespace wgx::models {

namespace {

using nlohmann::json;

std::string shape_text(const std::vector<int64_t>& shape) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << ']';
  return os.str();
}

// Products and sizes from a file are checked against this before any arithmetic that could
// overflow: no real tensor comes near it, and 2^62 keeps a further multiply by 4 in range.
constexpr uint64_t kMaxBytes = uint64_t{1} << 62;

class HeaderReader {
 public:
  HeaderReader(std::string file, std::span<const uint8_t> bytes) : file_(std::move(file)), bytes_(bytes) {}

  [[noreturn]] void fail(const std::string& item, const std::string& detail) const {
    throw ModelError(file_, item, detail);
  }

  // Returns the data area and fills `tensors` and `metadata`.
  std::span<const uint8_t> read(std::vector<TensorView>& tensors, std::map<std::string, std::string>& metadata) {
    if (bytes_.size() < 8) {
      fail("", "is " + std::to_string(bytes_.size()) + " bytes, too short for a safetensors header length");
    }
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | bytes_[static_cast<size_t>(i)];
    const uint64_t room = bytes_.size() - 8;
    if (n > room) {
      fail("header", "its length is " + std::to_string(n) + " bytes but the file has only " +
                         std::to_string(room) + " after the length (truncated?)");
    }
    const auto text = std::string_view(reinterpret_cast<const char*>(bytes_.data() + 8), static_cast<size_t>(n));
    const json header = parse(text);
    const std::span<const uint8_t> data = bytes_.subspan(8 + static_cast<size_t>(n));

    for (const auto& [name, entry] : header.items()) {
      if (name == "__metadata__") {
        read_metadata(entry, metadata);
        continue;
      }
      tensors.push_back(read_tensor(name, entry, data));
    }
    check_overlaps(tensors, data.data());
    return data;
  }

 private:
  json parse(std::string_view text) const {
    // nlohmann keeps the last of repeated keys; a callback sees every top-level key, so a tensor
    // named twice is caught rather than one of its entries silently dropped.
    std::set<std::string> seen;
    std::string repeated;
    const json::parser_callback_t on_event = [&](int depth, json::parse_event_t event, json& parsed) {
      if (depth == 1 && event == json::parse_event_t::key && repeated.empty()) {
        const std::string& key = parsed.get_ref<const std::string&>();
        if (!seen.insert(key).second) repeated = key;
      }
      return true;
    };
    json header;
    try {
      header = json::parse(text.begin(), text.end(), on_event);
    } catch (const json::exception& e) {  // parse_error, or out_of_range for a number past a double
      fail("header", std::string("is not valid JSON (") + e.what() + ")");
    }
    if (!header.is_object()) fail("header", "is not a JSON object");
    if (!repeated.empty()) fail("tensor " + repeated, "is named twice in the header");
    return header;
  }

  void read_metadata(const json& entry, std::map<std::string, std::string>& metadata) const {
    if (!entry.is_object()) fail("__metadata__", "is not an object");
    for (const auto& [key, value] : entry.items()) {
      if (!value.is_string()) fail("__metadata__." + key, "is not a string");
      metadata[key] = value.get<std::string>();
    }
  }

  static TensorDType parse_dtype(const std::string& name, const HeaderReader& r, const std::string& item) {
    if (name == "F32") return TensorDType::F32;
    if (name == "F16") return TensorDType::F16;
    if (name == "BF16") return TensorDType::BF16;
    r.fail(item, "has dtype " + name + "; only F32, F16 and BF16 are supported");
  }

  TensorView read_tensor(const std::string& name, const json& entry, std::span<const uint8_t> data) const {
    const std::string item = "tensor " + name;
    if (!entry.is_object()) fail(item, "is not an object");
    auto field = [&](const char* key) -> const json& {
      auto it = entry.find(key);
      if (it == entry.end()) fail(item, std::string("has no \"") + key + "\"");
      return *it;
    };
    TensorView t;
    t.name = name;
    t.file = file_;
    const json& dtype = field("dtype");
    if (!dtype.is_string()) fail(item, "dtype is not a string");
    t.dtype = parse_dtype(dtype.get<std::string>(), *this, item);

    const json& shape = field("shape");
    if (!shape.is_array() || shape.size() > 8) fail(item, "shape is not an array of at most 8 sizes");
    uint64_t numel = 1;
    for (const json& d : shape) {
      if (!d.is_number_unsigned()) fail(item, "shape holds " + json_excerpt(d) + ", not a size");
      const uint64_t v = d.get<uint64_t>();
      if (v > kMaxBytes || (v != 0 && numel > kMaxBytes / v)) fail(item, "shape " + json_excerpt(shape) + " is too large");
      numel *= v;
      t.shape.push_back(static_cast<int64_t>(v));
    }

    const json& offsets = field("data_offsets");
    if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
        !offsets[1].is_number_unsigned()) {
      fail(item, "data_offsets is not a pair of byte offsets: " + json_excerpt(offsets));
    }
    const uint64_t begin = offsets[0].get<uint64_t>();
    const uint64_t end = offsets[1].get<uint64_t>();
    if (begin > end) fail(item, "data_offsets " + json_excerpt(offsets) + " end before they begin");
    if (end > data.size()) {
      fail(item, "data_offsets " + json_excerpt(offsets) + " reach past the data area of " + std::to_string(data.size()) +
                     " bytes (truncated?)");
    }
    const uint64_t want = numel * tensor_dtype_bytes(t.dtype);
    if (end - begin != want) {
      fail(item, std::string(tensor_dtype_name(t.dtype)) + shape_text(t.shape) + " needs " + std::to_string(want) +
                     " bytes but data_offsets " + json_excerpt(offsets) + " span " + std::to_string(end - begin));
    }
    t.data = data.subspan(static_cast<size_t>(begin), static_cast<size_t>(want));
    return t;
  }

  void check_overlaps(std::vector<TensorView>& tensors, const uint8_t* base) const {
    std::sort(tensors.begin(), tensors.end(),
              [](const TensorView& a, const TensorView& b) { return a.data.data() < b.data.data(); });
    const TensorView* last = nullptr;
    for (const TensorView& t : tensors) {
      if (t.data.empty()) continue;
      if (last && t.data.data() < last->data.data() + last->data.size()) {
        fail("tensor " + t.name, "its data (from byte " + std::to_string(t.data.data() - base) +
                                     ") overlaps tensor " + last->name + "'s");
      }
      last = &t;
    }
  }

  std::string file_;
  std::span<const uint8_t> bytes_;
};

json read_json_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ModelError(path.string(), "", "cannot be opened");
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return json::parse(text.str());
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number past a double
    throw ModelError(path.string(), "", std::string("is not valid JSON (") + e.what() + ")");
  }
}

}  // namespace

const char* tensor_dtype_name(TensorDType dtype) {
  switch (dtype) {
    case TensorDType::F32: return "F32";
    case TensorDType::F16: return "F16";
    case TensorDType::BF16: return "BF16";
  }
  return "?";
}

uint32_t tensor_dtype_bytes(TensorDType dtype) { return dtype == TensorDType::F32 ? 4 : 2; }

SafetensorsContents parse_safetensors(std::span<const uint8_t> bytes, const std::string& source) {
  SafetensorsContents contents;
  HeaderReader(source, bytes).read(contents.tensors, contents.metadata);
  return contents;
}

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;  // bounded when the header was read
  return n;
}

SafetensorsFile::SafetensorsFile(const std::filesystem::path& path) : path_(path) {
  try {
    map_ = std::make_unique<format::MappedFile>(path.string());
  } catch (const format::FormatError& e) {
    throw ModelError(path.string(), "", e.detail());
  }
  SafetensorsContents contents = parse_safetensors(map_->bytes(), path.string());
  tensors_ = std::move(contents.tensors);
  metadata_ = std::move(contents.metadata);
}

SafetensorsFile::~SafetensorsFile() = default;

const TensorView* SafetensorsFile::find(std::string_view name) const {
  for (const TensorView& t : tensors_) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

Checkpoint::Checkpoint(const std::filesystem::path& dir) : dir_(dir) {
  const auto index_path = dir / "model.safetensors.index.json";
  const auto single_path = dir / "model.safetensors";
  if (!std::filesystem::exists(index_path)) {
    if (!std::filesystem::exists(single_path)) {
      throw ModelError(dir.string(), "", "has neither model.safetensors nor model.safetensors.index.json");
    }
    source_ = single_path.string();
    add_file(single_path);
    return;
  }
  // Sharded: every tensor the index names must be in the shard it names.
  source_ = index_path.string();
  const json index = read_json_file(index_path);
  if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object()) {
    throw ModelError(source_, "weight_map", "is missing or not an object");
  }
  std::map<std::string, std::string> wanted;  // tensor -> shard
  std::set<std::string> shards;
  for (const auto& [name, shard] : index["weight_map"].items()) {
    if (!shard.is_string()) throw ModelError(source_, "weight_map." + name, "is not a file name");
    const std::string file = shard.get<std::string>();
    // Shards are plain names in this folder: a path could reach files outside it.
    if (file.empty() || file.find('/') != std::string::npos || file.find('\\') != std::string::npos ||
        file == "." || file == "..") {
      throw ModelError(source_, "weight_map." + name, "names \"" + file + "\", not a file in the folder");
    }
    wanted[name] = file;
    shards.insert(file);
  }
  for (const std::string& shard : shards) add_file(dir / shard);
  for (const auto& [name, shard] : wanted) {
    const TensorView* t = find(name);
    if (!t || std::filesystem::path(t->file).filename() != shard) {
      throw ModelError(source_, "tensor " + name, "is mapped to " + shard + ", which does not hold it");
    }
  }
}

void Checkpoint::add_file(const std::filesystem::path& path) {
  files_.push_back(std::make_unique<SafetensorsFile>(path));
  for (const TensorView& t : files_.back()->tensors()) {
    auto [it, added] = tensors_.emplace(t.name, &t);
    if (!added) {
      throw ModelError(path.string(), "tensor " + t.name, "is also in " + it->second->file);
    }
  }
}

const TensorView* Checkpoint::find(std::string_view name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : it->second;
}

const TensorView& Checkpoint::at(std::string_view name) const {
  if (const TensorView* t = find(name)) return *t;
  throw ModelError(source_, "tensor " + std::string(name), "is missing");
}

std::vector<std::string> Checkpoint::names() const {
  std::vector<std::string> out;
  for (const auto& [name, t] : tensors_) out.push_back(name);
  return out;
}

void to_f32(const TensorView& tensor, uint64_t first, uint64_t count, float* out) {
  const uint8_t* p = tensor.data.data();
  // The mapping gives no alignment promise for a tensor, so elements are copied out bytewise.
  switch (tensor.dtype) {
    case TensorDType::F32:
      if (count > 0) std::memcpy(out, p + 4 * first, count * 4);  // safetensors and wgx are little-endian
      break;
    case TensorDType::F16:
    case TensorDType::BF16: {
      const bool f16 = tensor.dtype == TensorDType::F16;
      p += 2 * first;
      for (uint64_t i = 0; i < count; ++i) {
        const auto bits = static_cast<uint16_t>(p[2 * i] | (p[2 * i + 1] << 8));
        out[i] = f16 ? graph::f16_to_f32(bits) : graph::bf16_to_f32(bits);
      }
      break;
    }
  }
}

std::vector<float> to_f32(const TensorView& tensor) {
  std::vector<float> out(tensor.numel());
  to_f32(tensor, 0, out.size(), out.data());
  return out;
}

void expect_shape(const TensorView& tensor, const std::vector<int64_t>& want, const std::string& why) {
  if (tensor.shape == want) return;
  throw ModelError(tensor.file, "tensor " + tensor.name,
                   "has shape " + shape_text(tensor.shape) + " but the config gives " + shape_text(want) + " (" +
                       why + ")");
}

}  // namespace wgx::models
