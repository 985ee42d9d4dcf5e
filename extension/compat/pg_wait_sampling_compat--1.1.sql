-- pg_wait_sampling_compat 1.1: pg_wait_sampling 1.1's SQL interface (its views,
-- functions, column names and types, privileges), served from pg_stat_waits,
-- so that tools and queries written for pg_wait_sampling (PoWA, pg_profile)
-- work unchanged on a server that runs pg_stat_waits instead:
--   CREATE EXTENSION pg_wait_sampling_compat;   -- needs pg_stat_waits (CASCADE creates it)
-- As an extension it is dropped as one (DROP EXTENSION pg_wait_sampling_compat),
-- and DROP EXTENSION pg_stat_waits names it as a dependent (CASCADE drops both).
--
-- Mapping (docs/exporters.md has the full table):
--   pg_wait_sampling_get_current(pid), _current   <- pg_stat_waits_activity
--   pg_wait_sampling_get_history(), _history      <- pg_stat_waits_history (sample_time -> ts)
--   pg_wait_sampling_get_profile(), _profile      <- pg_stat_waits_profile summed over backend type,
--                                                    database and user; pid is 0 (profile_pid = off)
--   pg_wait_sampling_reset_profile()              -> pg_stat_waits_reset() (also resets timing and history)
-- A process on the CPU (pg_stat_waits' 'CPU') has NULL event_type/event, as in
-- pg_wait_sampling; a missing queryid is 0. Two pg_wait_sampling settings are
-- honoured here (pg_stat_waits defines them where pg_wait_sampling is not
-- loaded): pg_wait_sampling.sample_cpu = off hides processes that are not
-- waiting; pg_wait_sampling.profile_queries = none | top | all shows queryid 0,
-- the top-level statement's id, or the running statement's id.
\echo Use "CREATE EXTENSION pg_wait_sampling_compat" to load this file. \quit

-- The two settings the functions honour. pg_stat_waits defines them with
-- pg_wait_sampling's values; unset or unknown means pg_wait_sampling's
-- default (sample_cpu on, profile_queries top).
CREATE FUNCTION pg_wait_sampling_compat_setting(name text) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS $f$
    SELECT CASE $1
        WHEN 'sample_cpu' THEN
            CASE WHEN lower(current_setting('pg_wait_sampling.sample_cpu', true))
                      IN ('off', 'false', 'no', '0', 'f', 'n') THEN 'off' ELSE 'on' END
        WHEN 'profile_queries' THEN
            CASE lower(coalesce(current_setting('pg_wait_sampling.profile_queries', true), 'top'))
                WHEN 'none' THEN 'none' WHEN 'off' THEN 'none' WHEN 'false' THEN 'none'
                WHEN 'no' THEN 'none' WHEN '0' THEN 'none'
                WHEN 'all' THEN 'all' ELSE 'top' END
    END
    $f$;

DO $compat$
DECLARE
    s text;  -- pg_stat_waits' schema, quoted: the functions name every object they read
    c text := pg_catalog.quote_ident(pg_catalog.current_schema());  -- this extension's schema
BEGIN
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'pg_wait_sampling') THEN
        RAISE EXCEPTION 'pg_wait_sampling is installed in this database; its own objects are already there'
            USING HINT = 'Use pg_wait_sampling itself, or DROP EXTENSION pg_wait_sampling first.';
    END IF;
    SELECT pg_catalog.quote_ident(n.nspname) INTO STRICT s
      FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
     WHERE e.extname = 'pg_stat_waits';

    -- pid NULL: every process pg_stat_waits lists (those not waiting only with
    -- sample_cpu on); a pid: that process, or an error if there is none, as in
    -- pg_wait_sampling. Its IN and OUT parameters share the name pid, which
    -- PL/pgSQL refuses: the body is this helper, whose IN parameter is unnamed.
    EXECUTE pg_catalog.format($f$
        CREATE FUNCTION pg_wait_sampling_compat_current(
            int4, OUT pid int4, OUT event_type text, OUT event text, OUT queryid int8)
            RETURNS SETOF record
            LANGUAGE plpgsql VOLATILE CALLED ON NULL INPUT
            SET search_path = pg_catalog, pg_temp
            AS $b$
        DECLARE
            sample_cpu bool := %2$s.pg_wait_sampling_compat_setting('sample_cpu') = 'on';
            queries text := %2$s.pg_wait_sampling_compat_setting('profile_queries');
            seen bool := false;
            r record;
        BEGIN
            FOR r IN
                SELECT a.pid::int4 AS a_pid,
                       CASE WHEN a.wait_event_type <> 'CPU' THEN a.wait_event_type END::text AS a_type,
                       CASE WHEN a.wait_event_type <> 'CPU' THEN a.wait_event END::text AS a_event,
                       coalesce(CASE queries WHEN 'all' THEN a.queryid WHEN 'top' THEN a.top_queryid END,
                                0)::int8 AS a_queryid
                  FROM %1$s.pg_stat_waits_activity a
                 WHERE ($1 IS NULL OR a.pid = $1)
            LOOP
                seen := true;
                CONTINUE WHEN $1 IS NULL AND NOT sample_cpu AND r.a_event IS NULL;
                pid := r.a_pid; event_type := r.a_type; event := r.a_event; queryid := r.a_queryid;
                RETURN NEXT;
            END LOOP;
            IF $1 IS NOT NULL AND NOT seen THEN
                RAISE EXCEPTION 'backend with pid=%% not found', $1
                    USING ERRCODE = 'invalid_parameter_value';
            END IF;
        END
        $b$$f$, s, c);
    EXECUTE pg_catalog.format($f$
        CREATE FUNCTION pg_wait_sampling_get_current(
            pid int4, OUT pid int4, OUT event_type text, OUT event text, OUT queryid int8)
            RETURNS SETOF record
            LANGUAGE sql VOLATILE CALLED ON NULL INPUT
            SET search_path = pg_catalog, pg_temp
            AS 'SELECT * FROM %1$s.pg_wait_sampling_compat_current($1)'$f$, c);

    EXECUTE pg_catalog.format($f$
        CREATE FUNCTION pg_wait_sampling_get_history(
            OUT pid int4, OUT ts timestamptz, OUT event_type text, OUT event text, OUT queryid int8)
            RETURNS SETOF record
            LANGUAGE sql VOLATILE STRICT
            SET search_path = pg_catalog, pg_temp
            AS $b$
        SELECT h.pid::int4,
               h.sample_time::timestamptz,
               CASE WHEN h.wait_event_type <> 'CPU' THEN h.wait_event_type END::text,
               CASE WHEN h.wait_event_type <> 'CPU' THEN h.wait_event END::text,
               coalesce(CASE c.queries WHEN 'all' THEN h.queryid WHEN 'top' THEN h.top_queryid END, 0)::int8
          FROM %1$s.pg_stat_waits_history h,
               (SELECT %2$s.pg_wait_sampling_compat_setting('sample_cpu') = 'on' AS sample_cpu,
                       %2$s.pg_wait_sampling_compat_setting('profile_queries') AS queries) c
         WHERE c.sample_cpu OR h.wait_event_type <> 'CPU'
        $b$$f$, s, c);

    -- The profile keeps one id per sample: 'top' and 'all' both show the id
    -- pg_stat_waits attributed (nested ones only with pg_stat_waits.track = 'all').
    EXECUTE pg_catalog.format($f$
        CREATE FUNCTION pg_wait_sampling_get_profile(
            OUT pid int4, OUT event_type text, OUT event text, OUT queryid int8, OUT count int8)
            RETURNS SETOF record
            LANGUAGE sql VOLATILE STRICT
            SET search_path = pg_catalog, pg_temp
            AS $b$
        SELECT 0::int4,
               CASE WHEN p.wait_event_type <> 'CPU' THEN p.wait_event_type END::text,
               CASE WHEN p.wait_event_type <> 'CPU' THEN p.wait_event END::text,
               CASE WHEN c.queries = 'none' THEN 0 ELSE coalesce(p.queryid, 0) END::int8,
               sum(p.samples)::int8
          FROM %1$s.pg_stat_waits_profile p,
               (SELECT %2$s.pg_wait_sampling_compat_setting('sample_cpu') = 'on' AS sample_cpu,
                       %2$s.pg_wait_sampling_compat_setting('profile_queries') AS queries) c
         WHERE c.sample_cpu OR p.wait_event_type <> 'CPU'
         GROUP BY 1, 2, 3, 4
        $b$$f$, s, c);

    EXECUTE pg_catalog.format($f$
        CREATE FUNCTION pg_wait_sampling_reset_profile() RETURNS void
            LANGUAGE sql VOLATILE STRICT
            SET search_path = pg_catalog, pg_temp
            AS 'SELECT %1$s.pg_stat_waits_reset()'$f$, s);
END
$compat$;

CREATE VIEW pg_wait_sampling_current AS
    SELECT * FROM pg_wait_sampling_get_current(NULL::integer);
GRANT SELECT ON pg_wait_sampling_current TO PUBLIC;

CREATE VIEW pg_wait_sampling_history AS
    SELECT * FROM pg_wait_sampling_get_history();
GRANT SELECT ON pg_wait_sampling_history TO PUBLIC;

CREATE VIEW pg_wait_sampling_profile AS
    SELECT * FROM pg_wait_sampling_get_profile();
GRANT SELECT ON pg_wait_sampling_profile TO PUBLIC;

-- As in pg_wait_sampling: not for non-superusers (pg_stat_waits_reset() checks
-- its own privilege too).
REVOKE ALL ON FUNCTION pg_wait_sampling_reset_profile() FROM PUBLIC;
