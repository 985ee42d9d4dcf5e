// The C++/PostgreSQL error boundary (docs/architecture.md, "Boundary rules").
//
// SQL entry points run their body through sql_entry(): a C++ exception is
// caught here and turned into ereport(ERROR) after the try block has ended, so
// no exception crosses a PostgreSQL frame. Bodies may ereport themselves, as
// long as no object with a non-trivial destructor is alive at that point
// (longjmp skips destructors). The same holds for CHECK_FOR_INTERRUPTS(),
// which ereports a cancel or a statement timeout.
#pragma once

#include <exception>
#include <new>

#include "pg.h"

namespace psw {

template <typename Body>
Datum sql_entry(const char *function, Body &&body) {
    char message[256];
    bool out_of_memory = false;
    // ereport only once the catch block has ended: a longjmp out of a
    // handler would leave the exception object and the C++ runtime's
    // caught-exception state behind.
    try {
        return body();
    } catch (const std::bad_alloc &) {
        out_of_memory = true;
    } catch (const std::exception &e) {
        strlcpy(message, e.what(), sizeof(message));
    } catch (...) {
        strlcpy(message, "unknown C++ exception", sizeof(message));
    }
    if (out_of_memory)  // PostgreSQL's own out-of-memory error, as palloc raises it
        ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory"),
                        errdetail("%s could not allocate memory.", function)));
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("%s: %s", function, message)));
    pg_unreachable();
}

// A user-supplied text as an error message quotes it: its first 64 bytes
// (cut at a character boundary) and "..." when it is longer. Why: the
// message goes to the client and into the server log, and PostgreSQL quotes
// a value, not a megabyte of it.
inline const char *quoted_value(const char *s) {
    constexpr int kQuoteMax = 64;
    const int len = static_cast<int>(strnlen(s, kQuoteMax + 1));
    if (len <= kQuoteMax) return s;
    return psprintf("%.*s...", pg_mbcliplen(s, len, kQuoteMax), s);
}

// Readers' loops: whether a pending interrupt (cancel, statement_timeout,
// termination) can be processed now. Loops that hold no C++ object with a
// destructor call CHECK_FOR_INTERRUPTS() directly; loops that do (an
// aggregation in a std::map) stop when this is true, let their objects go,
// and then call CHECK_FOR_INTERRUPTS() (see interruptible()).
// A text column from a C string; NULL for nullptr.
inline Datum text_or_null(const char *s, bool *isnull) {
    *isnull = s == nullptr;
    return s ? CStringGetTextDatum(s) : static_cast<Datum>(0);
}

inline bool interrupt_pending() { return INTERRUPTS_PENDING_CONDITION() && INTERRUPTS_CAN_BE_PROCESSED(); }

// Runs attempt(&interrupted) until it completes: attempt scans with C++
// objects alive, so it must not longjmp; it sets *interrupted and returns
// early when interrupt_pending(). Its objects are gone when it returns, so
// the interrupt is processed here (ereport, normally: cancel, timeout); an
// interrupt that raises no error (a barrier, a config reload) restarts it.
template <typename Attempt>
void interruptible(Attempt &&attempt) {
    for (;;) {
        bool interrupted = false;
        attempt(&interrupted);
        if (!interrupted) return;
        CHECK_FOR_INTERRUPTS();
    }
}

}  // namespace psw
