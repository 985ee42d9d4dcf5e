// Format of pg_stat/pg_stat_waits.stat: a versioned header and a list of
// tagged sections, so features (sampled profile, minute buckets, exact timing
// tables) each save and load their own part and a file written by another
// build is rejected as a whole or section by section, never misread.
//
//   "PSWSTAT\0" | u32 format version | u32 reserved
//   repeated: char tag[8] | u32 section version | u32 reserved | u64 length | payload
//   "END\0\0\0\0\0" | u32 0 | u32 0 | u64 total bytes before this trailer
//
// PostgreSQL-free: the boundary does the file I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace psw {

// 2: exact timing keyed by backend type, eviction counters, new table
// layouts. A file of another version is ignored as a whole (and removed).
constexpr uint32_t kStatFileVersion = 2;

class StatFileWriter {
public:
    StatFileWriter();
    void section(const char *tag, uint32_t version, const void *data, size_t len);
    // The complete file contents (adds the trailer).
    std::string finish();

private:
    std::string buf_;
};

struct StatSection {
    std::string tag;
    uint32_t version;
    const char *data;  // points into the parsed buffer
    size_t len;
};

// Parses a whole file; false (and an explanation) when it is not a complete
// file of this format version.
bool parse_stat_file(const std::string &contents, std::vector<StatSection> *out, std::string *error);

}  // namespace psw
