-- pg_wait_sampling 1.1, served by pg_stat_waits: the same views, functions,
-- column names and types, strictness and privileges as pg_wait_sampling 1.1's
-- own script, so that tools written for it (PoWA, pg_profile, exporters'
-- queries) find it by name and work unchanged:
--   CREATE EXTENSION pg_wait_sampling CASCADE;   -- CASCADE creates pg_stat_waits
-- Its C functions are pg_stat_waits' (src/pg/pg_wait_sampling/):
--   pg_wait_sampling_get_current(pid), _current   pg_stat_waits' processes, now
--   pg_wait_sampling_get_history(), _history      pg_stat_waits_history's samples
--   pg_wait_sampling_get_profile(), _profile      pg_stat_waits_profile since the last
--                                                 pg_wait_sampling_reset_profile() (or start),
--                                                 summed over backend type, database and
--                                                 user; pid is 0 unless
--                                                 pg_wait_sampling.profile_pid is on
--   pg_wait_sampling_reset_profile()              empties this profile only: nothing of
--                                                 pg_stat_waits' own views changes
-- A process on the CPU (pg_stat_waits' 'CPU') has NULL event_type/event; a
-- missing queryid is 0; pg_wait_sampling.sample_cpu and .profile_queries are
-- honoured per session. No object refers to this extension's schema, so it
-- is relocatable, as pg_wait_sampling is.
\echo Use "CREATE EXTENSION pg_wait_sampling" to load this file. \quit

-- pg_wait_sampling_compat offers the same objects: one or the other.
DO $dropin$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'pg_wait_sampling_compat') THEN
        RAISE EXCEPTION 'pg_wait_sampling_compat is installed in this database'
            USING HINT = 'pg_wait_sampling replaces it: DROP EXTENSION pg_wait_sampling_compat; '
                         'CREATE EXTENSION pg_wait_sampling; (in one transaction, for tools that read it).';
    END IF;
END
$dropin$;

CREATE FUNCTION pg_wait_sampling_get_current (
	pid int4,
	OUT pid int4,
	OUT event_type text,
	OUT event text,
	OUT queryid int8
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_stat_waits_pgws_current'
LANGUAGE C VOLATILE CALLED ON NULL INPUT;

CREATE VIEW pg_wait_sampling_current AS
	SELECT * FROM pg_wait_sampling_get_current(NULL::integer);

GRANT SELECT ON pg_wait_sampling_current TO PUBLIC;

CREATE FUNCTION pg_wait_sampling_get_history (
	OUT pid int4,
	OUT ts timestamptz,
	OUT event_type text,
	OUT event text,
	OUT queryid int8
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_stat_waits_pgws_history'
LANGUAGE C VOLATILE STRICT;

CREATE VIEW pg_wait_sampling_history AS
	SELECT * FROM pg_wait_sampling_get_history();

GRANT SELECT ON pg_wait_sampling_history TO PUBLIC;

CREATE FUNCTION pg_wait_sampling_get_profile (
	OUT pid int4,
	OUT event_type text,
	OUT event text,
	OUT queryid int8,
	OUT count int8
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_stat_waits_pgws_profile'
LANGUAGE C VOLATILE STRICT;

CREATE VIEW pg_wait_sampling_profile AS
	SELECT * FROM pg_wait_sampling_get_profile();

GRANT SELECT ON pg_wait_sampling_profile TO PUBLIC;

-- No privilege check inside: EXECUTE is the privilege, as in pg_wait_sampling
-- (pg_profile's collecting role is granted it).
CREATE FUNCTION pg_wait_sampling_reset_profile()
RETURNS void
AS 'MODULE_PATHNAME', 'pg_stat_waits_pgws_reset_profile'
LANGUAGE C VOLATILE STRICT;

-- Don't want this to be available to non-superusers.
REVOKE ALL ON FUNCTION pg_wait_sampling_reset_profile() FROM PUBLIC;
