"""Writes crates/combkey/tests/peers/python.tsv: what Python's UUID generators make for fixed
inputs (CPython's uuid.uuid1, the `uuid6` package's uuid1_to_uuid6, uuid6 and uuid7, and the
`uuid-utils` package's uuid7). Each generator reads the clock through time.time_ns (uuid-utils
takes the time as an argument), so the clock is replaced by a fixed reading per row and each
generator's "last timestamp" is cleared, so no row depends on the one before.

    python3 -m venv /var/tmp/peers-py && /var/tmp/peers-py/bin/pip install uuid6==2025.0.1 uuid-utils==1.2.0
    /var/tmp/peers-py/bin/python scripts/peers/python.py > crates/combkey/tests/peers/python.tsv
"""

import importlib.metadata
import platform
import random
import time
import uuid

import uuid6
import uuid_utils

GREGORIAN_OFFSET = 0x01B21DD213814000  # 100-ns ticks from 1582-10-15 to 1970-01-01 (RFC 9562)
rng = random.Random(2026)


def at(ns, make):
    """What `make()` returns with the clock reading `ns`, or 'error: ...'."""
    real = time.time_ns
    time.time_ns = lambda: ns
    uuid._last_timestamp = None
    uuid6._last_v6_timestamp = None
    uuid6._last_v7_timestamp = None
    try:
        return str(make())
    except Exception as e:  # a refusal is a result too
        return f"error: {type(e).__name__}: {e}"
    finally:
        time.time_ns = real


# Clock readings: the edges of each layout's range and of 1970, then random ones across them.
first_tick_ns = -GREGORIAN_OFFSET * 100  # 1582-10-15T00:00:00Z
last_tick_ns = ((1 << 60) - 1 - GREGORIAN_OFFSET) * 100  # the last 60-bit tick, in 5236
last_ms_ns = ((1 << 48) - 1) * 10**6  # the last 48-bit millisecond, in 10889
edges = [0, 1, 99, 100, 101, -1, -99, -100, -101, 10**6 - 1, 10**6, -(10**6), -(10**6) - 1,
         first_tick_ns, first_tick_ns + 99, first_tick_ns + 100, first_tick_ns - 1, first_tick_ns - 100,
         last_tick_ns, last_tick_ns + 99, last_tick_ns + 100, last_tick_ns - 100,
         last_ms_ns, last_ms_ns + 10**6 - 1, last_ms_ns + 10**6, -2_208_988_800 * 10**9,
         1_700_000_000_123_456_789]
v1_times = edges + [rng.randrange(first_tick_ns, last_tick_ns) for _ in range(300)] + \
    [rng.randrange(-(10**18), 10**18) for _ in range(100)]
v7_times = edges + [rng.randrange(0, last_ms_ns) for _ in range(300)] + \
    [rng.randrange(-(10**18), 10**18) for _ in range(100)]

print("# peers: CPython's uuid module (uuid.uuid1); the PyPI packages uuid6 (uuid1_to_uuid6, uuid6, uuid7) and uuid-utils (uuid7)")
print(f"# versions: CPython {platform.python_version()}, uuid6 {importlib.metadata.version('uuid6')}, "
      f"uuid-utils {importlib.metadata.version('uuid-utils')}")
print("# made by scripts/peers/python.py (its docstring has the commands), random inputs from random.Random(2026)")
print("# columns (tab separated):")
print("#   v1 <unix ns> <node, 12 hex digits> <clock_seq> <uuid.uuid1(node, clock_seq)> <uuid6.uuid1_to_uuid6(that)> <uuid6.uuid6(node, clock_seq)>")
print("#   v7 <unix ns> <uuid6.uuid7()> <uuid_utils.uuid7(nanoseconds=ns)>")
print("# the clock (time.time_ns) reads <unix ns> for every call of a row")
for i, ns in enumerate(v1_times):
    node = [0, (1 << 48) - 1][i] if i < 2 else rng.getrandbits(48)
    seq = [0, 0x3FFF][i] if i < 2 else rng.getrandbits(14)
    u1 = at(ns, lambda: uuid.uuid1(node, seq))
    u6a = uuid6.uuid1_to_uuid6(uuid.UUID(u1)) if not u1.startswith("error") else "error: no v1"
    u6b = at(ns, lambda: uuid6.uuid6(node, seq))
    print(f"v1\t{ns}\t{node:012x}\t{seq}\t{u1}\t{u6a}\t{u6b}")
for ns in v7_times:
    a = at(ns, uuid6.uuid7)
    try:
        b = str(uuid_utils.uuid7(nanoseconds=ns))
    except Exception as e:
        b = f"error: {type(e).__name__}: {e}"
    print(f"v7\t{ns}\t{a}\t{b}")
