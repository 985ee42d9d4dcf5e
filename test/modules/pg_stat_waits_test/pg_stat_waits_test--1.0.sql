-- pg_stat_waits_test 1.0: test-only functions; superuser only.
\echo Use "CREATE EXTENSION pg_stat_waits_test" to load this file. \quit

-- Fault testing: the sampler raises an ERROR at its next tick and is
-- restarted by the postmaster. Returns the pid of the sampler asked to fail
-- (NULL when none runs).
CREATE FUNCTION pg_stat_waits_inject_sampler_fault() RETURNS int
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_inject_sampler_fault';
REVOKE ALL ON FUNCTION pg_stat_waits_inject_sampler_fault() FROM PUBLIC;

-- Benchmark of the wrapper: ns per fsync(-1) call, mode 'direct' (libc, not
-- interposed), 'off' (through the wrapper, timing off), 'on' (timed), or
-- 'clock' (ns of the two clock readings alone, per iteration); noop_direct,
-- noop_off, noop_on: the same with a no-op function in place of fsync, which
-- isolates the wrapper's own cost from the syscall's. With 'on' it adds
-- Unreported/fsync calls to pg_stat_waits' counters.
CREATE FUNCTION pg_stat_waits_bench_wrapper(mode text, n bigint) RETURNS float8
    LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_bench_wrapper';
REVOKE ALL ON FUNCTION pg_stat_waits_bench_wrapper(text, bigint) FROM PUBLIC;

-- Blocker lookups of the sampler (the bench compares on and off): switch
-- them (returns the previous setting), and read how many it made since start,
-- the milliseconds they took (waiting for the lock-manager partition LWLock
-- included) and the milliseconds that LWLock was held.
CREATE FUNCTION pg_stat_waits_blocker_lookup(on_ bool) RETURNS bool
    LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_blocker_lookup';
REVOKE ALL ON FUNCTION pg_stat_waits_blocker_lookup(bool) FROM PUBLIC;

CREATE FUNCTION pg_stat_waits_blocker_stats(OUT lookups bigint, OUT lookup_ms float8, OUT hold_ms float8)
    LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_blocker_stats';
REVOKE ALL ON FUNCTION pg_stat_waits_blocker_stats() FROM PUBLIC;

-- The sampler's blocked_by record in the slot of pid: the blocked statement's
-- query_start, when the sampler first saw these blockers (NULL: never), the
-- blocker pids (the first four). NULL when no live process has that pid.
CREATE FUNCTION pg_stat_waits_blocked_by(pid int, OUT query_start timestamptz, OUT seen_at timestamptz,
    OUT blockers int[])
    LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_blocked_by';
REVOKE ALL ON FUNCTION pg_stat_waits_blocked_by(int) FROM PUBLIC;

-- The sampler's idle memo (the bench compares on and off; tests check what
-- it skips): switch it (returns the previous setting), and read how many
-- processes it let the sampler skip in its last tick and since start.
CREATE FUNCTION pg_stat_waits_idle_memo(on_ bool) RETURNS bool
    LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_idle_memo';
REVOKE ALL ON FUNCTION pg_stat_waits_idle_memo(bool) FROM PUBLIC;

CREATE FUNCTION pg_stat_waits_idle_memo_stats(OUT last_tick bigint, OUT total bigint)
    LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_idle_memo_stats';
REVOKE ALL ON FUNCTION pg_stat_waits_idle_memo_stats() FROM PUBLIC;

-- The PGPROC number of live process pid (NULL: none): whether a new backend
-- took the PGPROC a gone one left.
CREATE FUNCTION pg_stat_waits_procno(pid int) RETURNS int
    LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_procno';
REVOKE ALL ON FUNCTION pg_stat_waits_procno(int) FROM PUBLIC;
