-- pg_stat_waits 1.0: views and functions over the extension's shared memory.
\echo Use "CREATE EXTENSION pg_stat_waits" to load this file. \quit

CREATE FUNCTION pg_stat_waits_require_preload() RETURNS void
    LANGUAGE C STRICT PARALLEL SAFE
    AS 'MODULE_PATHNAME', 'pg_stat_waits_require_preload';
SELECT pg_stat_waits_require_preload();
REVOKE ALL ON FUNCTION pg_stat_waits_require_preload() FROM PUBLIC;

-- Live per-process state (like pg_stat_activity, without taking its locks).
CREATE FUNCTION pg_stat_waits_activity_internal(
    OUT pid int, OUT leader_pid int, OUT backend_type text, OUT datid oid, OUT usesysid oid,
    OUT state text, OUT wait_event_type text, OUT wait_event text, OUT wait_time float8,
    OUT queryid bigint, OUT top_queryid bigint, OUT query_start timestamptz)
    RETURNS SETOF record
    LANGUAGE C VOLATILE PARALLEL RESTRICTED
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_activity_internal';

CREATE VIEW pg_stat_waits_activity AS
    SELECT * FROM pg_stat_waits_activity_internal();

-- One row about the extension itself.
CREATE FUNCTION pg_stat_waits_status_internal(
    OUT sampler_pid int, OUT sample_period_ms int, OUT samples_taken bigint,
    OUT last_sample_time timestamptz, OUT history_size int, OUT history_used int,
    OUT profile_entries int, OUT profile_max int, OUT profile_dropped bigint, OUT timing bool,
    OUT interposed text[], OUT shmem_bytes bigint, OUT stats_reset timestamptz,
    OUT sampler_lag_ms float8)
    RETURNS SETOF record
    LANGUAGE C VOLATILE PARALLEL RESTRICTED
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_status_internal';

CREATE VIEW pg_stat_waits_status AS
    SELECT * FROM pg_stat_waits_status_internal();

-- Like pg_stat_activity: everyone may read; queryids of other users' rows
-- are hidden inside the functions unless the reader may see them.
GRANT SELECT ON pg_stat_waits_activity, pg_stat_waits_status TO PUBLIC;

-- ===========================================================================
-- Sampling (issue 3): history ring, profile, top, timeline, reset.
-- ===========================================================================

-- Raw samples, oldest first.
CREATE FUNCTION pg_stat_waits_history_internal(
    OUT sample_time timestamptz, OUT pid int, OUT leader_pid int, OUT backend_type text,
    OUT datid oid, OUT usesysid oid, OUT state text, OUT wait_event_type text, OUT wait_event text,
    OUT queryid bigint, OUT top_queryid bigint)
    RETURNS SETOF record
    LANGUAGE C VOLATILE PARALLEL RESTRICTED
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_history_internal';

CREATE VIEW pg_stat_waits_history AS
    SELECT * FROM pg_stat_waits_history_internal();

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
    AS 'MODULE_PATHNAME', 'pg_stat_waits_reset';
REVOKE ALL ON FUNCTION pg_stat_waits_reset() FROM PUBLIC;

GRANT SELECT ON pg_stat_waits_history, pg_stat_waits_profile TO PUBLIC;
