// Saving and loading pg_stat/pg_stat_waits.stat as a list of sections (format
// in src/core/stat_file.h). Each feature contributes a section: a tag, a
// version, a save function and a load function.
//
// Why at postmaster exit: by then every process is gone, so the snapshot is
// quiet and complete. The file is removed once loaded, so after a crash
// (which skips the save) the next start begins empty, like pg_stat_statements.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "persistence.h"
#include "../timing/timing.h"
#include "../sampling/sampling.h"
#include "../../core/stat_file.h"

namespace psw {

static const char *const kStatFile = "pg_stat/pg_stat_waits.stat";
static const char *const kStatFileTmp = "pg_stat/pg_stat_waits.stat.tmp";

struct PersistSection {
    const char *tag;  // up to 8 characters
    uint32 version;
    void (*save)(StatFileWriter &out);
    // Returns false when the payload does not fit this build (it is skipped).
    bool (*load)(const char *data, size_t len);
};

// ---- sampled profile --------------------------------------------------------
struct SavedProfileHeader {
    TimestampTz stats_reset;
    int64 samples_taken;
    int64 profile_dropped;
    int64 samples_recorded;
    uint64 entries;
    uint64 profile_evicted;  // since version 2
};
// 2: the eviction counter.
static constexpr uint32 kProfileVersion = 2;
struct SavedProfileEntry {
    ProfileKey key;
    uint64 count;
};

static void save_profile(StatFileWriter &out) {
    FixedHashTable<ProfileKey> table = profile_table();
    std::string buf(sizeof(SavedProfileHeader), '\0');
    SavedProfileHeader h{};
    h.stats_reset = shared->stats_reset;
    h.samples_taken = shared->samples_taken;
    h.profile_dropped = shared->profile_dropped;
    h.samples_recorded = sampling->samples_recorded;
    h.profile_evicted = table.evicted();
    table.for_each([&](const ProfileKey &k, uint64 c) {
        SavedProfileEntry e;
        memset(&e, 0, sizeof(e));
        e.key = k;
        e.count = c;
        buf.append(reinterpret_cast<const char *>(&e), sizeof(e));
        h.entries++;
    });
    memcpy(&buf[0], &h, sizeof(h));
    out.section("profile", kProfileVersion, buf.data(), buf.size());
}

static bool load_profile(const char *data, size_t len) {
    SavedProfileHeader h;
    if (len < sizeof(h)) return false;
    memcpy(&h, data, sizeof(h));
    if (len != sizeof(h) + h.entries * sizeof(SavedProfileEntry)) return false;
    FixedHashTable<ProfileKey> table = profile_table();
    int64 dropped = 0;
    for (uint64 i = 0; i < h.entries; i++) {
        SavedProfileEntry e;
        memcpy(&e, data + sizeof(h) + i * sizeof(e), sizeof(e));
        if (e.key.wait == kWaitIdleNoEvent) e.key.wait = 0;  // saved before idle-outside-a-wait became CPU
        // A smaller profile_max than before: what does not fit is counted.
        if (!table.add(e.key, e.count)) dropped += static_cast<int64>(e.count);
    }
    shared->stats_reset = h.stats_reset;
    shared->samples_taken = h.samples_taken;
    shared->profile_dropped = h.profile_dropped + dropped;
    shared->profile_entries = static_cast<int64>(table.used());
    table.set_evicted(h.profile_evicted);
    sampling->samples_recorded = h.samples_recorded;
    return true;
}

// ---- minute buckets ---------------------------------------------------------
// Saved as raw memory, the open minute's hash table included: version 2 came
// with a new hash_bytes, under which a version-1 table's keys are not found;
// version 3 with the hash table's usage field, the eviction counter and the
// preallocated sort buffer.
static constexpr uint32 kMinutesVersion = 3;

static void save_buckets(StatFileWriter &out) {
    MinuteBuckets b = minute_buckets();
    out.section("minutes", kMinutesVersion, b.region(), b.region_bytes());
}

static bool load_buckets(const char *data, size_t len) {
    MinuteBuckets b = minute_buckets();
    if (len != b.region_bytes()) return false;
    uint32 nbuckets;
    memcpy(&nbuckets, data, sizeof(nbuckets));  // Header starts with nbuckets
    if (nbuckets != b.nbuckets()) return false;
    memcpy(const_cast<void *>(b.region()), data, len);
    return true;
}

// ---- exact timing ------------------------------------------------------------
// Timing writes a self-describing block to a FILE*; carry it as a section
// through memory streams. 2: keyed by backend type (the block says so too).
// The block's own format also says what its CPU rows hold (timing_stats.cpp:
// 3, CPU time; 2, elapsed time, converted as it loads), so the section stays
// 2 and a file saved before that change still loads.
static constexpr uint32 kTimingVersion = 2;
static void save_timing(StatFileWriter &out) {
    char *buf = nullptr;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == nullptr) return;
    bool ok = timing_save(f);
    ok = fclose(f) == 0 && ok;
    if (ok) out.section("timing", kTimingVersion, buf, len);
    free(buf);
}

