CREATE OR ALTER VIEW dbo.combkey_random AS SELECT CAST(NEWID() AS BINARY(16)) AS r;
GO
CREATE OR ALTER FUNCTION dbo.combkey_v7() RETURNS uniqueidentifier AS
BEGIN
  -- NEWID() is not allowed in a function; a view over it is.
  DECLARE @r BINARY(16) = (SELECT r FROM dbo.combkey_random);
  DECLARE @now DATETIME2(7) = SYSUTCDATETIME();
  DECLARE @ms BIGINT = DATEDIFF_BIG(MILLISECOND, '1970-01-01', @now);
  DECLARE @sub INT = (DATEPART(MICROSECOND, @now) % 1000) * 4096 / 1000;
  -- The stored form of the v7 id p0..p15, in SQL Server's own byte order:
  -- p12..p15, p10 p11, p8 p9, p6 p7, p0..p5 (the milliseconds, compared first).
  RETURN CAST(
      SUBSTRING(@r, 1, 6)
    + CAST(0x80 | (CAST(SUBSTRING(@r, 7, 1) AS INT) & 0x3F) AS BINARY(1))
    + SUBSTRING(@r, 8, 1)
    + CAST(0x70 | (@sub / 256) AS BINARY(1))
    + CAST(@sub % 256 AS BINARY(1))
    + CAST(@ms AS BINARY(6))
    AS uniqueidentifier);
END;
GO
CREATE OR ALTER FUNCTION dbo.combkey_unix_ms(@id uniqueidentifier) RETURNS BIGINT AS
BEGIN
  RETURN CAST(0x0000 + SUBSTRING(CAST(@id AS BINARY(16)), 11, 6) AS BIGINT);
END;
GO
CREATE OR ALTER FUNCTION dbo.combkey_time(@id uniqueidentifier) RETURNS DATETIME2(3) AS
BEGIN
  DECLARE @ms BIGINT = dbo.combkey_unix_ms(@id);
  RETURN DATEADD(MILLISECOND, @ms % 86400000, DATEADD(DAY, @ms / 86400000, CAST('1970-01-01' AS DATETIME2(3))));
END;
GO
CREATE OR ALTER FUNCTION dbo.combkey_from_rtcomb_sql(@id uniqueidentifier) RETURNS uniqueidentifier AS
BEGIN
  -- RT.Comb Sql (a v4 GUID, ms in bytes 11..16 of the BINARY(16)) to combkey's stored form of
  -- the same id as v7: only bytes 7..10 change.
  DECLARE @b BINARY(16) = CAST(@id AS BINARY(16));
  DECLARE @a INT = CAST(SUBSTRING(@b, 9, 1) AS INT) & 0x3F;
  DECLARE @bb INT = CAST(SUBSTRING(@b, 10, 1) AS INT);
  DECLARE @c INT = CAST(SUBSTRING(@b, 7, 1) AS INT);
  DECLARE @d INT = CAST(SUBSTRING(@b, 8, 1) AS INT) & 0x0F;
  RETURN CAST(
      SUBSTRING(@b, 1, 6)
    + CAST(0x80 | ((@bb % 4) * 16 + @c / 16) AS BINARY(1))
    + CAST((@c % 16) * 16 + @d AS BINARY(1))
    + CAST(0x70 | (@a / 4) AS BINARY(1))
    + CAST((@a % 4) * 64 + @bb / 4 AS BINARY(1))
    + SUBSTRING(@b, 11, 6)
    AS uniqueidentifier);
