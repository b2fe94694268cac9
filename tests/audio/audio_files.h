// What the audio tests share: a temporary folder, and files written with libsndfile from a
// generated signal.
#pragma once

#include <gtest/gtest.h>
#include <sndfile.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numbers>
#include <string>
#include <vector>

namespace wgx::audio::testing {

// A folder removed with the fixture.
class AudioFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           (std::string("wgx_audio_") + info->test_suite_name() + "_" + info->name() + "_" +
            std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path path(const std::string& name) const { return dir_ / name; }

  // Writes `frames` frames of `channels` channels at `rate`: value(frame, channel). Skips the test
  // when the linked libsndfile cannot write `format`.
  std::filesystem::path write(const std::string& name, int format, int rate, int channels, int64_t frames,
                              const std::function<double(int64_t, int)>& value) const {
    SF_INFO info{};
    info.samplerate = rate;
    info.channels = channels;
    info.format = format;
    if (!sf_format_check(&info)) return {};
    const auto file = path(name);
    SNDFILE* out = sf_open(file.c_str(), SFM_WRITE, &info);
    EXPECT_NE(out, nullptr) << sf_strerror(nullptr);
    if (!out) return {};
    std::vector<float> data(static_cast<size_t>(frames * channels));
    for (int64_t f = 0; f < frames; ++f) {
      for (int c = 0; c < channels; ++c) data[static_cast<size_t>(f * channels + c)] = static_cast<float>(value(f, c));
    }
    EXPECT_EQ(sf_writef_float(out, data.data(), frames), frames);
    sf_close(out);
    return file;
  }

  void write_text(const std::string& name, const std::string& text) const {
    std::ofstream(path(name), std::ios::binary) << text;
  }

  std::vector<uint8_t> read_bytes(const std::filesystem::path& file) const {
    std::ifstream in(file, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

 private:
  std::filesystem::path dir_;
};

inline double tone(double hz, double amplitude, int rate, int64_t frame) {
  return amplitude * std::sin(2.0 * std::numbers::pi * hz * static_cast<double>(frame) / rate);
}

}  // namespace wgx::audio::testing
