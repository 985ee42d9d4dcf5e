-- pg_wait_sampling_compat beyond pg_wait_sampling's own tests: its objects and
-- privileges, what the functions return, the pg_wait_sampling.* settings, and
-- dropping either extension.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_stat_waits;
RESET client_min_messages;
CREATE EXTENSION pg_wait_sampling_compat;

-- pg_wait_sampling 1.1's functions, with its signatures and strictness.
SELECT p.proname, pg_get_function_arguments(p.oid) AS arguments, p.proisstrict, p.provolatile, p.proretset
  FROM pg_proc p
 WHERE p.proname IN ('pg_wait_sampling_get_current', 'pg_wait_sampling_get_history',
                     'pg_wait_sampling_get_profile', 'pg_wait_sampling_reset_profile')
 ORDER BY 1;
-- Everything the extension owns (dropped with it). PostgreSQL 18 also
-- records the views' row types as members; they go with their views.
SELECT pg_describe_object(d.classid, d.objid, 0) AS member
  FROM pg_depend d JOIN pg_extension e ON d.refobjid = e.oid AND d.refclassid = 'pg_extension'::regclass
 WHERE e.extname = 'pg_wait_sampling_compat' AND d.deptype = 'e' AND d.classid <> 'pg_type'::regclass
 ORDER BY 1;
-- Privileges as in pg_wait_sampling: views for everyone, the reset not.
SELECT v, has_table_privilege('public', v, 'SELECT') AS public_select
  FROM unnest(ARRAY['pg_wait_sampling_current', 'pg_wait_sampling_history', 'pg_wait_sampling_profile']) v;
SELECT has_function_privilege('public', 'pg_wait_sampling_reset_profile()', 'EXECUTE') AS public_reset;

-- current: this backend, running, has NULL event_type/event and its
-- statement's queryid; an unknown pid is an error, as in pg_wait_sampling.
SELECT pid = pg_backend_pid() AS me, event_type IS NULL AS no_type, event IS NULL AS no_event,
       queryid <> 0 AS has_queryid
  FROM pg_wait_sampling_get_current(pg_backend_pid());
SELECT * FROM pg_wait_sampling_get_current(-1);
SELECT count(*) FILTER (WHERE pid = pg_backend_pid()) AS me_listed,
       count(*) FILTER (WHERE event_type = 'Activity') > 0 AS background_waits_listed
  FROM pg_wait_sampling_current;
-- Named notation works as with pg_wait_sampling's parameter name.
SELECT count(*) AS one FROM pg_wait_sampling_get_current(pid => pg_backend_pid());

-- history and profile: pg_stat_waits' samples, CPU as NULL events, the
-- profile summed over backend type, database and user with pid 0.
SELECT pg_sleep(0.1);
SELECT count(*) > 0 AS has_samples,
       count(*) FILTER (WHERE event_type IS NULL AND event IS NOT NULL) AS half_null,
       count(*) FILTER (WHERE event_type = 'CPU') AS cpu_named
  FROM pg_wait_sampling_history;
SELECT count(*) FILTER (WHERE pid <> 0) AS nonzero_pid,
       count(*) FILTER (WHERE event_type = 'CPU') AS cpu_named,
       (SELECT sum(count) FROM pg_wait_sampling_profile) - (SELECT sum(samples) FROM pg_stat_waits_profile)
         BETWEEN -200 AND 200 AS same_total
  FROM pg_wait_sampling_profile;

-- A non-superuser reads the views, and may not reset.
CREATE ROLE regress_pgws_reader;
SET ROLE regress_pgws_reader;
SELECT count(*) >= 1 AS reads FROM pg_wait_sampling_current;
SELECT count(*) >= 0 AS reads FROM pg_wait_sampling_profile;
SELECT pg_wait_sampling_reset_profile();
RESET ROLE;
DROP ROLE regress_pgws_reader;

-- Settings: pg_wait_sampling's names, types and defaults (profile_pid: off
-- by default here), reloadable like pg_wait_sampling's, bad values refused; a
-- superuser may SET sample_cpu and profile_queries, as with pg_wait_sampling;
-- the periods are pg_stat_waits.sample_period's, another value is refused.
SELECT name, boot_val, vartype, context, min_val, max_val, enumvals
  FROM pg_settings WHERE name LIKE 'pg_wait_sampling.%' ORDER BY name;
SET pg_wait_sampling.sample_cpu = off;
SHOW pg_wait_sampling.sample_cpu;
RESET pg_wait_sampling.sample_cpu;
SET pg_wait_sampling.profile_queries = on;
SHOW pg_wait_sampling.profile_queries;
RESET pg_wait_sampling.profile_queries;
SHOW pg_wait_sampling.profile_period;
SET pg_wait_sampling.profile_period = 20;
SET pg_wait_sampling.history_period = 10;
ALTER SYSTEM SET pg_wait_sampling.profile_pid = 'sometimes';
ALTER SYSTEM SET pg_wait_sampling.profile_queries = 'everything';
ALTER SYSTEM SET pg_wait_sampling.history_size = 10;

