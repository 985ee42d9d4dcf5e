/*
 * pg_stat_waits_test: test-only SQL functions for pg_stat_waits. They reach
 * the product through C entry points (pg_stat_waits_test_*) that only a test
 * build of pg_stat_waits.so has (make PSW_TEST_HOOKS=1, src/pg/testing/),
 * found with load_external_function so that this library has no link-time
 * dependency on the product's.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "catalog/pg_type.h"

PG_MODULE_MAGIC;

typedef int32 (*request_fault_fn) (void);
typedef double (*bench_wrapper_fn) (int mode, int64 n);
typedef int32 (*blocker_lookup_fn) (int32 on);
typedef void (*blocker_stats_fn) (int64 *lookups, int64 *ns, int64 *hold_ns);
typedef int32 (*blocked_by_fn) (int32 pid, int64 *query_start, int64 *seen_at, int32 *pids, int32 max);
typedef int32 (*idle_memo_fn) (int32 on);
typedef void (*idle_memo_stats_fn) (int64 *last_tick, int64 *total);
typedef int32 (*procno_of_fn) (int32 pid);

static void *
product_symbol(const char *name)
{
	void	   *fn = (void *) load_external_function("$libdir/pg_stat_waits", name, false, NULL);

	if (fn == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("pg_stat_waits has no test entry point \"%s\"", name),
				 errhint("The test module needs a test build of pg_stat_waits: make PSW_TEST_HOOKS=1, as ./run test builds it.")));
	return fn;
}

static void
require_superuser(const char *fn)
{
	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("%s: must be superuser", fn)));
}

PG_FUNCTION_INFO_V1(pg_stat_waits_inject_sampler_fault);
Datum
pg_stat_waits_inject_sampler_fault(PG_FUNCTION_ARGS)
{
	request_fault_fn request;
	int32		pid;

	require_superuser("pg_stat_waits_inject_sampler_fault");
	request = (request_fault_fn) product_symbol("pg_stat_waits_test_request_sampler_fault");
	pid = request();
	if (pid == 0)
		PG_RETURN_NULL();
	PG_RETURN_INT32(pid);
}

/* Index in this table is the mode number the product's benchmark takes. */
static const char *const bench_modes[] = {
	"direct", "off", "on", "clock", "noop_direct", "noop_off", "noop_on"
};

PG_FUNCTION_INFO_V1(pg_stat_waits_bench_wrapper);
Datum
pg_stat_waits_bench_wrapper(PG_FUNCTION_ARGS)
{
	char	   *mode = text_to_cstring(PG_GETARG_TEXT_PP(0));
	int64		n = PG_GETARG_INT64(1);
	int			m = -1;
	bench_wrapper_fn bench;

	require_superuser("pg_stat_waits_bench_wrapper");
	for (int i = 0; i < (int) lengthof(bench_modes); i++)
		if (strcmp(mode, bench_modes[i]) == 0)
			m = i;
	if (m < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("mode must be direct, off, on, clock, noop_direct, noop_off or noop_on, not \"%s\"", mode)));
	if (n < 1 || n > 1000000000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("n must be between 1 and 1e9")));
	bench = (bench_wrapper_fn) product_symbol("pg_stat_waits_test_bench_wrapper_ns");
	PG_RETURN_FLOAT8(bench(m, n));
}

/* Switches the sampler's lock-blocker lookups on or off; returns the previous setting. */
PG_FUNCTION_INFO_V1(pg_stat_waits_blocker_lookup);
Datum
pg_stat_waits_blocker_lookup(PG_FUNCTION_ARGS)
{
	blocker_lookup_fn set;

	require_superuser("pg_stat_waits_blocker_lookup");
	set = (blocker_lookup_fn) product_symbol("pg_stat_waits_test_blocker_lookup");
	PG_RETURN_BOOL(set(PG_GETARG_BOOL(0) ? 1 : 0) != 0);
}

/*
 * Lookups the sampler made since start, the milliseconds they took (waiting
 * for the partition LWLock included) and the milliseconds it held that lock.
 */
