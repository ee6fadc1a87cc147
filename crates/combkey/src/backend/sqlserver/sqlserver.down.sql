DROP FUNCTION IF EXISTS dbo.combkey_public;
GO
DROP FUNCTION IF EXISTS dbo.combkey_stored;
GO
DROP FUNCTION IF EXISTS dbo.combkey_from_rtcomb_sql;
GO
DROP FUNCTION IF EXISTS dbo.combkey_from_newsequentialid;
GO
DROP FUNCTION IF EXISTS dbo.combkey_time;
GO
DROP FUNCTION IF EXISTS dbo.combkey_unix_ms;
GO
DROP FUNCTION IF EXISTS dbo.combkey_v7;
GO
DROP VIEW IF EXISTS dbo.combkey_random;
GO
