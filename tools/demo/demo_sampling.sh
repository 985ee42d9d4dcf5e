# ./run demo, sampling step: what the 10 ms sampler saw of the demo workload.
# Sourced by run_demo while its workload runs (PGHOST/PGPORT set, demo_psql).
# shellcheck shell=bash

sleep 3  # let the sampler see a few more seconds of the workload
log "pg_stat_waits_top('5 minutes'): the top waits of the workload (sampled every 10 ms)"
demo_psql -c "SELECT wait_event_type, wait_event, samples, round(pct::numeric, 1) AS pct
                FROM pg_stat_waits_top('5 minutes', 10)"
log "pg_stat_waits_timeline: per-minute timeline (average active sessions per wait event)"
demo_psql -c "SELECT to_char(bucket_start, 'HH24:MI') AS minute, wait_event_type, wait_event, samples,
                     round(avg_active::numeric, 3) AS avg_active
                FROM pg_stat_waits_timeline('1 hour', '1 minute')
               WHERE samples >= 5 ORDER BY bucket_start, samples DESC"
log "pg_stat_waits_timeline('1 minute', '5 seconds'): the last minute in 5-second buckets"
demo_psql -c "SELECT to_char(bucket_start, 'HH24:MI:SS') AS bucket, wait_event_type, wait_event, samples
                FROM pg_stat_waits_timeline('1 minute', '5 seconds')
               WHERE samples >= 10 ORDER BY bucket_start, samples DESC"
log "pg_stat_waits_profile: sampled time by query and wait event (est_time ms = samples x period)"
demo_psql -c "SELECT p.queryid, left(regexp_replace(s.query, '\s+', ' ', 'g'), 48) AS query,
                     p.wait_event_type, p.wait_event, p.samples, p.est_time
                FROM pg_stat_waits_profile p
                LEFT JOIN (SELECT DISTINCT ON (queryid) queryid, query FROM pg_stat_statements) s USING (queryid)
               WHERE p.backend_type = 'client backend'
               ORDER BY p.samples DESC LIMIT 12" 2>/dev/null \
  || demo_psql -c "SELECT queryid, wait_event_type, wait_event, samples, est_time FROM pg_stat_waits_profile
                    WHERE backend_type = 'client backend' ORDER BY samples DESC LIMIT 12"