PG_FUNCTION_INFO_V1(pg_stat_waits_blocker_stats);
Datum
pg_stat_waits_blocker_stats(PG_FUNCTION_ARGS)
{
	blocker_stats_fn get;
	int64		lookups = 0;
	int64		ns = 0;
	int64		hold_ns = 0;
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	require_superuser("pg_stat_waits_blocker_stats");
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	get = (blocker_stats_fn) product_symbol("pg_stat_waits_test_blocker_stats");
	get(&lookups, &ns, &hold_ns);
	values[0] = Int64GetDatum(lookups);
	values[1] = Float8GetDatum((double) ns / 1e6);
	values[2] = Float8GetDatum((double) hold_ns / 1e6);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * The blocked_by record the sampler keeps in a backend's slot: the blocked
 * statement's query_start, when the sampler first saw these blockers (NULL:
 * never), and the blocker pids. No row when no live process has that pid.
 */
PG_FUNCTION_INFO_V1(pg_stat_waits_blocked_by);
Datum
pg_stat_waits_blocked_by(PG_FUNCTION_ARGS)
{
	blocked_by_fn get;
	int64		query_start = 0;
	int64		seen_at = 0;
	int32		pids[16];
	Datum		elems[16];
	int32		n;
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	require_superuser("pg_stat_waits_blocked_by");
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	get = (blocked_by_fn) product_symbol("pg_stat_waits_test_blocked_by");
	n = get(PG_GETARG_INT32(0), &query_start, &seen_at, pids, lengthof(pids));
	if (n < 0)
		PG_RETURN_NULL();
	if (n > (int32) lengthof(pids))
		n = lengthof(pids);
	if (n > 4)
		n = 4;					/* the record keeps the first four */
	for (int i = 0; i < n; i++)
		elems[i] = Int32GetDatum(pids[i]);
	values[0] = TimestampTzGetDatum(query_start);
	nulls[0] = query_start == 0;
	values[1] = TimestampTzGetDatum(seen_at);
	nulls[1] = seen_at == 0;
	values[2] = PointerGetDatum(construct_array(elems, n, INT4OID, 4, true, TYPALIGN_INT));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* Switches the sampler's idle memo on or off; returns the previous setting. */
PG_FUNCTION_INFO_V1(pg_stat_waits_idle_memo);
Datum
pg_stat_waits_idle_memo(PG_FUNCTION_ARGS)
{
	idle_memo_fn set;

	require_superuser("pg_stat_waits_idle_memo");
	set = (idle_memo_fn) product_symbol("pg_stat_waits_test_idle_memo");
	PG_RETURN_BOOL(set(PG_GETARG_BOOL(0) ? 1 : 0) != 0);
}

/* Processes the idle memo let the sampler skip in its last tick and since start. */
PG_FUNCTION_INFO_V1(pg_stat_waits_idle_memo_stats);
Datum
pg_stat_waits_idle_memo_stats(PG_FUNCTION_ARGS)
{
	idle_memo_stats_fn get;
	int64		last_tick = 0;
	int64		total = 0;
	TupleDesc	tupdesc;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	require_superuser("pg_stat_waits_idle_memo_stats");
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	get = (idle_memo_stats_fn) product_symbol("pg_stat_waits_test_idle_memo_stats");
	get(&last_tick, &total);
	values[0] = Int64GetDatum(last_tick);
	values[1] = Int64GetDatum(total);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* The PGPROC number of live process pid; NULL when there is none. */
PG_FUNCTION_INFO_V1(pg_stat_waits_procno);
Datum
pg_stat_waits_procno(PG_FUNCTION_ARGS)
{
	procno_of_fn get;
	int32		procno;

	require_superuser("pg_stat_waits_procno");
	get = (procno_of_fn) product_symbol("pg_stat_waits_test_procno_of");
	procno = get(PG_GETARG_INT32(0));
	if (procno < 0)
		PG_RETURN_NULL();
	PG_RETURN_INT32(procno);
}
