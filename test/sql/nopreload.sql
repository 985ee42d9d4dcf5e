-- Without shared_preload_libraries the extension refuses to install.
-- (No CONTEXT lines: from 18 on they name the install script's line.)
\set SHOW_CONTEXT never
CREATE EXTENSION pg_stat_waits;
SELECT count(*) FROM pg_extension WHERE extname = 'pg_stat_waits';
