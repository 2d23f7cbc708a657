// Functions refused by name anywhere in free SQL (a database's `deniedFunctions` adds to the list;
// `*` matches any run of characters): they change the session, reach files or other servers,
// or run SQL given as text past the parser, which a read-only transaction does not all stop.
export const DEFAULT_DENIED_FUNCTIONS: readonly string[] = [
  'set_config', // session settings (statement_timeout, role, search_path …)
  'pg_read_file',
  'pg_read_binary_file',
  'pg_ls_dir',
  'pg_stat_file',
  'pg_ls_*',
  'pg_file_*',
  'lo_*',
  'loread',
  'lowrite', // large objects reach the file system
  'dblink*',
  'postgres_fdw*', // other servers
  'pg_terminate_backend',
  'pg_cancel_backend',
  'pg_reload_conf',
  'pg_rotate_logfile',
  'pg_promote',
  'pg_switch_wal',
  'pg_create_restore_point',
  'pg_backup_*',
  'pg_start_backup',
  'pg_stop_backup',
  'pg_create_*_replication_slot',
  'pg_copy_*_replication_slot',
  'pg_replication_slot_advance',
  'pg_drop_replication_slot',
  'pg_replication_origin_*',
  'pg_logical_emit_message',
  // not stopped by READ ONLY either: server-wide statistics and the server log
  'pg_stat_reset*',
  'pg_log_backend_memory_contexts',
  'pg_notify',
  'pg_advisory_*',
  'pg_try_advisory_*',
  // these run SQL given as text, past this parser
  'query_to_xml',
  'query_to_xmlschema',
  'query_to_xml_and_xmlschema',
  'cursor_to_xml',
  'cursor_to_xmlschema',
  'table_to_xml',
  'table_to_xmlschema',
  'table_to_xml_and_xmlschema',
  'schema_to_xml*',
  'database_to_xml*',
  'ts_stat',
  'ts_rewrite', // run SQL given as text too
  'pg_import_system_collations',
  'binary_upgrade_*',
];
