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
