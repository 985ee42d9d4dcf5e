// Saving and loading pg_stat/pg_stat_waits.stat as a list of sections (format
// in src/core/stat_file.h). Each feature contributes a section: a tag, a
// version, a save function and a load function.
//
// Why at postmaster exit: by then every process is gone, so the snapshot is
// quiet and complete. The file is removed once loaded, so after a crash
// (which skips the save) the next start begins empty, like pg_stat_statements.
//
// Why every value is checked as it loads: a section that loads is shown as
// the server's statistics and saved again at every shutdown, so a damaged
// one would outlive every restart. A section whose CRC does not match, or
// whose values the server could not have produced, is not loaded at all
// (each load checks everything before it changes shared memory); the log
// says which, why and what was kept, and the file is kept aside as
// pg_stat_waits.stat.bad for inspection instead of being overwritten.
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "persistence.h"
#include "../activity/citus.h"
#include "../timing/timing.h"
#include "../sampling/sampling.h"
#include "../../core/exec_record_v1.h"
#include "../../core/stat_file.h"

namespace psw {

static const char *const kStatFile = "pg_stat/pg_stat_waits.stat";
static const char *const kStatFileTmp = "pg_stat/pg_stat_waits.stat.tmp";
static const char *const kStatFileBad = "pg_stat/pg_stat_waits.stat.bad";

struct PersistSection {
    const char *tag;  // up to 8 characters
    uint32 version;
    void (*save)(StatFileWriter &out);  // nullptr: an older version, read only
    // nullptr when loaded; else why not, and nothing of it was loaded.
    const char *(*load)(const char *data, size_t len);
};

// PostgreSQL's CRC-32C (hardware-accelerated where the CPU has it).
static uint32_t crc32c_step(uint32_t crc, const void *data, size_t len) {
    pg_crc32c c = crc;
    COMP_CRC32C(c, data, len);
    return c;
}

// A sampled wait the sampler can record: CPU (0), the idle marker of older
// files, or an event id under a class this build knows (ids past the class's
// size are possible: a minor release may append events). Unreported is
// exact timing's own class, never sampled.
static bool sampled_wait_ok(uint32 wait) {
    if (wait == 0 || wait == kWaitIdleNoEvent || wait == kWaitRemoteRead) return true;
    const uint8 cls = static_cast<uint8>(wait >> 24);
    return (wait & 0x00FF0000u) == 0 && cls != kClassCPU && cls != kClassUnreported && wait_class_by_id(cls) != nullptr;
}

// BackendType values run from B_INVALID (0) below PSW_BACKEND_NUM_TYPES
// (the last differs by major); -1 is a sample of a process without one.
static bool backend_type_ok(int64 t) { return t >= -1 && t < PSW_BACKEND_NUM_TYPES; }

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

// Whether the profile section, which carries stats_reset, loaded.
static bool stats_reset_loaded = false;

static const char *load_profile(const char *data, size_t len) {
    SavedProfileHeader h;
    if (len < sizeof(h)) return "shorter than its header";
    memcpy(&h, data, sizeof(h));
    if (h.entries > len / sizeof(SavedProfileEntry) || len != sizeof(h) + h.entries * sizeof(SavedProfileEntry))
        return "its length does not match its entries";
    // Every sample recorded since the reset is counted once, in an entry or
    // as dropped (late statement ids move counts, never add them).
    if (h.samples_taken < 0 || h.samples_recorded < 0 || h.profile_dropped < 0 ||
        h.profile_dropped > h.samples_recorded || h.profile_evicted > static_cast<uint64>(PG_INT64_MAX))
        return "its counters are out of range";
    if (h.stats_reset <= 0 || h.stats_reset > GetCurrentTimestamp()) return "its reset time is not in the past";
    uint64 sum = 0;
    for (uint64 i = 0; i < h.entries; i++) {
        SavedProfileEntry e;
        memcpy(&e, data + sizeof(h) + i * sizeof(e), sizeof(e));
        if (e.count == 0 || __builtin_add_overflow(sum, e.count, &sum) || sum > static_cast<uint64>(h.samples_recorded))
            return "its entries count more samples than were recorded";
        if (!sampled_wait_ok(e.key.wait)) return "an entry has an unknown wait event";
        if (!backend_type_ok(e.key.backend_type)) return "an entry has an unknown backend type";
    }
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
    stats_reset_loaded = true;
    shared->samples_taken = h.samples_taken;
    shared->profile_dropped = h.profile_dropped + dropped;
    shared->profile_entries = static_cast<int64>(table.used());
    table.set_evicted(h.profile_evicted);
    sampling->samples_recorded = h.samples_recorded;
    return nullptr;
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

static const char *load_buckets(const char *data, size_t len) {
    MinuteBuckets b = minute_buckets();
    if (len != b.region_bytes()) return "its length does not match this server's minute buckets";
    uint32 nbuckets;
    memcpy(&nbuckets, data, sizeof(nbuckets));  // Header starts with nbuckets
    if (nbuckets != b.nbuckets()) return "its number of minutes does not match this server's";
    // Checked in place (the region is aligned there, the file's copy need
    // not be); nothing reads it before the load ends.
    memcpy(const_cast<void *>(b.region()), data, len);
    const char *why = nullptr;
    if (!b.check(GetCurrentTimestamp() / USECS_PER_MINUTE, sampled_wait_ok, &why)) {
        b.init(nbuckets);
        return why;
    }
    // Minutes without the profile section's stats_reset (it was refused):
    // stats_reset is still this start's, though these minutes are older.
    // The statistics held start at their oldest minute, as far as anything
    // says; the timelines read the minute buckets from there (and would
    // otherwise take the history, which starts at this start, for them).
    const int64 oldest = b.oldest_minute();
    if (!stats_reset_loaded && oldest >= 0 && oldest * USECS_PER_MINUTE < shared->stats_reset)
        shared->stats_reset = oldest * USECS_PER_MINUTE;
    return nullptr;
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

static const char *load_timing(const char *data, size_t len) {
    FILE *f = fmemopen(const_cast<char *>(data), len, "rb");
    if (f == nullptr) return "no memory to read it";
    const char *problem = timing_check(f, wait_index_count(), static_cast<uint32>(PSW_BACKEND_NUM_TYPES));
    if (problem == nullptr) {
        rewind(f);
        if (!timing_load(f)) problem = "the exact tables refused it";
    }
    fclose(f);
    return problem;
}

// ---- slow executions -----------------------------------------------------------
// The ring's records, oldest first, behind a header that refuses a file of
// another record layout or wait catalog (records hold dense wait indexes).
// Version 2 added the Citus global pids; a version 1 section (pg_stat_waits
// 1.2 and before) is converted (exec_record_v1.h).
static constexpr uint32 kExecVersion = 2;
static constexpr uint32 kExecVersionNoGpid = 1;
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

// Saved is the record layout of the section's version (ExecRecord, or
// ExecRecordV1 converted to it).
template <typename Saved>
static void read_exec_record(const char *at, ExecRecord *r) {
    if constexpr (std::is_same<Saved, ExecRecord>::value) {
        memcpy(static_cast<void *>(r), at, sizeof(ExecRecord));
    } else {
        std::unique_ptr<Saved> old(new Saved);
        memcpy(static_cast<void *>(old.get()), at, sizeof(Saved));
        exec_record_from_v1(*old, r);
    }
}

template <typename Saved>
static const char *load_executions_as(const char *data, size_t len) {
    ExecRing *ring = executions_ring();
    SavedExecHeader h;
    if (ring == nullptr) return "slow executions are not kept by this server";
    if (len < sizeof(h)) return "shorter than its header";
    memcpy(&h, data, sizeof(h));
    if (h.record_size != sizeof(Saved) || h.index_count != wait_index_count())
        return "its records do not match this build's layout";
    if (h.records > len / sizeof(Saved) || len != sizeof(h) + h.records * sizeof(Saved))
        return "its length does not match its records";
    std::unique_ptr<ExecRecord> r(new ExecRecord);
    const TimestampTz now = GetCurrentTimestamp();
    for (uint64 i = 0; i < h.records; i++) {
        read_exec_record<Saved>(data + sizeof(h) + i * sizeof(Saved), r.get());
        const char *problem = exec_record_problem(*r, wait_index_count(), now);
        if (problem != nullptr) return problem;
    }
    for (uint64 i = 0; i < h.records; i++) {
        read_exec_record<Saved>(data + sizeof(h) + i * sizeof(Saved), r.get());
        ring->publish(*r);
    }
    return nullptr;
}

static const char *load_executions(const char *data, size_t len) { return load_executions_as<ExecRecord>(data, len); }
static const char *load_executions_v1(const char *data, size_t len) {
    return load_executions_as<ExecRecordV1>(data, len);
}

// The sections, in file order.
static const PersistSection sections[] = {
    {"profile", kProfileVersion, save_profile, load_profile},
    {"minutes", kMinutesVersion, save_buckets, load_buckets},
    {"timing", kTimingVersion, save_timing, load_timing},
    {"execs", kExecVersion, save_executions, load_executions},
    {"execs", kExecVersionNoGpid, nullptr, load_executions_v1},  // read only
};

// Reports a failed write with the OS error and removes what was written.
static void save_failed(const char *what, int err) {
    errno = err;
    elog(LOG, "pg_stat_waits: could not %s \"%s\": %m; the statistics of this run are not saved", what, kStatFileTmp);
    unlink(kStatFileTmp);
}

static void save_all(int code, Datum arg) {
    // A crash (code != 0) or a reinitialization discards the statistics.
    if (code != 0 || shared == nullptr || sampling == nullptr) return;
    std::string contents;
    try {
        StatFileWriter w(crc32c_step);
        for (const PersistSection &s : sections)
            if (s.save != nullptr) s.save(w);
        contents = w.finish();
    } catch (...) {
        contents.clear();
    }
    if (contents.empty()) {
        elog(LOG, "pg_stat_waits: could not build the statistics file (out of memory)");
        return;
    }
    // Temp file, its data on disk, then durable_rename (rename plus fsync of
    // the file and of pg_stat/): after a power loss the file is either the
    // old one or the new one, whole.
    FILE *f = fopen(kStatFileTmp, "wb");
    if (f == nullptr) return save_failed("create", errno);
    int err = 0;
    if (fwrite(contents.data(), 1, contents.size(), f) != contents.size() || fflush(f) != 0) err = errno;
    if (err == 0 && fsync(fileno(f)) != 0) err = errno;
    if (fclose(f) != 0 && err == 0) err = errno;
    if (err != 0) return save_failed("write", err);
    // durable_rename logs its own failure (a directory in the file's place).
    if (durable_rename(kStatFileTmp, kStatFile, LOG) != 0) unlink(kStatFileTmp);
}

// Names of the sections that loaded, for the log ("nothing" when none).
static std::string kept_list(const std::vector<const char *> &kept) {
    std::string s;
    for (const char *t : kept) s += (s.empty() ? "" : ", ") + std::string(t);
    return s.empty() ? "nothing" : s;
}

// Reads the whole file; false (errno set) when it cannot be read.
static bool read_file(std::string *contents) {
    FILE *f = fopen(kStatFile, "rb");
    if (f == nullptr) return false;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0) contents->append(buf, n);
    int err = ferror(f) ? errno : 0;
    fclose(f);
    errno = err;
    return err == 0;
}

// Loads what the file holds and is intact and plausible; returns false
// when something was refused (the file is then kept aside).
static bool load_sections(const std::string &contents) {
    StatFileInfo info;
    std::string error;
    if (!parse_stat_file(contents, crc32c_step, &info, &error)) {
        elog(LOG, "pg_stat_waits: statistics file \"%s\" not loaded: %s; statistics start empty", kStatFile,
             error.c_str());
        return false;
    }
    std::vector<const char *> kept, refused_tags;
    std::vector<std::string> refused;
    for (const StatSection &s : info.sections) {
        const PersistSection *p = nullptr;
        for (const PersistSection &c : sections)
            if (s.tag == c.tag && s.version == c.version) p = &c;
        if (p == nullptr) {  // another build's section: not damage, not ours to read
            elog(LOG, "pg_stat_waits: section \"%.8s\" version %u of \"%s\" is not known to this build; skipped",
                 s.tag.c_str(), s.version, kStatFile);
            continue;
        }
        const char *problem = s.intact ? p->load(s.data, s.len) : "its checksum does not match (the file was changed)";
        if (problem == nullptr) {
            kept.push_back(p->tag);
        } else {
            refused_tags.push_back(p->tag);
            refused.push_back(problem);
        }
    }
    for (size_t i = 0; i < refused.size(); i++)
        elog(LOG, "pg_stat_waits: section \"%s\" of \"%s\" not loaded: %s; loaded: %s", refused_tags[i], kStatFile,
             refused[i].c_str(), kept_list(kept).c_str());
    if (info.format == kStatFileUncheckedVersion)
        elog(LOG, "pg_stat_waits: \"%s\" is of format %u, without checksums: loaded %s after checking its values",
             kStatFile, info.format, kept_list(kept).c_str());
    else
        elog(DEBUG1, "pg_stat_waits: loaded %s from \"%s\"", kept_list(kept).c_str(), kStatFile);
    return refused.empty();
}

static void load_all() {
    struct stat st;
    if (stat(kStatFile, &st) != 0) {
        if (errno != ENOENT) elog(LOG, "pg_stat_waits: could not stat \"%s\": %m", kStatFile);
        return;
    }
    if (!S_ISREG(st.st_mode)) {  // not ours to remove; the save at shutdown will fail too
        elog(LOG,
             "pg_stat_waits: \"%s\" is %s, not a statistics file: nothing loaded, and no statistics can be "
             "saved until it is removed",
             kStatFile, S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
        return;
    }
    bool good = false;
    try {
        std::string contents;
        if (read_file(&contents))
            good = load_sections(contents);
        else
            elog(LOG, "pg_stat_waits: could not read \"%s\": %m; statistics start empty", kStatFile);
    } catch (...) {
        elog(LOG, "pg_stat_waits: out of memory reading \"%s\"; statistics start empty", kStatFile);
    }
    // Removed once read: after a crash the next start must not reload it.
    // A file that was refused in part is kept for inspection, as PostgreSQL
    // keeps a damaged file, instead of being overwritten at shutdown.
    if (good) {
        unlink(kStatFile);
    } else if (durable_rename(kStatFile, kStatFileBad, LOG) == 0) {
        elog(LOG, "pg_stat_waits: kept the refused statistics file as \"%s\"", kStatFileBad);
    } else {
        unlink(kStatFile);
    }
}

// Says at start, not only at shutdown, when the file cannot be created
// (pg_stat/ read-only, a directory in the temp file's place). A full disk
// shows only when the file is written: save_all logs it then.
static void check_writable() {
    int fd = open(kStatFileTmp, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY, S_IRUSR | S_IWUSR);
    if (fd < 0) {
        elog(LOG, "pg_stat_waits: cannot create \"%s\": %m; statistics will not be saved at shutdown", kStatFileTmp);
        return;
    }
    close(fd);
    unlink(kStatFileTmp);
}

static Size persistence_size() { return sizeof(int64); }

static void persistence_init(void *ptr, bool found) {
    if (found) return;
    *static_cast<int64 *>(ptr) = 0;
    load_all();
    check_writable();
    // Only the postmaster saves (at its exit, after every child is gone).
    if (!IsUnderPostmaster) on_shmem_exit(save_all, 0);
}

const ShmemPart persistence_part = {"pg_stat_waits persistence", persistence_size, persistence_init};

}  // namespace psw
