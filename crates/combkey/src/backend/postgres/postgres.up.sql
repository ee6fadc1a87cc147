CREATE OR REPLACE FUNCTION combkey_v7() RETURNS uuid
LANGUAGE plpgsql VOLATILE PARALLEL SAFE AS $combkey$
DECLARE
  us bigint := (extract(epoch FROM clock_timestamp()) * 1000000)::bigint;
  sub int := ((us % 1000) * 4096 / 1000)::int;
  b bytea := uuid_send(gen_random_uuid());
BEGIN
  b := overlay(b PLACING substring(int8send(us / 1000) FROM 3 FOR 6) FROM 1 FOR 6);
  b := set_byte(b, 6, 112 | (sub >> 8));
  b := set_byte(b, 7, sub & 255);
  RETURN encode(b, 'hex')::uuid;
END
$combkey$;
CREATE OR REPLACE FUNCTION combkey_unix_ms(id uuid) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS
$combkey$ SELECT ('x' || lpad(substr(encode(uuid_send(id), 'hex'), 1, 12), 16, '0'))::bit(64)::bigint $combkey$;
CREATE OR REPLACE FUNCTION combkey_time(id uuid) RETURNS timestamptz
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS
$combkey$ SELECT to_timestamp(combkey_unix_ms(id) / 1000.0) $combkey$;
