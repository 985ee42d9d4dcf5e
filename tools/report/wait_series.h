// One series for a wait that PostgreSQL renamed between releases, so that a
// fleet mixing releases (or one server across an upgrade) reads as one.
//
// Two renames are bridged (docs/exporters.md lists every name):
//  - 17 generated its wait event names from wait_event_names.txt, camel-casing
//    each enum name: 41 events changed case only (16's IO/WALSync is 17's
//    IO/WalSync, BufFileRead is BuffileRead, ...). Their series is the
//    snake_case of the enum (wal_sync, buffile_read, ...). LWLock and Lock
//    names did not change.
//  - 19 moved buffer content locks out of LWLock/BufferContent into the
//    Buffer class, which took over the BufferPin class byte:
//      buffer_content: 15-18 LWLock/BufferContent; 19 Buffer/BufferShared,
//                      Buffer/BufferShareExclusive, Buffer/BufferExclusive
//      buffer_pin:     15-18 BufferPin/BufferPin;  19 Buffer/BufferCleanup
//
// exporters/postgres_exporter/queries.yaml repeats this table in SQL;
// test/unit/wait_series_test.cpp checks that both agree.
#pragma once

#include <string>
#include <vector>

namespace psw_report {

// One name a release reports for a renamed wait.
struct RenamedWait {
    const char *series;  // the release-independent wait_series value
    const char *type;  // wait_event_type, as the release reports it
    const char *event;  // wait_event, as the release reports it
    int renamed_in;  // the release that renamed it: 17 or 19
    bool new_name;  // the name from renamed_in on (else the one before)
    const char *merged_type;  // report --compare's merged row: its class ...
    const char *merged_key;  // ... and key ("IO:WalSync (any release)")
};

// Every name of every renamed wait, old and new.
const std::vector<RenamedWait> &renamed_waits();

// The entry for a name, or nullptr for an event no release renamed.
const RenamedWait *find_renamed_wait(const std::string &wait_event_type, const std::string &wait_event);

// The release-independent series of a wait event, or nullptr for an event
// no release renamed.
const char *wait_series(const std::string &wait_event_type, const std::string &wait_event);

}  // namespace psw_report
