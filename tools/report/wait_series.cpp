#include "wait_series.h"

namespace psw_report {

const char *wait_series(const std::string &type, const std::string &event) {
    if (type == "LWLock") return event == "BufferContent" ? "buffer_content" : nullptr;
    if (type == "BufferPin") return event == "BufferPin" ? "buffer_pin" : nullptr;
    if (type == "Buffer") {
        if (event == "BufferShared" || event == "BufferShareExclusive" || event == "BufferExclusive")
            return "buffer_content";
        if (event == "BufferCleanup") return "buffer_pin";
    }
    return nullptr;
}

bool wait_series_is_pg19_name(const std::string &type) { return type == "Buffer"; }

}  // namespace psw_report
