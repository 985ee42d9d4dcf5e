-- pg_stat_waits_citus 1.0: pg_stat_waits' views over every node of a Citus
-- cluster (docs/citus.md). Each node samples its own processes; these
-- objects ask every node for its rows and add two columns that tie them
-- together: nodeid, the node that answered, and gpid, the Citus global pid
-- of the distributed session a row belongs to.
--   CREATE EXTENSION pg_stat_waits_citus;   -- on the coordinator: Citus creates it on every node
--
-- How the rows are collected, as citus_stat_activity does it: one command
-- through run_command_on_all_nodes (a new connection to every node, the
-- nodes in parallel, as the calling user), whose answer on each node is
-- one JSON array, decoded here. The command names this extension's and
-- pg_stat_waits' schemas, which Citus keeps the same on every node. A node
-- that does not answer is a WARNING naming its node id and its error
-- (run_command_on_all_nodes raises it) and has no rows. Everything a node
-- computes (its node id, the gpids, the filters) is computed there.
--
-- gpid: the gpid pg_stat_waits recorded for the process (a Citus worker
-- backend's, from its application_name), else nodeid * 10^10 + pid on the
-- node the row comes from (the leader's pid for a parallel worker), the
-- gpid Citus gives a session that started there (citus_backend_gpid()).
-- So a distributed session's rows on its coordinator (or on the worker it
-- connected to) and on every worker that ran its shard queries share one
-- gpid.
--
-- No object here records a dependency on a Citus object or on
-- pg_stat_waits' views (the commands are function bodies, read when they
-- run): either extension can drop and create its objects again in an
-- update without this one in its way.
\echo Use "CREATE EXTENSION pg_stat_waits_citus" to load this file. \quit

-- The schemas are written into the commands with @extschema:...@
-- (PostgreSQL 16; Citus 14 runs on 16 to 18), and the rows carry the gpid
-- column of pg_stat_waits 1.3.
DO $check$
BEGIN
    IF current_setting('server_version_num')::int < 160000 THEN
        RAISE EXCEPTION 'pg_stat_waits_citus needs PostgreSQL 16 or later, not %', current_setting('server_version');
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute
                    WHERE attrelid = '@extschema:pg_stat_waits@.pg_stat_waits_history'::regclass
                      AND attname = 'gpid' AND NOT attisdropped) THEN
        RAISE EXCEPTION 'pg_stat_waits_citus needs pg_stat_waits 1.3 or later (the gpid column of its views)'
            USING HINT = 'ALTER EXTENSION pg_stat_waits UPDATE on every node.';
    END IF;
END
$check$;

-- The node id of this node, as Citus's GetLocalNodeId() computes it
-- (metadata_cache.c): the first active row of pg_dist_node in this node's
-- group (pg_dist_local_group) and cluster (citus.cluster_name), in the
-- table's order (a sequential scan, as Citus's own); 99999999 when there is
-- none (a coordinator not added to the metadata), Citus's node id for the
-- gpids of such a node. Unlike citus_nodeid_for_gpid(), it never errors.
CREATE FUNCTION pg_stat_waits_citus_local_nodeid() RETURNS int
    LANGUAGE sql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS $f$
    SELECT coalesce(
        (SELECT n.nodeid FROM pg_catalog.pg_dist_node n
          WHERE n.groupid = (SELECT groupid FROM pg_catalog.pg_dist_local_group)
            AND n.isactive AND n.nodecluster = current_setting('citus.cluster_name')
          LIMIT 1),
        99999999)
    $f$;

-- The row types of the cluster's activity and history: each node's
-- pg_stat_waits_activity and pg_stat_waits_history row, the node first and
-- the gpid filled in. The functions decode each node's JSON rows into them.
CREATE TYPE pg_stat_waits_cluster_activity_row AS (
    nodeid int, pid int, leader_pid int, backend_type text, datid oid, usesysid oid, state text,
    wait_event_type text, wait_event text, wait_time float8, queryid bigint, top_queryid bigint,
    query_start timestamptz, blockers int[], gpid bigint);

