// Citus's global pid (gpid) of the distributed session a backend serves,
// as Citus writes it into the application_name of the connections a node
// opens to the other nodes (PostgreSQL-free, unit-tested).
//
// Why parse a name: a worker's backend that runs a shard query for a
// coordinator's session exits when that session's connection closes, and
// with it the only place the link lives. The sampler keeps the gpid with
// each sample, so the waits stay the distributed session's after the fact.
// Citus's shared memory is private to its version and never read.
#pragma once

#include <cstddef>
#include <cstdint>

namespace psw {

// gpid = node id × 10^10 + pid (Citus's own arithmetic).
constexpr int64_t kCitusGpidNodeFactor = 10000000000LL;

// The gpid in an application_name of at most len bytes (stops at a NUL):
// one of Citus's three prefixes ("citus_internal gpid=", "citus_rebalancer
// gpid=", "citus_run_command gpid="), then decimal digits, read the way
// Citus reads them (its ExtractGlobalPID: digits up to the first
// non-digit). 0 for any other name, no digits, or a value that overflows.
inline int64_t citus_gpid_from_appname(const char *name, size_t len) {
    static const char *const prefixes[] = {"citus_internal gpid=", "citus_rebalancer gpid=",
                                           "citus_run_command gpid="};
    // Every prefix starts with "citus_": one comparison rejects the names
    // of ordinary clients.
    if (len < 6 || name[0] != 'c' || name[1] != 'i' || name[2] != 't' || name[3] != 'u' || name[4] != 's' ||
        name[5] != '_')
        return 0;
    for (const char *prefix : prefixes) {
        size_t i = 6;
        while (prefix[i] != '\0' && i < len && name[i] == prefix[i]) i++;
        if (prefix[i] != '\0') continue;
        int64_t gpid = 0;
        for (; i < len && name[i] >= '0' && name[i] <= '9'; i++) {
            const int64_t d = name[i] - '0';
            if (gpid > (INT64_MAX - d) / 10) return 0;
            gpid = gpid * 10 + d;
        }
        return gpid;
    }
    return 0;
}

}  // namespace psw
