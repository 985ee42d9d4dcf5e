// Format of pg_stat/pg_stat_waits.stat: a versioned header and a list of
// tagged sections, so features (sampled profile, minute buckets, exact timing
// tables) each save and load their own part and a file written by another
// build is rejected as a whole or section by section, never misread.
//
//   "PSWSTAT\0" | u32 format version | u32 reserved (0)
//   repeated: char tag[8] | u32 section version | u32 CRC-32C | u64 length | payload
//   "END\0\0\0\0\0" | u32 0 | u32 0 | u64 total bytes before this trailer
//
// Why a checksum per section: the file outlives the server that wrote it
// (disk, backup tools, a hand with an editor), and a section whose bytes
// changed would otherwise load as plausible-looking statistics and be saved
// again at every shutdown. Per section, so one damaged part costs only that
// part. The CRC covers the tag, the section version, the length and the
// payload. Format 2 had the same layout with 0 in place of the CRC; such a
// file is still read (its sections unchecked), once: the next save writes 3.
//
// PostgreSQL-free: the boundary does the file I/O and hands in PostgreSQL's
// CRC-32C step (pg_comp_crc32c), the unit tests a plain implementation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace psw {

// 3: a CRC-32C per section. 2: exact timing keyed by backend type, eviction
// counters, new table layouts. A file of another version is ignored as a
// whole.
constexpr uint32_t kStatFileVersion = 3;
constexpr uint32_t kStatFileUncheckedVersion = 2;

// One step of CRC-32C: crc updated with len bytes (no initial or final
// inversion; the caller of the step does those, as PostgreSQL's
// INIT_CRC32C / COMP_CRC32C / FIN_CRC32C do).
using Crc32cStep = uint32_t (*)(uint32_t crc, const void *data, size_t len);

class StatFileWriter {
public:
    explicit StatFileWriter(Crc32cStep crc);
    void section(const char *tag, uint32_t version, const void *data, size_t len);
    // The complete file contents (adds the trailer).
    std::string finish();

private:
    Crc32cStep crc_;
    std::string buf_;
};

struct StatSection {
    std::string tag;
    uint32_t version;
    const char *data;  // points into the parsed buffer
    size_t len;
    // Whether the section's CRC matched; a file of format 2 has none, and
    // its sections are unchecked (checked false, intact true).
    bool checked;
    bool intact;
};

struct StatFileInfo {
    uint32_t format;  // kStatFileVersion or kStatFileUncheckedVersion
    std::vector<StatSection> sections;
};

// Parses a whole file; false (and an explanation) when it is not a complete
// file of a supported format version. A section whose CRC does not match is
// returned with intact false: the caller decides, section by section.
bool parse_stat_file(const std::string &contents, Crc32cStep crc, StatFileInfo *out, std::string *error);

}  // namespace psw