CREATE TYPE pg_stat_waits_cluster_history_row AS (
    nodeid int, sample_time timestamptz, pid int, leader_pid int, backend_type text, datid oid,
    usesysid oid, state text, wait_event_type text, wait_event text, queryid bigint,
    top_queryid bigint, query_start timestamptz, blockers int[], blocker_details jsonb, gpid bigint);

-- Every node's pg_stat_waits_activity: the processes of the cluster now.
CREATE FUNCTION pg_stat_waits_cluster_activity_internal()
    RETURNS SETOF pg_stat_waits_cluster_activity_row
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, pg_temp
    AS $f$
DECLARE
    command text := $c$
        SELECT coalesce(jsonb_agg(to_jsonb(a) || jsonb_build_object(
                   'nodeid', n.id, 'gpid', coalesce(a.gpid, n.id * 10000000000 + coalesce(a.leader_pid, a.pid)))), '[]')
          FROM @extschema:pg_stat_waits@.pg_stat_waits_activity a
         CROSS JOIN @extschema@.pg_stat_waits_citus_local_nodeid() n(id)
        $c$;
BEGIN
    RETURN QUERY
    SELECT r.*
      FROM pg_catalog.run_command_on_all_nodes(command, parallel := true, give_warning_for_connection_errors := true) c,
           jsonb_populate_recordset(NULL::@extschema@.pg_stat_waits_cluster_activity_row,
                                    CASE WHEN c.success THEN c.result::jsonb ELSE '[]' END) r
     ORDER BY r.nodeid, r.pid;
END
$f$;

CREATE VIEW pg_stat_waits_cluster_activity AS
    SELECT * FROM pg_stat_waits_cluster_activity_internal();

-- Every node's pg_stat_waits_history since now() - since (each node's own
-- clock), and only the rows of one distributed session when gpid is given;
-- the filter runs on each node, which sends only what passes it. Each
-- element of blocker_details gets its gpid filled in the same way (a
-- prepared transaction, pid 0, keeps null). Oldest first.
CREATE FUNCTION pg_stat_waits_cluster_history(since interval DEFAULT '5 min', gpid bigint DEFAULT NULL)
    RETURNS SETOF pg_stat_waits_cluster_history_row
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, pg_temp
    AS $f$
DECLARE
    command text := format($c$
        SELECT coalesce(jsonb_agg(to_jsonb(h) || jsonb_build_object(
                   'nodeid', n.id, 'gpid', g.gpid,
                   'blocker_details', coalesce(
                       (SELECT jsonb_agg(b || jsonb_build_object('gpid', coalesce(
                                   (b->>'gpid')::bigint, nullif((b->>'pid')::int, 0) + n.id * 10000000000))
                                 ORDER BY i)
                          FROM jsonb_array_elements(h.blocker_details) WITH ORDINALITY d(b, i)),
                       h.blocker_details))), '[]')
          FROM @extschema:pg_stat_waits@.pg_stat_waits_history h
         CROSS JOIN @extschema@.pg_stat_waits_citus_local_nodeid() n(id)
         CROSS JOIN LATERAL (SELECT coalesce(h.gpid, n.id * 10000000000 + coalesce(h.leader_pid, h.pid))) g(gpid)
         WHERE h.sample_time >= now() - %L::interval AND (%L::bigint IS NULL OR g.gpid = %L::bigint)
        $c$, since, gpid, gpid);
BEGIN
    IF since IS NULL THEN
        RAISE EXCEPTION 'pg_stat_waits_cluster_history: since must not be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF now() - since >= now() THEN
        RAISE EXCEPTION 'pg_stat_waits_cluster_history: since must be a positive interval, not "%"', since
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN QUERY
    SELECT r.*
      FROM pg_catalog.run_command_on_all_nodes(command, parallel := true, give_warning_for_connection_errors := true) c,
           jsonb_populate_recordset(NULL::@extschema@.pg_stat_waits_cluster_history_row,
                                    CASE WHEN c.success THEN c.result::jsonb ELSE '[]' END) r
     ORDER BY r.sample_time, r.nodeid, r.pid;
