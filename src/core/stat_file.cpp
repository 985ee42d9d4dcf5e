#include "stat_file.h"

#include <cstring>

namespace psw {
namespace {

const char kMagic[8] = {'P', 'S', 'W', 'S', 'T', 'A', 'T', '\0'};
const char kEnd[8] = {'E', 'N', 'D', '\0', '\0', '\0', '\0', '\0'};

struct SectionHeader {
    char tag[8];
    uint32_t version;
    uint32_t crc;  // 0 in format 2
    uint64_t length;
};

void append(std::string *buf, const void *p, size_t n) { buf->append(static_cast<const char *>(p), n); }

// CRC-32C of a section: its header (with the CRC field left out) and payload.
uint32_t section_crc(Crc32cStep step, const SectionHeader &h, const char *data, size_t len) {
    uint32_t c = 0xFFFFFFFFu;
    c = step(c, h.tag, sizeof(h.tag));
    c = step(c, &h.version, sizeof(h.version));
    c = step(c, &h.length, sizeof(h.length));
    c = step(c, data, len);
    return c ^ 0xFFFFFFFFu;
}

}  // namespace

StatFileWriter::StatFileWriter(Crc32cStep crc) : crc_(crc) {
    append(&buf_, kMagic, sizeof(kMagic));
    uint32_t v[2] = {kStatFileVersion, 0};
    append(&buf_, v, sizeof(v));
}

void StatFileWriter::section(const char *tag, uint32_t version, const void *data, size_t len) {
    SectionHeader h{};
    std::memcpy(h.tag, tag, strnlen(tag, sizeof(h.tag)));
    h.version = version;
    h.length = len;
    h.crc = section_crc(crc_, h, static_cast<const char *>(data), len);
    append(&buf_, &h, sizeof(h));
    append(&buf_, data, len);
}

std::string StatFileWriter::finish() {
    SectionHeader h{};
    std::memcpy(h.tag, kEnd, sizeof(h.tag));
    h.length = buf_.size();
    append(&buf_, &h, sizeof(h));
    return std::move(buf_);
}

bool parse_stat_file(const std::string &contents, Crc32cStep crc, StatFileInfo *out, std::string *error) {
    out->sections.clear();
    const size_t head = sizeof(kMagic) + 2 * sizeof(uint32_t);
    if (contents.size() < head || std::memcmp(contents.data(), kMagic, sizeof(kMagic)) != 0) {
        *error = contents.empty() ? "the file is empty" : "not a pg_stat_waits statistics file";
        return false;
    }
    uint32_t v[2];
    std::memcpy(v, contents.data() + sizeof(kMagic), sizeof(v));
    if (v[0] != kStatFileVersion && v[0] != kStatFileUncheckedVersion) {
        *error = "statistics file format version " + std::to_string(v[0]) + " is not supported";
        return false;
    }
    if (v[1] != 0) {
        *error = "statistics file header is damaged";
        return false;
    }
    out->format = v[0];
    const bool checked = v[0] == kStatFileVersion;
    size_t pos = head;
    for (;;) {
        SectionHeader h;
        if (contents.size() - pos < sizeof(h)) {
            *error = "statistics file is truncated";
            return false;
        }
        std::memcpy(&h, contents.data() + pos, sizeof(h));
        if (std::memcmp(h.tag, kEnd, sizeof(kEnd)) == 0) {
            if (h.length != pos || pos + sizeof(h) != contents.size() || h.version != 0 || h.crc != 0) {
                *error = "statistics file trailer does not match its length";
                return false;
            }
            return true;
        }
        pos += sizeof(h);
        if (h.length > contents.size() - pos) {
            *error = "statistics file is truncated";
            return false;
        }
        if (!checked && h.crc != 0) {  // a format 3 file whose version word changed
            *error = "statistics file format version does not match its sections";
            return false;
        }
        StatSection s;
        s.tag.assign(h.tag, strnlen(h.tag, sizeof(h.tag)));
        s.version = h.version;
        s.data = contents.data() + pos;
        s.len = static_cast<size_t>(h.length);
        s.checked = checked;
        s.intact = !checked || section_crc(crc, h, s.data, s.len) == h.crc;
        out->sections.push_back(s);
        pos += s.len;
    }
}

}  // namespace psw
