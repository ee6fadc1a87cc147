DROP FUNCTION IF EXISTS combkey_time(uuid);
DROP FUNCTION IF EXISTS combkey_unix_ms(uuid);
DROP FUNCTION IF EXISTS combkey_v7();
