-- pg_stat_waits: views and functions over the extension's shared memory.
-- The one source of the current version's install script: `make` copies it
-- to sql/pg_stat_waits--<default_version>.sql (pg_stat_waits.control). A
-- change here is a new version: the same change goes into the upgrade step
-- extension/pg_stat_waits--<previous>--<new>.sql, and test/t/040_upgrade.pl
-- compares what the step makes of the older versions with this file's
-- fresh install, object by object (CONTRIBUTING.md, "Versions").
\echo Use "CREATE EXTENSION pg_stat_waits" to load this file. \quit

CREATE FUNCTION pg_stat_waits_require_preload() RETURNS void
    LANGUAGE C STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_require_preload';
SELECT pg_stat_waits_require_preload();
REVOKE ALL ON FUNCTION pg_stat_waits_require_preload() FROM PUBLIC;

-- Live per-process state (like pg_stat_activity, without taking its locks).
-- gpid: where Citus is preloaded, the global pid of the distributed session
-- a backend serves (from Citus's application_name), else NULL.
CREATE FUNCTION pg_stat_waits_activity_internal(
    OUT pid int, OUT leader_pid int, OUT backend_type text, OUT datid oid, OUT usesysid oid,
    OUT state text, OUT wait_event_type text, OUT wait_event text, OUT wait_time float8,
    OUT queryid bigint, OUT top_queryid bigint, OUT query_start timestamptz, OUT blockers int[],
    OUT gpid bigint)
    RETURNS SETOF record
    LANGUAGE C VOLATILE PARALLEL RESTRICTED
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_activity_internal';

CREATE VIEW pg_stat_waits_activity AS
    SELECT * FROM pg_stat_waits_activity_internal();

-- One row about the extension itself. The *_evicted counters say how many
-- entries each table let go (least used first) to keep room for new keys:
-- profile keys, minute-bucket keys folded into their "other queryids" row,
-- exact per-query rows; queries_dropped counts per-query flushes that found
-- no room at all. cpu_count is the number of CPUs the server may run on: the
-- line that average active sessions are read against (a load above it with
-- CPU on top means the CPUs are saturated), reported by the server so a
-- remote client need not guess it.
CREATE FUNCTION pg_stat_waits_status_internal(
    OUT sampler_pid int, OUT sample_period_ms int, OUT samples_taken bigint,
    OUT last_sample_time timestamptz, OUT history_size int, OUT history_used int,
    OUT profile_entries int, OUT profile_max int, OUT profile_dropped bigint, OUT timing bool,
    OUT interposed text[], OUT shmem_bytes bigint, OUT stats_reset timestamptz,
    OUT sampler_lag_ms float8, OUT profile_evicted bigint, OUT buckets_evicted bigint,
    OUT queries_evicted bigint, OUT queries_dropped bigint, OUT cpu_count int)
    RETURNS SETOF record
    LANGUAGE C VOLATILE PARALLEL RESTRICTED
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_status_internal';

CREATE VIEW pg_stat_waits_status AS
    SELECT * FROM pg_stat_waits_status_internal();

-- The wait events this build knows (names from the server), in the order
-- exact timing keeps them; 'CPU' and 'Unreported' rows are pg_stat_waits' own.
CREATE FUNCTION pg_stat_waits_wait_events(
    OUT event_index int, OUT wait_event_type text, OUT wait_event text)
    RETURNS SETOF record
    LANGUAGE C STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_wait_events';

-- Like pg_stat_activity: everyone may read; queryids of other users' rows
-- are hidden inside the functions unless the reader may see them.
GRANT SELECT ON pg_stat_waits_activity, pg_stat_waits_status TO PUBLIC;

-- ---------------------------------------------------------------------------
-- Exact timing (pg_stat_waits.timing): wait events and queries, timed.
-- Times in milliseconds. Rows appear once some process ran with timing on.
-- One row per backend type and wait event (PostgreSQL 18's io workers'
-- reads show under backend_type 'io worker', not under the queries').
CREATE FUNCTION pg_stat_waits_internal(
    OUT wait_event_type text, OUT wait_event text, OUT calls bigint,
    OUT total_time float8, OUT mean_time float8, OUT max_time float8, OUT backend_type text)
    RETURNS SETOF record
    LANGUAGE C VOLATILE PARALLEL RESTRICTED
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_internal';

CREATE VIEW pg_stat_waits AS
    SELECT * FROM pg_stat_waits_internal();

-- Per statement (queryid, database, user): time in each wait event, and a
-- 'CPU' row whose calls are the statements timed and whose total_time is
-- their elapsed time minus those waits.
CREATE FUNCTION pg_stat_waits_queries_internal(
    OUT queryid bigint, OUT datid oid, OUT usesysid oid, OUT wait_event_type text,
    OUT wait_event text, OUT calls bigint, OUT total_time float8, OUT backend_type text)
    RETURNS SETOF record
    LANGUAGE C VOLATILE PARALLEL RESTRICTED
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_queries_internal';

CREATE VIEW pg_stat_waits_queries AS
    SELECT * FROM pg_stat_waits_queries_internal();

-- log2 histogram of one wait event's durations (all backend types together):
-- every bucket, in order; the last one is open-ended (upper_ms = Infinity).
-- Unknown names are an error.
CREATE FUNCTION pg_stat_waits_histogram(
    wait_event_type text, wait_event text,
    OUT lower_ms float8, OUT upper_ms float8, OUT count bigint)
    RETURNS SETOF record
    LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_histogram';

-- Fill level of the per-query table (capacity = 2 x profile_max, rounded up
-- to a power of two); dropped counts flushes that found no free entry;
-- clock is what times the calls: 'tsc' (RDTSC, calibrated) or 'clock_gettime'.
CREATE FUNCTION pg_stat_waits_timing_info(
    OUT query_entries int, OUT query_max int, OUT query_dropped bigint, OUT clock text)
    RETURNS record
    LANGUAGE C VOLATILE PARALLEL RESTRICTED
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_timing_info';

GRANT SELECT ON pg_stat_waits, pg_stat_waits_queries TO PUBLIC;

-- Reports: psql-friendly bars.
-- pg_stat_waits_bar(0.37) = '███████▍' : a bar of `width` cells drawn with
-- block characters in eighths of a cell, for a fraction between 0 and 1, e.g.
--   SELECT *, pg_stat_waits_bar(pct / 100) FROM pg_stat_waits_top('5 min');
-- A fraction outside 0..1 is an error (a bar wider than its column would
-- lie about the proportion); NULL gives NULL.
CREATE FUNCTION pg_stat_waits_bar(fraction float8, width int DEFAULT 20) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    eighths int;
BEGIN
    IF width < 1 OR width > 1000 THEN
        RAISE EXCEPTION 'pg_stat_waits_bar: width must be between 1 and 1000, not %', width
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- 1 + 1e-9 lets pct / 100 of a 100 % row through despite rounding.
    IF fraction = 'NaN'::float8 OR fraction < 0 OR fraction > 1 + 1e-9 THEN
        RAISE EXCEPTION 'pg_stat_waits_bar: fraction must be between 0 and 1, not %', fraction
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    eighths := round(least(fraction, 1) * width * 8)::int;
    RETURN repeat('█', eighths / 8)
        || (ARRAY['', '▏', '▎', '▍', '▌', '▋', '▊', '▉'])[eighths % 8 + 1];
END
$$;
GRANT EXECUTE ON FUNCTION pg_stat_waits_bar(float8, int) TO PUBLIC;

-- ===========================================================================
-- Sampling: history ring, profile, top, timeline, reset.
-- ===========================================================================

-- Raw samples, oldest first. query_start tells one execution's samples
-- from the next run's; blockers and blocker_details name who held the lock
-- of a sample in a Lock wait; gpid the Citus distributed session the process
-- served (NULL: none, or no Citus).
CREATE FUNCTION pg_stat_waits_history_internal(
    OUT sample_time timestamptz, OUT pid int, OUT leader_pid int, OUT backend_type text,
    OUT datid oid, OUT usesysid oid, OUT state text, OUT wait_event_type text, OUT wait_event text,
    OUT queryid bigint, OUT top_queryid bigint, OUT query_start timestamptz, OUT blockers int[],
    OUT blocker_details jsonb, OUT gpid bigint)
    RETURNS SETOF record
    LANGUAGE C VOLATILE PARALLEL RESTRICTED
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_history_internal';

CREATE VIEW pg_stat_waits_history AS
    SELECT * FROM pg_stat_waits_history_internal();

-- The sampled profile of one execution (pid, query_start) still in the history.
CREATE FUNCTION pg_stat_waits_execution_profile(pid int, query_start timestamptz,
    OUT wait_event_type text, OUT wait_event text, OUT samples bigint, OUT est_time float8)
    RETURNS SETOF record
    LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL RESTRICTED
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_execution_profile';

-- Samples since reset by (backend type, database, user, query, wait event).
CREATE FUNCTION pg_stat_waits_profile_internal(
    OUT backend_type text, OUT datid oid, OUT usesysid oid, OUT queryid bigint,
    OUT wait_event_type text, OUT wait_event text, OUT samples bigint, OUT est_time float8)
    RETURNS SETOF record
    LANGUAGE C VOLATILE PARALLEL RESTRICTED
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_profile_internal';

CREATE VIEW pg_stat_waits_profile AS
    SELECT * FROM pg_stat_waits_profile_internal();

CREATE FUNCTION pg_stat_waits_top(since interval DEFAULT '5 min', n int DEFAULT 10,
    OUT wait_event_type text, OUT wait_event text, OUT samples bigint, OUT pct float8)
    RETURNS SETOF record
    LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_top';

CREATE FUNCTION pg_stat_waits_timeline(since interval DEFAULT '1 hour', bucket interval DEFAULT '1 min',
    OUT bucket_start timestamptz, OUT wait_event_type text, OUT wait_event text, OUT samples bigint,
    OUT avg_active float8)
    RETURNS SETOF record
    LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_timeline';

-- Resets every feature's statistics (sampled and, when present, exact).
CREATE FUNCTION pg_stat_waits_reset() RETURNS void
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_reset';
REVOKE ALL ON FUNCTION pg_stat_waits_reset() FROM PUBLIC;

GRANT SELECT ON pg_stat_waits_history, pg_stat_waits_profile TO PUBLIC;

-- Slow executions: the last 1000 top-level runs (exact timing on) that
-- reached pg_stat_waits.capture_min_duration, oldest first. waits is a jsonb
-- array of {wait_event_type, wait_event, calls, time_ms}, heaviest first, at
-- most 8 events and one more row ('Other', 'N other events') summing the
-- rest; blockers a jsonb array of {pid, state, wait_event_type, wait_event,
-- queryid, gpid}, the lock blockers the sampler saw during the run. query and
-- queryid are NULL on other users' rows, as in pg_stat_activity. gpid: the
-- Citus distributed session the run served (NULL: none, or no Citus).
CREATE FUNCTION pg_stat_waits_executions_internal(
    OUT started timestamptz, OUT ended timestamptz, OUT pid int, OUT datid oid, OUT usesysid oid,
    OUT queryid bigint, OUT query text, OUT elapsed float8, OUT cpu float8, OUT waits jsonb,
    OUT blockers jsonb, OUT gpid bigint)
    RETURNS SETOF record
    LANGUAGE C VOLATILE PARALLEL RESTRICTED
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_executions_internal';

CREATE VIEW pg_stat_waits_executions AS
    SELECT * FROM pg_stat_waits_executions_internal();
GRANT SELECT ON pg_stat_waits_executions TO PUBLIC;