static bool load_timing(const char *data, size_t len) {
    FILE *f = fmemopen(const_cast<char *>(data), len, "rb");
    if (f == nullptr) return false;
    bool ok = timing_load(f);
    fclose(f);
    return ok;
}

// ---- slow executions -----------------------------------------------------------
// The ring's records, oldest first, behind a header that refuses a file of
// another record layout or wait catalog (records hold dense wait indexes).
static constexpr uint32 kExecVersion = 1;
struct SavedExecHeader {
    uint32 record_size;
    uint16 index_count;
    uint16 pad;
    uint64 records;
};

static void save_executions(StatFileWriter &out) {
    ExecRing *ring = executions_ring();
    if (ring == nullptr) return;
    SavedExecHeader h{static_cast<uint32>(sizeof(ExecRecord)), wait_index_count(), 0, 0};
    std::string buf(sizeof(h), '\0');
    std::unique_ptr<ExecRecord> scratch(new ExecRecord);
    ring->for_each(scratch.get(), [&](const ExecRecord &r) {
        buf.append(reinterpret_cast<const char *>(&r), sizeof(r));
        h.records++;
    });
    memcpy(&buf[0], &h, sizeof(h));
    out.section("execs", kExecVersion, buf.data(), buf.size());
}

static bool load_executions(const char *data, size_t len) {
    ExecRing *ring = executions_ring();
    SavedExecHeader h;
    if (ring == nullptr || len < sizeof(h)) return false;
    memcpy(&h, data, sizeof(h));
    if (h.record_size != sizeof(ExecRecord) || h.index_count != wait_index_count() ||
        len != sizeof(h) + h.records * sizeof(ExecRecord))
        return false;
    std::unique_ptr<ExecRecord> r(new ExecRecord);
    for (uint64 i = 0; i < h.records; i++) {
        memcpy(static_cast<void *>(r.get()), data + sizeof(h) + i * sizeof(ExecRecord), sizeof(ExecRecord));
        ring->publish(*r);
    }
    return true;
}

// The sections, in file order.
static const PersistSection sections[] = {
    {"profile", kProfileVersion, save_profile, load_profile},
    {"minutes", kMinutesVersion, save_buckets, load_buckets},
    {"timing", kTimingVersion, save_timing, load_timing},
    {"execs", kExecVersion, save_executions, load_executions},
};

static void save_all(int code, Datum arg) {
    // A crash (code != 0) or a reinitialization discards the statistics.
    if (code != 0 || shared == nullptr || sampling == nullptr) return;
    std::string contents;
    try {
        StatFileWriter w;
        for (const PersistSection &s : sections) s.save(w);
        contents = w.finish();
    } catch (...) {
        contents.clear();
    }
    if (contents.empty()) {
        elog(LOG, "pg_stat_waits: could not build the statistics file (out of memory)");
        return;
    }
    FILE *f = fopen(kStatFileTmp, "wb");
    bool ok = f != nullptr && fwrite(contents.data(), 1, contents.size(), f) == contents.size();
    if (f != nullptr) {
        ok = fflush(f) == 0 && ok;
        ok = fsync(fileno(f)) == 0 && ok;
        ok = fclose(f) == 0 && ok;
    }
    if (ok && rename(kStatFileTmp, kStatFile) == 0) return;
    elog(LOG, "pg_stat_waits: could not write \"%s\": %m", kStatFile);
    unlink(kStatFileTmp);
}

static void load_all() {
    FILE *f = fopen(kStatFile, "rb");
    if (f == nullptr) return;
    std::string contents;
    std::string error;
    std::vector<StatSection> found;
    bool parsed = false;
    int loaded = 0, skipped = 0;
    try {
        char buf[65536];
        size_t n;
        while ((n = fread(buf, 1, sizeof(buf), f)) > 0) contents.append(buf, n);
        parsed = parse_stat_file(contents, &found, &error);
        if (parsed) {
            for (const StatSection &s : found) {
                bool used = false;
                for (const PersistSection &p : sections)
                    if (s.tag == p.tag && s.version == p.version) used = p.load(s.data, s.len);
                used ? loaded++ : skipped++;
            }
        }
    } catch (...) {
        parsed = false;
        error = "out of memory";
    }
    fclose(f);
    // Removed once read: after a crash the next start must not reload it.
    unlink(kStatFile);
    if (!parsed)
        elog(LOG, "pg_stat_waits: ignoring \"%s\": %s", kStatFile, error.c_str());
    else
        elog(DEBUG1, "pg_stat_waits: loaded %d sections of \"%s\" (%d skipped)", loaded, kStatFile, skipped);
}

static Size persistence_size() { return sizeof(int64); }

static void persistence_init(void *ptr, bool found) {
    if (found) return;
    *static_cast<int64 *>(ptr) = 0;
    load_all();
    // Only the postmaster saves (at its exit, after every child is gone).
    if (!IsUnderPostmaster) on_shmem_exit(save_all, 0);
}

const ShmemPart persistence_part = {"pg_stat_waits persistence", persistence_size, persistence_init};

}  // namespace psw
