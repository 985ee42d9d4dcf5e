-- pg_wait_sampling compatibility for pg_stat_waits (optional; not part of the
-- extension). Creates pg_wait_sampling's views and reset function with its
-- exact column names and types, served from pg_stat_waits, so that tools
-- written for pg_wait_sampling (PoWA, pg_profile) work unchanged on a server
-- that runs pg_stat_waits instead.
--
--   psql -d mydb -v ON_ERROR_STOP=1 -f "$(pg_config --sharedir)/extension/pg_wait_sampling_compat.sql"
--
-- Run it after CREATE EXTENSION pg_stat_waits, in each database the tool
-- reads; it is idempotent (run it again after upgrading pg_stat_waits). The
-- objects go into pg_stat_waits' schema. Mapping:
--   pg_wait_sampling_current  <- pg_stat_waits_activity
--   pg_wait_sampling_history  <- pg_stat_waits_history (sample_time -> ts)
--   pg_wait_sampling_profile  <- pg_stat_waits_profile, summed over backend
--                                type, database and user; pid is 0, as
--                                pg_wait_sampling reports with profile_pid = off
--   pg_wait_sampling_reset_profile() -> pg_stat_waits_reset() (which also
--                                resets exact timing and the history)
-- Differences of meaning: a running backend (pg_stat_waits' 'CPU') has NULL
-- event_type/event, as in pg_wait_sampling; a missing queryid is 0; idle
-- backends are sampled only with pg_stat_waits.sample_idle = on.
-- An object whose pg_stat_waits source does not exist in this server's
-- version is skipped with a NOTICE.

DO $compat$
DECLARE
    s text;  -- pg_stat_waits' schema, quoted
    created text[] := '{}';
    skipped text[] := '{}';
BEGIN
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_wait_sampling') THEN
        RAISE EXCEPTION 'pg_wait_sampling is installed in this database; its own objects are already there'
            USING HINT = 'Use pg_wait_sampling itself, or DROP EXTENSION pg_wait_sampling first.';
    END IF;
    SELECT quote_ident(n.nspname) INTO s
      FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_stat_waits';
    IF s IS NULL THEN
        RAISE EXCEPTION 'pg_stat_waits is not installed in this database'
            USING HINT = 'CREATE EXTENSION pg_stat_waits first.';
    END IF;

    IF to_regclass(s || '.pg_stat_waits_activity') IS NOT NULL THEN
        EXECUTE format($v$
            CREATE OR REPLACE VIEW %1$s.pg_wait_sampling_current AS
            SELECT a.pid::int4 AS pid,
                   CASE WHEN a.wait_event_type <> 'CPU' THEN a.wait_event_type END::text AS event_type,
                   CASE WHEN a.wait_event_type <> 'CPU' THEN a.wait_event END::text AS event,
                   coalesce(a.queryid, 0)::int8 AS queryid
              FROM %1$s.pg_stat_waits_activity a$v$, s);
        EXECUTE format('GRANT SELECT ON %s.pg_wait_sampling_current TO PUBLIC', s);
        created := created || 'pg_wait_sampling_current'::text;
    ELSE
        skipped := skipped || 'pg_wait_sampling_current (no pg_stat_waits_activity)'::text;
    END IF;

    IF to_regclass(s || '.pg_stat_waits_history') IS NOT NULL THEN
        EXECUTE format($v$
            CREATE OR REPLACE VIEW %1$s.pg_wait_sampling_history AS
            SELECT h.pid::int4 AS pid,
                   h.sample_time::timestamptz AS ts,
                   CASE WHEN h.wait_event_type <> 'CPU' THEN h.wait_event_type END::text AS event_type,
                   CASE WHEN h.wait_event_type <> 'CPU' THEN h.wait_event END::text AS event,
                   coalesce(h.queryid, 0)::int8 AS queryid
              FROM %1$s.pg_stat_waits_history h$v$, s);
        EXECUTE format('GRANT SELECT ON %s.pg_wait_sampling_history TO PUBLIC', s);
        created := created || 'pg_wait_sampling_history'::text;
    ELSE
        skipped := skipped || 'pg_wait_sampling_history (no pg_stat_waits_history)'::text;
    END IF;

    IF to_regclass(s || '.pg_stat_waits_profile') IS NOT NULL THEN
        EXECUTE format($v$
            CREATE OR REPLACE VIEW %1$s.pg_wait_sampling_profile AS
            SELECT 0::int4 AS pid,
                   CASE WHEN p.wait_event_type <> 'CPU' THEN p.wait_event_type END::text AS event_type,
                   CASE WHEN p.wait_event_type <> 'CPU' THEN p.wait_event END::text AS event,
                   coalesce(p.queryid, 0)::int8 AS queryid,
                   sum(p.samples)::int8 AS count
              FROM %1$s.pg_stat_waits_profile p
             GROUP BY 2, 3, 4$v$, s);
        EXECUTE format('GRANT SELECT ON %s.pg_wait_sampling_profile TO PUBLIC', s);
        created := created || 'pg_wait_sampling_profile'::text;
    ELSE
        skipped := skipped || 'pg_wait_sampling_profile (no pg_stat_waits_profile)'::text;
    END IF;

    IF to_regprocedure(s || '.pg_stat_waits_reset()') IS NOT NULL THEN
        EXECUTE format($f$
            CREATE OR REPLACE FUNCTION %1$s.pg_wait_sampling_reset_profile() RETURNS void
                LANGUAGE sql VOLATILE STRICT
                AS 'SELECT %1$s.pg_stat_waits_reset()'$f$, s);
        -- As in pg_wait_sampling: not for non-superusers (pg_stat_waits_reset
        -- checks its own privilege too).
        EXECUTE format('REVOKE ALL ON FUNCTION %s.pg_wait_sampling_reset_profile() FROM PUBLIC', s);
        created := created || 'pg_wait_sampling_reset_profile()'::text;
    ELSE
        skipped := skipped || 'pg_wait_sampling_reset_profile() (no pg_stat_waits_reset())'::text;
    END IF;

    RAISE NOTICE 'pg_wait_sampling compatibility: created %', array_to_string(created, ', ');
    IF cardinality(skipped) > 0 THEN
        RAISE NOTICE 'not available in this server''s pg_stat_waits, skipped: %', array_to_string(skipped, ', ');
    END IF;
END
$compat$;