END;
GO
CREATE OR ALTER FUNCTION dbo.combkey_from_newsequentialid(@id uniqueidentifier) RETURNS uniqueidentifier AS
BEGIN
  -- A NEWSEQUENTIALID() value to combkey's stored form of its v7 id: the same Unix
  -- millisecond, then the 100-ns ticks within it (14 bits), the clock sequence (14) and the
  -- node without its first byte's two low bits (46), so ids the application makes later sort
  -- after it. SQL Server's own bytes of the value are the v1 id's bytes in order: time_low,
  -- time_mid, version and time_hi, clock sequence, node.
  DECLARE @b BINARY(16) = CAST(@id AS BINARY(16));
  DECLARE @t BIGINT = (CAST(SUBSTRING(@b, 7, 2) AS BIGINT) & 4095) * 281474976710656
    + CAST(SUBSTRING(@b, 5, 2) AS BIGINT) * 4294967296
    + CAST(SUBSTRING(@b, 1, 4) AS BIGINT);
  -- 100-ns ticks since 1970 (v1 counts from 1582-10-15), as milliseconds and the ticks left.
  DECLARE @u BIGINT = @t - 122192928000000000;
  DECLARE @ms BIGINT = @u / 10000;
  DECLARE @sub INT = CAST(@u % 10000 AS INT);
  DECLARE @cs INT = CAST(SUBSTRING(@b, 9, 2) AS INT) & 16383;
  -- The v7 id q0..q15: ms; version 7 and the ticks' high 12 bits; the variant, the ticks' low
  -- 2 bits and the clock sequence's high 12; its low 2 and the node's first byte's high 6;
  -- the node's other five bytes.
  DECLARE @q BINARY(16) = CAST(@ms AS BINARY(6)) + CAST(28672 | (@sub / 4) AS BINARY(2))
    + CAST(32768 | ((@sub % 4) * 4096) | (@cs / 4) AS BINARY(2))
    + CAST(((@cs % 4) * 64) | (CAST(SUBSTRING(@b, 11, 1) AS INT) / 4) AS BINARY(1)) + SUBSTRING(@b, 12, 5);
  -- Its stored form's own bytes: q12..q15, q10 q11, q8 q9, q6 q7, q0..q5.
  RETURN CAST(
      SUBSTRING(@q, 13, 4) + SUBSTRING(@q, 11, 2) + SUBSTRING(@q, 9, 2) + SUBSTRING(@q, 7, 2) + SUBSTRING(@q, 1, 6)
    AS uniqueidentifier);
END;
GO
CREATE OR ALTER FUNCTION dbo.combkey_stored(@public uniqueidentifier) RETURNS uniqueidentifier AS
BEGIN
  -- The stored form of a public id, for ad-hoc queries: WHERE id = dbo.combkey_stored('017f22e2-...').
  -- @b is SQL Server's own bytes of the public id p0..p15: p3 p2 p1 p0 p5 p4 p7 p6 p8 .. p15.
  -- The stored form's own bytes are p12..p15, p10 p11, p8 p9, p6 p7, p0..p5.
  DECLARE @b BINARY(16) = CAST(@public AS BINARY(16));
  RETURN CAST(
      SUBSTRING(@b, 13, 4) + SUBSTRING(@b, 11, 2) + SUBSTRING(@b, 9, 2)
    + SUBSTRING(@b, 8, 1) + SUBSTRING(@b, 7, 1)
    + SUBSTRING(@b, 4, 1) + SUBSTRING(@b, 3, 1) + SUBSTRING(@b, 2, 1) + SUBSTRING(@b, 1, 1)
    + SUBSTRING(@b, 6, 1) + SUBSTRING(@b, 5, 1)
    AS uniqueidentifier);
END;
GO
CREATE OR ALTER FUNCTION dbo.combkey_public(@stored uniqueidentifier) RETURNS uniqueidentifier AS
BEGIN
  -- The public id of a stored value (the inverse of dbo.combkey_stored), to show ids as the
  -- application and its clients know them: SELECT dbo.combkey_public(id) FROM ...
  DECLARE @s BINARY(16) = CAST(@stored AS BINARY(16));
  RETURN CAST(
      SUBSTRING(@s, 14, 1) + SUBSTRING(@s, 13, 1) + SUBSTRING(@s, 12, 1) + SUBSTRING(@s, 11, 1)
    + SUBSTRING(@s, 16, 1) + SUBSTRING(@s, 15, 1)
    + SUBSTRING(@s, 10, 1) + SUBSTRING(@s, 9, 1)
    + SUBSTRING(@s, 7, 2) + SUBSTRING(@s, 5, 2) + SUBSTRING(@s, 1, 4)
    AS uniqueidentifier);
END;
GO
