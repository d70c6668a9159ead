#pragma once
// Writes a .novatrace file (trace_format.h): used by the injection library from CUPTI's buffer
// callbacks, and by the tests to build traces where no recording exists. Header-only so the
// tracer library links nothing but CUPTI. Strings are interned: the first use of a text writes
// its String record. Not thread-safe: the caller serialises.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/trace/injection/trace_format.h"

namespace nova::tracefmt {

class TraceFileWriter {
 public:
  TraceFileWriter() = default;
  ~TraceFileWriter() { close(); }
  TraceFileWriter(const TraceFileWriter&) = delete;
  TraceFileWriter& operator=(const TraceFileWriter&) = delete;

  // Creates (truncates) the file and writes its header. False if it cannot be created.
  bool open(const std::string& path, std::uint32_t pid, std::uint32_t cupti_version,
            std::uint64_t cupti_now_ns) {
    close();
    file_ = std::fopen(path.c_str(), "wb");
    if (!file_) return false;
    FileHeader h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.version = kVersion;
    h.header_size = sizeof(FileHeader);
    h.pid = pid;
    h.cupti_version = cupti_version;
    h.created_unix_ns = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                       std::chrono::system_clock::now().time_since_epoch())
                                                       .count());
    h.created_cupti_ns = cupti_now_ns;
    ok_ = std::fwrite(&h, sizeof h, 1, file_) == 1;
    return ok_;
  }
  bool is_open() const { return file_ != nullptr; }
  bool ok() const { return ok_; }
  std::uint64_t records_written() const { return records_; }

  // The id of a text, writing its String record the first time. 0 is reserved for "no text".
  std::uint32_t intern(std::string_view text) {
    if (text.empty()) return 0;
    auto it = strings_.find(std::string(text));
    if (it != strings_.end()) return it->second;
    std::uint32_t id = static_cast<std::uint32_t>(strings_.size()) + 1;
    strings_.emplace(std::string(text), id);
    StringRecord s{id, static_cast<std::uint32_t>(text.size())};
    write_header(RecordType::String, sizeof s + text.size());
    put(&s, sizeof s);
    put(text.data(), text.size());
    ++records_;
    return id;
  }

  template <typename Payload>
  void write(RecordType type, const Payload& p) {
    write_header(type, sizeof p);
    put(&p, sizeof p);
    ++records_;
  }

  void flush() {
    if (file_) std::fflush(file_);
  }
  void close() {
    if (file_) std::fclose(file_);
    file_ = nullptr;
  }

 private:
  void write_header(RecordType type, std::size_t size) {
    RecordHeader rh{static_cast<std::uint16_t>(type), 0, static_cast<std::uint32_t>(size)};
    put(&rh, sizeof rh);
  }
  void put(const void* data, std::size_t n) {
    if (file_ && n && std::fwrite(data, n, 1, file_) != 1) ok_ = false;
  }

  std::FILE* file_ = nullptr;
  bool ok_ = false;
  std::uint64_t records_ = 0;
  std::unordered_map<std::string, std::uint32_t> strings_;
};

}  // namespace nova::tracefmt