-- sample_cpu = off: the views leave out processes that are not waiting.
ALTER SYSTEM SET pg_wait_sampling.sample_cpu = off;
SELECT pg_reload_conf();
SELECT pg_sleep(0.3);
SHOW pg_wait_sampling.sample_cpu;
SELECT count(*) FILTER (WHERE event IS NULL) AS not_waiting,
       count(*) FILTER (WHERE pid = pg_backend_pid()) AS me_listed
  FROM pg_wait_sampling_current;
SELECT count(*) AS one FROM pg_wait_sampling_get_current(pg_backend_pid());
SELECT count(*) FILTER (WHERE event IS NULL) AS not_waiting FROM pg_wait_sampling_history;
SELECT count(*) FILTER (WHERE event IS NULL) AS not_waiting FROM pg_wait_sampling_profile;
ALTER SYSTEM RESET pg_wait_sampling.sample_cpu;

-- profile_queries: none shows 0; top the top-level statement's id; all the
-- running statement's (a nested one under pg_stat_waits.track = 'all').
ALTER SYSTEM SET pg_wait_sampling.profile_queries = none;
SELECT pg_reload_conf();
SELECT pg_sleep(0.3);
SELECT count(*) FILTER (WHERE queryid <> 0) AS with_id FROM pg_wait_sampling_current;
SELECT count(*) FILTER (WHERE queryid <> 0) AS with_id FROM pg_wait_sampling_history;
SELECT count(*) FILTER (WHERE queryid <> 0) AS with_id FROM pg_wait_sampling_profile;
SET pg_stat_waits.track = 'all';
CREATE FUNCTION pgws_nested_ids(OUT compat_id int8, OUT top_id int8) LANGUAGE plpgsql AS $$
BEGIN
    SELECT c.queryid INTO compat_id FROM pg_wait_sampling_get_current(pg_backend_pid()) c;
    SELECT a.top_queryid INTO top_id FROM pg_stat_waits_activity a WHERE a.pid = pg_backend_pid();
END $$;
ALTER SYSTEM SET pg_wait_sampling.profile_queries = 'top';
SELECT pg_reload_conf();
SELECT pg_sleep(0.3);
SELECT compat_id = top_id AS top_is_top FROM pgws_nested_ids();
ALTER SYSTEM SET pg_wait_sampling.profile_queries = 'all';
SELECT pg_reload_conf();
SELECT pg_sleep(0.3);
SELECT compat_id <> top_id AND compat_id <> 0 AS all_is_nested FROM pgws_nested_ids();
DROP FUNCTION pgws_nested_ids();
RESET pg_stat_waits.track;
ALTER SYSTEM RESET pg_wait_sampling.profile_queries;
SELECT pg_reload_conf();

-- In its own schema, away from pg_stat_waits' and from the search path.
DROP EXTENSION pg_wait_sampling_compat;
CREATE SCHEMA pgws_compat;
CREATE EXTENSION pg_wait_sampling_compat SCHEMA pgws_compat;
SET search_path = pg_catalog;
SELECT count(*) AS one FROM pgws_compat.pg_wait_sampling_get_current(pg_backend_pid());
SELECT count(*) >= 0 AS reads FROM pgws_compat.pg_wait_sampling_profile;
SELECT count(*) >= 0 AS reads FROM pgws_compat.pg_wait_sampling_history;
RESET search_path;
DROP EXTENSION pg_wait_sampling_compat;
DROP SCHEMA pgws_compat;

-- Dropping: pg_stat_waits names the compat extension as its dependent, and
-- CASCADE takes both, leaving no pg_wait_sampling object behind.
CREATE EXTENSION pg_wait_sampling_compat;
DROP EXTENSION pg_stat_waits;
DROP EXTENSION pg_stat_waits CASCADE;
SELECT count(*) AS left_behind FROM pg_proc WHERE proname LIKE 'pg\_wait\_sampling%';
SELECT count(*) AS left_behind FROM pg_class WHERE relname LIKE 'pg\_wait\_sampling%';
-- The compat extension alone goes without touching pg_stat_waits.
CREATE EXTENSION pg_wait_sampling_compat CASCADE;
DROP EXTENSION pg_wait_sampling_compat;
SELECT count(*) AS left_behind FROM pg_proc WHERE proname LIKE 'pg\_wait\_sampling%';
SELECT extname FROM pg_extension WHERE extname LIKE 'pg\_%wait%' ORDER BY 1;
SELECT count(*) >= 0 AS pg_stat_waits_works FROM pg_stat_waits_profile;
