-- pg_stat_waits 1.2 -> 1.3
\echo Use "ALTER EXTENSION pg_stat_waits UPDATE TO '1.3'" to load this file. \quit

-- The changes below were also made in sql/pg_stat_waits.sql (the fresh
-- install); test/t/040_upgrade.pl compares the two.

-- pg_stat_waits_activity, pg_stat_waits_history and pg_stat_waits_executions
-- gain gpid: where Citus is preloaded, the global pid of the distributed
-- session a process served, from Citus's application_name (NULL otherwise);
-- the blockers' jsonb gains it too (no schema change). Each view over a
-- changed function is dropped and created again, with its grant.
DROP VIEW pg_stat_waits_activity;
DROP FUNCTION pg_stat_waits_activity_internal();
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
GRANT SELECT ON pg_stat_waits_activity TO PUBLIC;

DROP VIEW pg_stat_waits_history;
DROP FUNCTION pg_stat_waits_history_internal();
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
GRANT SELECT ON pg_stat_waits_history TO PUBLIC;

DROP VIEW pg_stat_waits_executions;
DROP FUNCTION pg_stat_waits_executions_internal();
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
