#include "stat_file.h"

#include <cstring>

namespace psw {
namespace {

const char kMagic[8] = {'P', 'S', 'W', 'S', 'T', 'A', 'T', '\0'};
const char kEnd[8] = {'E', 'N', 'D', '\0', '\0', '\0', '\0', '\0'};

struct SectionHeader {
    char tag[8];
    uint32_t version;
    uint32_t reserved;
    uint64_t length;
};

void append(std::string *buf, const void *p, size_t n) { buf->append(static_cast<const char *>(p), n); }

}  // namespace

StatFileWriter::StatFileWriter() {
    append(&buf_, kMagic, sizeof(kMagic));
    uint32_t v[2] = {kStatFileVersion, 0};
    append(&buf_, v, sizeof(v));
}

void StatFileWriter::section(const char *tag, uint32_t version, const void *data, size_t len) {
    SectionHeader h{};
    std::memcpy(h.tag, tag, strnlen(tag, sizeof(h.tag)));
    h.version = version;
    h.length = len;
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

bool parse_stat_file(const std::string &contents, std::vector<StatSection> *out, std::string *error) {
    out->clear();
    const size_t head = sizeof(kMagic) + 2 * sizeof(uint32_t);
    if (contents.size() < head || std::memcmp(contents.data(), kMagic, sizeof(kMagic)) != 0) {
        *error = "not a pg_stat_waits statistics file";
        return false;
    }
    uint32_t version;
    std::memcpy(&version, contents.data() + sizeof(kMagic), sizeof(version));
    if (version != kStatFileVersion) {
        *error = "statistics file format version " + std::to_string(version) + " is not supported";
        return false;
    }
    size_t pos = head;
    for (;;) {
        SectionHeader h;
        if (contents.size() - pos < sizeof(h)) {
            *error = "statistics file is truncated";
            return false;
        }
        std::memcpy(&h, contents.data() + pos, sizeof(h));
        if (std::memcmp(h.tag, kEnd, sizeof(kEnd)) == 0) {
            if (h.length != pos || pos + sizeof(h) != contents.size()) {
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
        StatSection s;
        s.tag.assign(h.tag, strnlen(h.tag, sizeof(h.tag)));
        s.version = h.version;
        s.data = contents.data() + pos;
        s.len = static_cast<size_t>(h.length);
        out->push_back(s);
        pos += s.len;
    }
}

}  // namespace psw