END
$f$;

-- Every node's pg_stat_waits_top(since, n), by node: n and pct are per
-- node (a node's n heaviest events, pct of that node's samples in the
-- window), not of the cluster. Heaviest first within a node.
CREATE FUNCTION pg_stat_waits_cluster_top(since interval DEFAULT '5 min', n int DEFAULT 10,
    OUT nodeid int, OUT wait_event_type text, OUT wait_event text, OUT samples bigint, OUT pct float8)
    RETURNS SETOF record
    LANGUAGE plpgsql VOLATILE STRICT
    SET search_path = pg_catalog, pg_temp
    AS $f$
DECLARE
    command text := format($c$
        SELECT coalesce(jsonb_agg(to_jsonb(t) || jsonb_build_object('nodeid', n.id)), '[]')
          FROM @extschema:pg_stat_waits@.pg_stat_waits_top(%L::interval, %L::int) t
         CROSS JOIN @extschema@.pg_stat_waits_citus_local_nodeid() n(id)
        $c$, since, n);
BEGIN
    IF now() - since >= now() THEN
        RAISE EXCEPTION 'pg_stat_waits_cluster_top: since must be a positive interval, not "%"', since
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF n <= 0 THEN
        RAISE EXCEPTION 'pg_stat_waits_cluster_top: n must be positive, not %', n
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN QUERY
    SELECT t.nodeid, t.wait_event_type, t.wait_event, t.samples, t.pct
      FROM pg_catalog.run_command_on_all_nodes(command, parallel := true, give_warning_for_connection_errors := true) c,
           jsonb_to_recordset(CASE WHEN c.success THEN c.result::jsonb ELSE '[]' END)
               AS t(nodeid int, wait_event_type text, wait_event text, samples bigint, pct float8)
     ORDER BY 1, 4 DESC, 2, 3;
END
$f$;

-- One row per node: whether it answered (a node that did not has its
-- error and no figures), and from its pg_stat_waits_status: timing (what
-- a new session of the reading role gets there: the node's
-- pg_stat_waits.timing), sample_period_ms, sampler_pid, samples_taken; and
-- the pg_stat_waits version installed there.
CREATE FUNCTION pg_stat_waits_cluster_status_internal(
    OUT nodeid int, OUT answered bool, OUT timing bool, OUT sample_period_ms int, OUT sampler_pid int,
    OUT samples_taken bigint, OUT version text, OUT error text)
    RETURNS SETOF record
    LANGUAGE sql VOLATILE
    SET search_path = pg_catalog, pg_temp
    AS $f$
    SELECT coalesce(s.nodeid, c.nodeid), c.success, s.timing, s.sample_period_ms, s.sampler_pid,
           s.samples_taken, s.version, CASE WHEN NOT c.success THEN c.result END
      FROM pg_catalog.run_command_on_all_nodes($c$
               SELECT to_jsonb(s) || jsonb_build_object(
                          'nodeid', @extschema@.pg_stat_waits_citus_local_nodeid(),
                          'version', (SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'pg_stat_waits'))
                 FROM @extschema:pg_stat_waits@.pg_stat_waits_status s
               $c$, parallel := true, give_warning_for_connection_errors := true) c
      LEFT JOIN LATERAL jsonb_to_record(CASE WHEN c.success THEN c.result::jsonb END)
               AS s(nodeid int, timing bool, sample_period_ms int, sampler_pid int, samples_taken bigint,
                    version text) ON true
     ORDER BY 1
    $f$;

CREATE VIEW pg_stat_waits_cluster_status AS
    SELECT * FROM pg_stat_waits_cluster_status_internal();

-- As pg_stat_waits' own views: everyone may read (the functions are
-- executable by PUBLIC, as pg_stat_waits_top is). Each node's views apply
-- their own rule to the reading role (other users' queryids hidden, as in
-- pg_stat_activity), and every node must let that role connect.
GRANT SELECT ON pg_stat_waits_cluster_activity, pg_stat_waits_cluster_status TO PUBLIC;
