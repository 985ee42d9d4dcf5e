// The C++/PostgreSQL error boundary (DESIGN.md §5).
//
// SQL entry points run their body through sql_entry(): a C++ exception is
// caught here and turned into ereport(ERROR) after the try block has ended, so
// no exception crosses a PostgreSQL frame. Bodies may ereport themselves, as
// long as no object with a non-trivial destructor is alive at that point
// (longjmp skips destructors).
#pragma once

#include <exception>
#include <new>

#include "pg.h"

namespace psw {

template <typename Body>
Datum sql_entry(const char *function, Body &&body) {
    char message[256];
    try {
        return body();
    } catch (const std::bad_alloc &) {
        strlcpy(message, "out of memory", sizeof(message));
    } catch (const std::exception &e) {
        strlcpy(message, e.what(), sizeof(message));
    } catch (...) {
        strlcpy(message, "unknown C++ exception", sizeof(message));
    }
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("%s: %s", function, message)));
    pg_unreachable();
}

}  // namespace psw
