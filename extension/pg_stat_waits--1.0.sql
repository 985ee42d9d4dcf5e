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

-- ---------------------------------------------------------------------------
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
