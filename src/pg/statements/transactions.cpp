// Where statements end: the transaction callbacks (a statement's commit,
// an error's abort, a savepoint's), and, with exact timing, the backend's
// wait for its client and its sends to it (statements.h).
#include "internal.h"

namespace psw {

bool in_top_utility = false;

// Tracker mode's part of statements_client_read() below: a block's
// statement ends there too (StatementTracker::client_wait()).
__attribute__((noinline, cold)) static void tracker_client_wait() {
    if (ActivePortal == nullptr && my_slot != nullptr) tracker.client_wait();
}

// Waiting for the client with no portal running: whatever the open statement
// was doing is done. Inside a transaction block an extended-protocol
// statement's execution has ended by now, yet its portal is dropped only at
// the next Bind or at commit: ending it here keeps the client's think time
// out of it. (A portal suspended at an Execute's row limit ends here too;
// the next Execute resumes it as a new stretch of the same id, and its one
// call comes when the portal is dropped.)
void statements_client_read() {
    if (mode != kModeServer) {
        if (mode == kModeTracker) tracker_client_wait();
        return;
    }
    if (!server_timed || ActivePortal != nullptr) return;
    in_top_utility = false;
    timer.end();
}

// Sending to the client between messages (no message's text, no portal
// running) inside a transaction block: the ReadyForQuery of a Sync, so the
// block's extended-protocol statement is over, although its portal waits
// for the next Bind. A pipelining client's next message may already be
// there, and then the backend never waits for the client in between. (An
// autocommit statement's commit may send a deferred trigger's notice from
// the same place: not in a block, and its statement goes on.)
void statements_client_send() {
    if (debug_query_string == nullptr && IsTransactionBlock()) statements_client_read();
}

// The main loop ended the transaction or a client savepoint's: every phase
// is over (an error may have skipped the flags' resets).
void timed_over() {
    in_top_utility = false;
    timer.end();  // (which tests for an open statement itself)
}

// A transaction ended. The main loop commits or aborts a client statement's
// transaction only after its portal has stopped; a transaction that ends
// while a portal runs belongs to the running statement (CREATE INDEX
// CONCURRENTLY, VACUUM, a procedure's COMMIT/ROLLBACK), which goes on.
// Registered when the tracker is first asked for; the end of a client
// statement is also where a backend changes mode.
__attribute__((noinline)) static void xact_callback_slow(bool aborted) {
    if (!shared) return;
    const bool in_portal = ActivePortal != nullptr;
    if (mode == kModeTracker && my_slot != nullptr)
        tracker.transaction_end(aborted, in_portal, aborted && !in_portal && IsTransactionBlock());
    else if (mode == kModeServer && !in_portal)
        timed_over();
    // A client backend between statements: no phase runs. Tracker mode with
    // a setting still asking for it (every timed statement) stops here.
    // So does server mode while nothing asks for the tracker (client
    // backends only reach server mode; their status entry stays).
    if (in_portal || (mode == kModeTracker && guc_track == kTrackAll) ||
        (mode == kModeServer && guc_track != kTrackAll && pgstat_track_activities))
        return;
    bool change = mode == kModeTracker ? !tracker_needed() : mode == kModeServer && tracker_needed();
    if (change && client_backend()) {
        settle_mode();
        if (mode == kModeTracker) {
            // Idle (or idle in an aborted block) until the next statement.
            bool aborted_block = aborted && IsTransactionBlock();
            tracker.transaction_end(aborted, false, aborted_block);
        }
    }
}

// A transaction the main loop ended, in server mode with nothing asking for
// the tracker (so no mode change is due): it ends the timed statement.
static inline bool ends_server_statement() {
    return server_no_tracker && ActivePortal == nullptr && pgstat_track_activities;
}

// The path every timed statement takes (timed server mode: an autocommit
// statement's commit) is tested first and ends in a tail call; everything
// else, and the mode change, is out of line.
void xact_callback(XactEvent event, void *) {
    // Every transaction passes here twice: its PRE_COMMIT ends nothing.
    if (event == XACT_EVENT_PRE_COMMIT) return;
    if (__builtin_expect(event == XACT_EVENT_COMMIT, 1) && ends_server_statement()) return timed_over();
    bool aborted;
    switch (event) {
        case XACT_EVENT_COMMIT:
        case XACT_EVENT_PARALLEL_COMMIT:
        case XACT_EVENT_PREPARE:
        case XACT_EVENT_PARALLEL_ABORT:
            aborted = false;
            break;
        case XACT_EVENT_ABORT:
            aborted = true;
            break;
        default:
            return;  // the PRE_ events: nothing ends there
    }
    if (ends_server_statement()) return timed_over();
    xact_callback_slow(aborted);
}

// A PL/pgSQL exception block runs in a subtransaction; the main loop aborts
// a client savepoint's subtransaction with no portal active, after it has
// cleared debug_query_string (PostgresMain's error recovery, every major).
// No portal is active either while a statement is planned, where a caught
// error in a function folded to a constant aborts a subtransaction too, the
// statement's text still current. Installed with the tracker or with timing.
void subxact_callback(SubXactEvent event, SubTransactionId, SubTransactionId, void *) {
    if (!shared) return;
    if (mode == kModeServer) {
        // Timed server mode: an error in a client's savepoint ended the statement.
        if (event == SUBXACT_EVENT_ABORT_SUB && ActivePortal == nullptr && debug_query_string == nullptr)
            timed_over();
        return;
    }
    if (mode != kModeTracker) return;
    if (event == SUBXACT_EVENT_START_SUB) {
        tracker.subtransaction_start(GetCurrentTransactionNestLevel());
    } else if (event == SUBXACT_EVENT_ABORT_SUB && my_slot != nullptr) {
        // Caught inside a portal, or inside a statement's planning (a phase
        // open, the text current); a client's ROLLBACK TO runs at level 0.
        bool caught = ActivePortal != nullptr || (debug_query_string != nullptr && tracker.level > 0);
        tracker.subtransaction_abort(GetCurrentTransactionNestLevel(), caught);
    }
}
}  // namespace psw
