// Reading Hugging Face safetensors checkpoints without copying: a file is memory-mapped and its
// tensors are spans into the mapping. The format: an 8-byte little-endian header length N, N
// bytes of JSON (name -> {dtype, shape, data_offsets}, plus an optional "__metadata__" of
// strings), then the data area the offsets point into.
//
// Nothing in a file is trusted: every count, offset and size is checked against the file before
// it is used, nothing is allocated from a size the file gives, and every rejection is a
// ModelError naming the file and the tensor.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace wgx::format {
class MappedFile;
}

namespace wgx::models {

// The element types wgx loads. Checkpoints of other types (I8, F64, F8_*, ...) are refused.
enum class TensorDType { F32, F16, BF16 };
const char* tensor_dtype_name(TensorDType dtype);  // "F32", as safetensors spells it
uint32_t tensor_dtype_bytes(TensorDType dtype);

struct TensorView {
  std::string name;
  TensorDType dtype = TensorDType::F32;
  std::vector<int64_t> shape;
  std::span<const uint8_t> data;  // exactly numel * element size bytes, inside the mapping
  std::string file;               // the file it lives in, for messages

  int64_t numel() const;
};

// What a safetensors file holds, read from its bytes in memory: the tensors (spans into those
// bytes, in the order of their data) and the header's "__metadata__" strings.
struct SafetensorsContents {
  std::vector<TensorView> tensors;
  std::map<std::string, std::string> metadata;
};

// Validates the header of a whole safetensors file given as bytes, which must outlive the
// result; `source` names it in errors. Throws ModelError, as the file reader does.
SafetensorsContents parse_safetensors(std::span<const uint8_t> bytes, const std::string& source);

class SafetensorsFile {
 public:
  // Maps and validates the whole header; throws ModelError.
  explicit SafetensorsFile(const std::filesystem::path& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // In the order of their data.
  const std::vector<TensorView>& tensors() const { return tensors_; }
  const TensorView* find(std::string_view name) const;
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  std::filesystem::path path_;
  std::unique_ptr<format::MappedFile> map_;
  std::vector<TensorView> tensors_;
  std::map<std::string, std::string> metadata_;
};

// A checkpoint folder: one model.safetensors, or the shards that model.safetensors.index.json
// maps tensor names to (its "weight_map"). A tensor may be named in only one shard.
class Checkpoint {
 public:
  // Throws ModelError when neither file is there or any file is malformed.
  explicit Checkpoint(const std::filesystem::path& dir);

  const std::filesystem::path& dir() const { return dir_; }
  size_t file_count() const { return files_.size(); }
  const TensorView* find(std::string_view name) const;
  // Throws ModelError naming the tensor and where it was looked for.
  const TensorView& at(std::string_view name) const;
  std::vector<std::string> names() const;

 private:
  void add_file(const std::filesystem::path& path);

  std::filesystem::path dir_;
  std::string source_;  // what at() names when a tensor is missing
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, const TensorView*, std::less<>> tensors_;
};

// The elements as f32, converting F16 and BF16 (exact). A model's weights are read a block of
// rows at a time instead (checkpoint_weights).
std::vector<float> to_f32(const TensorView& tensor);
// Elements [first, first + count) of the tensor as f32 into `out`, on the calling thread.
void to_f32(const TensorView& tensor, uint64_t first, uint64_t count, float* out);

// Throws ModelError naming the tensor, its file and `why` (where the expected shape comes from)
// unless the tensor's shape is `want`.
void expect_shape(const TensorView& tensor, const std::vector<int64_t>& want, const std::string& why);

}  // namespace wgx::models
