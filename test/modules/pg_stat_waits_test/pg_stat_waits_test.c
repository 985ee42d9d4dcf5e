/*
 * pg_stat_waits_test: test-only SQL functions for pg_stat_waits. They reach
 * the product through C entry points that pg_stat_waits.so exports for this
 * module (pg_stat_waits_test_*), found with load_external_function so that
 * this library has no link-time dependency on the product's.
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"

PG_MODULE_MAGIC;

typedef int32 (*request_fault_fn) (void);
typedef double (*bench_wrapper_fn) (int mode, int64 n);

static void *
product_symbol(const char *name)
{
	return (void *) load_external_function("$libdir/pg_stat_waits", name, true, NULL);
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
