SET client_min_messages = warning;
CREATE EXTENSION pg_wait_sampling_compat CASCADE;
RESET client_min_messages;

\d pg_wait_sampling_current
\d pg_wait_sampling_history
\d pg_wait_sampling_profile

DROP EXTENSION pg_wait_sampling_compat;
