// One series for a wait that PostgreSQL renamed between releases, so that a
// fleet mixing releases (or one server across an upgrade) reads as one.
//
// PostgreSQL 19 moved buffer content locks out of LWLock/BufferContent into
// the Buffer class, which took over the BufferPin class byte:
//   buffer_content: 15-18 LWLock/BufferContent; 19 Buffer/BufferShared,
//                   Buffer/BufferShareExclusive, Buffer/BufferExclusive
//   buffer_pin:     15-18 BufferPin/BufferPin;  19 Buffer/BufferCleanup
// docs/exporters.md documents the mapping.
#pragma once

#include <string>

namespace psw_report {

// The release-independent series of a wait event, or nullptr for an event
// no release renamed.
const char *wait_series(const std::string &wait_event_type, const std::string &wait_event);

// Whether the event is a buffer wait under 19's names (true) or under the
// names of 15-18 (false); only meaningful where wait_series() is non-null.
bool wait_series_is_pg19_name(const std::string &wait_event_type);

}  // namespace psw_report
