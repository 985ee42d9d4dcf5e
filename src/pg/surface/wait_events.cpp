// pg_stat_waits_wait_events(): the wait events this server has, in the
// dense order exact timing uses. Names come from PostgreSQL itself (the
// class sizes were measured from it at start), so tests can compare the
// list with the server's own.
#include "../boundary.h"
#include "../wait_names.h"
#include "../shared_state.h"
#include "../../core/wait_catalog.h"

PSW_SQL_FUNCTION(pg_stat_waits_wait_events)

Datum pg_stat_waits_wait_events(PG_FUNCTION_ARGS) {
    return psw::sql_entry("pg_stat_waits_wait_events", [&]() -> Datum {
        InitMaterializedSRF(fcinfo, 0);
        ReturnSetInfo *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
        for (uint16 idx = 0; idx < psw::wait_index_count(); idx++) {
            if (!psw::index_is_listed(idx)) continue;
            const char *type;
            const char *name;
            psw::index_names(idx, &type, &name);
            Datum values[3] = {Int32GetDatum(idx), CStringGetTextDatum(type), CStringGetTextDatum(name)};
            bool nulls[3] = {false, false, false};
            tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
        }
        return static_cast<Datum>(0);
    });
}
