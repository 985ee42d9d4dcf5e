#include "wait_series.h"

#include <map>
#include <utility>

namespace psw_report {

namespace {

// A case-only rename of 17: 16's name, 17's name, both in one class.
// clang-format off
#define PSW_RENAMED_IN_17(series, type, old_name, new_name)                         \
    {series, type, old_name, 17, false, type, type ":" new_name " (any release)"}, \
    {series, type, new_name, 17, true, type, type ":" new_name " (any release)"}
// clang-format on

const std::vector<RenamedWait> kRenamed = {
    // 17 (from 16.15's wait_event.c and 17's wait_event_names.txt).
    PSW_RENAMED_IN_17("autovacuum_main", "Activity", "AutoVacuumMain", "AutovacuumMain"),
    PSW_RENAMED_IN_17("bgwriter_hibernate", "Activity", "BgWriterHibernate", "BgwriterHibernate"),
    PSW_RENAMED_IN_17("bgwriter_main", "Activity", "BgWriterMain", "BgwriterMain"),
    PSW_RENAMED_IN_17("syslogger_main", "Activity", "SysLoggerMain", "SysloggerMain"),
    PSW_RENAMED_IN_17("gss_open_server", "Client", "GSSOpenServer", "GssOpenServer"),
    PSW_RENAMED_IN_17("libpqwalreceiver_connect", "Client", "LibPQWalReceiverConnect", "LibpqwalreceiverConnect"),
    PSW_RENAMED_IN_17("libpqwalreceiver_receive", "Client", "LibPQWalReceiverReceive", "LibpqwalreceiverReceive"),
    PSW_RENAMED_IN_17("ssl_open_server", "Client", "SSLOpenServer", "SslOpenServer"),
    PSW_RENAMED_IN_17("wal_sender_wait_for_wal", "Client", "WalSenderWaitForWAL", "WalSenderWaitForWal"),
    PSW_RENAMED_IN_17("bgworker_shutdown", "IPC", "BgWorkerShutdown", "BgworkerShutdown"),
    PSW_RENAMED_IN_17("bgworker_startup", "IPC", "BgWorkerStartup", "BgworkerStartup"),
    PSW_RENAMED_IN_17("buffer_io", "IPC", "BufferIO", "BufferIo"),
    PSW_RENAMED_IN_17("procarray_group_update", "IPC", "ProcArrayGroupUpdate", "ProcarrayGroupUpdate"),
    PSW_RENAMED_IN_17("basebackup_read", "IO", "BaseBackupRead", "BasebackupRead"),
    PSW_RENAMED_IN_17("basebackup_sync", "IO", "BaseBackupSync", "BasebackupSync"),
    PSW_RENAMED_IN_17("basebackup_write", "IO", "BaseBackupWrite", "BasebackupWrite"),
    PSW_RENAMED_IN_17("buffile_read", "IO", "BufFileRead", "BuffileRead"),
    PSW_RENAMED_IN_17("buffile_write", "IO", "BufFileWrite", "BuffileWrite"),
    PSW_RENAMED_IN_17("buffile_truncate", "IO", "BufFileTruncate", "BuffileTruncate"),
    PSW_RENAMED_IN_17("dsm_allocate", "IO", "DSMAllocate", "DsmAllocate"),
    PSW_RENAMED_IN_17("dsm_fill_zero_write", "IO", "DSMFillZeroWrite", "DsmFillZeroWrite"),
    PSW_RENAMED_IN_17("lock_file_addtodatadir_read", "IO", "LockFileAddToDataDirRead", "LockFileAddtodatadirRead"),
    PSW_RENAMED_IN_17("lock_file_addtodatadir_sync", "IO", "LockFileAddToDataDirSync", "LockFileAddtodatadirSync"),
    PSW_RENAMED_IN_17("lock_file_addtodatadir_write", "IO", "LockFileAddToDataDirWrite", "LockFileAddtodatadirWrite"),
    PSW_RENAMED_IN_17("lock_file_recheckdatadir_read", "IO", "LockFileReCheckDataDirRead",
                      "LockFileRecheckdatadirRead"),
    PSW_RENAMED_IN_17("slru_flush_sync", "IO", "SLRUFlushSync", "SlruFlushSync"),
    PSW_RENAMED_IN_17("slru_read", "IO", "SLRURead", "SlruRead"),
    PSW_RENAMED_IN_17("slru_sync", "IO", "SLRUSync", "SlruSync"),
    PSW_RENAMED_IN_17("slru_write", "IO", "SLRUWrite", "SlruWrite"),
    PSW_RENAMED_IN_17("walsender_timeline_history_read", "IO", "WALSenderTimelineHistoryRead",
                      "WalsenderTimelineHistoryRead"),
    PSW_RENAMED_IN_17("wal_bootstrap_sync", "IO", "WALBootstrapSync", "WalBootstrapSync"),
    PSW_RENAMED_IN_17("wal_bootstrap_write", "IO", "WALBootstrapWrite", "WalBootstrapWrite"),
    PSW_RENAMED_IN_17("wal_copy_read", "IO", "WALCopyRead", "WalCopyRead"),
    PSW_RENAMED_IN_17("wal_copy_sync", "IO", "WALCopySync", "WalCopySync"),
    PSW_RENAMED_IN_17("wal_copy_write", "IO", "WALCopyWrite", "WalCopyWrite"),
    PSW_RENAMED_IN_17("wal_init_sync", "IO", "WALInitSync", "WalInitSync"),
    PSW_RENAMED_IN_17("wal_init_write", "IO", "WALInitWrite", "WalInitWrite"),
    PSW_RENAMED_IN_17("wal_read", "IO", "WALRead", "WalRead"),
    PSW_RENAMED_IN_17("wal_sync", "IO", "WALSync", "WalSync"),
    PSW_RENAMED_IN_17("wal_sync_method_assign", "IO", "WALSyncMethodAssign", "WalSyncMethodAssign"),
    PSW_RENAMED_IN_17("wal_write", "IO", "WALWrite", "WalWrite"),
    // 19's buffer waits.
    {"buffer_content", "LWLock", "BufferContent", 19, false, "Buffer", "Buffer:content lock (any release)"},
    {"buffer_content", "Buffer", "BufferShared", 19, true, "Buffer", "Buffer:content lock (any release)"},
    {"buffer_content", "Buffer", "BufferShareExclusive", 19, true, "Buffer", "Buffer:content lock (any release)"},
    {"buffer_content", "Buffer", "BufferExclusive", 19, true, "Buffer", "Buffer:content lock (any release)"},
    {"buffer_pin", "BufferPin", "BufferPin", 19, false, "Buffer", "Buffer:pin (any release)"},
    {"buffer_pin", "Buffer", "BufferCleanup", 19, true, "Buffer", "Buffer:pin (any release)"},
};

#undef PSW_RENAMED_IN_17

}  // namespace

const std::vector<RenamedWait> &renamed_waits() { return kRenamed; }

const RenamedWait *find_renamed_wait(const std::string &type, const std::string &event) {
    // Looked up for every series of every scrape: an index, built once.
    static const std::map<std::pair<std::string, std::string>, const RenamedWait *> index = [] {
        std::map<std::pair<std::string, std::string>, const RenamedWait *> m;
        for (const auto &r : kRenamed) m[{r.type, r.event}] = &r;
        return m;
    }();
    auto it = index.find({type, event});
    return it == index.end() ? nullptr : it->second;
}

const char *wait_series(const std::string &type, const std::string &event) {
    const RenamedWait *r = find_renamed_wait(type, event);
    return r ? r->series : nullptr;
}

}  // namespace psw_report
