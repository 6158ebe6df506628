"""Other engines' column layouts against the engines themselves, both directions, with null
rows, empty values and a tampered row: Spark's ``aes_encrypt``/``aes_decrypt`` in GCM mode
(pyspark, a local session) and ClickHouse's ``encrypt``/``decrypt`` in AES-GCM (chdb, in
process)."""

import os

import pytest

from combsiv import InvalidTag, layouts
from engines import require

ROWS = [b"alice", None, b"", b"x" * 1000, "caf\u00e9".encode(), None, b"\x00" * 17]


@pytest.fixture(scope="module")
def spark():
    require("pyspark")
    from pyspark.sql import SparkSession

    session = SparkSession.builder.master("local[1]").appName("combsiv layouts").getOrCreate()
    yield session
    session.stop()


@pytest.mark.parametrize("key_len", [16, 32])
def test_spark_reads_ours_and_we_read_sparks(spark, key_len):
    pa = require("pyarrow")
    from pyspark.sql import functions as F
    from pyspark.sql.types import BinaryType, StructField, StructType

    key = os.urandom(key_len)
    schema = StructType([StructField("v", BinaryType())])
    # Ours into Spark's aes_decrypt.
    ours = layouts.spark_encrypt(pa.array(ROWS, pa.binary()), key).to_pylist()
    frame = spark.createDataFrame([(bytearray(v) if v is not None else None,) for v in ours], schema)
    opened = frame.select(F.expr(f"aes_decrypt(v, unhex('{key.hex()}'), 'GCM')").alias("p"))
    assert [None if r.p is None else bytes(r.p) for r in opened.collect()] == ROWS
    # Spark's aes_encrypt into ours.
    frame = spark.createDataFrame([(bytearray(v) if v is not None else None,) for v in ROWS], schema)
    sealed = frame.select(F.expr(f"aes_encrypt(v, unhex('{key.hex()}'), 'GCM')").alias("c"))
    theirs = [None if r.c is None else bytes(r.c) for r in sealed.collect()]
    assert layouts.spark_decrypt(pa.array(theirs, pa.binary()), key).to_pylist() == ROWS
    # A tampered row fails in both.
    theirs[3] = theirs[3][:-1] + bytes([theirs[3][-1] ^ 1])
    with pytest.raises(InvalidTag) as failure:
        layouts.spark_decrypt(pa.array(theirs, pa.binary()), key)
    assert failure.value.failed == [3]
    tampered = spark.createDataFrame([(bytearray(theirs[3]),)], schema)
    checked = tampered.select(F.expr(f"try_aes_decrypt(v, unhex('{key.hex()}'), 'GCM')").alias("p"))
    assert checked.collect()[0].p is None


def clickhouse(sql):
    chdb = require("chdb")
    return chdb.query(sql, "TabSeparated").bytes().decode().splitlines()


def hex_or_null(value):
    return "NULL" if value is None else f"unhex('{value.hex()}')"


@pytest.mark.parametrize("key_len", [16, 32])
def test_clickhouse_reads_ours_and_we_read_clickhouses(key_len):
    pa = require("pyarrow")
    key = os.urandom(key_len)
    mode = f"aes-{key_len * 8}-gcm"
    sealed, ivs = layouts.clickhouse_encrypt(pa.array(ROWS, pa.binary()), key)
    sealed, ivs = sealed.to_pylist(), ivs.to_pylist()
    assert len(sealed[2]) == 16, "an empty value encrypts to its tag"
    # Ours into ClickHouse's decrypt, row by row in one query.
    selects = " UNION ALL ".join(
        f"SELECT {i} AS i, hex(decrypt('{mode}', {hex_or_null(c)}, unhex('{key.hex()}'), "
        f"unhex('{iv.hex()}'))) AS p"
        for i, (c, iv) in enumerate(zip(sealed, ivs))
    )
    lines = clickhouse(f"SELECT p FROM ({selects}) ORDER BY i")
    opened = [None if line == "\\N" else bytes.fromhex(line) for line in lines]
    assert opened == ROWS
    # ClickHouse's encrypt into ours.
    fresh = [os.urandom(12) for _ in ROWS]
    selects = " UNION ALL ".join(
        f"SELECT {i} AS i, hex(encrypt('{mode}', {hex_or_null(v)}, unhex('{key.hex()}'), "
        f"unhex('{iv.hex()}'))) AS c"
        for i, (v, iv) in enumerate(zip(ROWS, fresh))
    )
    lines = clickhouse(f"SELECT c FROM ({selects}) ORDER BY i")
    theirs = [None if line == "\\N" else bytes.fromhex(line) for line in lines]
    assert theirs[2] == sealed[2] or len(theirs[2]) == 16, "ClickHouse seals an empty value too"
    back = layouts.clickhouse_decrypt(pa.array(theirs, pa.binary()), key, pa.array(fresh, pa.binary()))
    assert back.to_pylist() == ROWS
    theirs[0] = bytes([theirs[0][0] ^ 1]) + theirs[0][1:]
    theirs[2] = b""  # what ClickHouse's decrypt takes for an empty value: no tag, no proof
    with pytest.raises(InvalidTag) as failure:
        layouts.clickhouse_decrypt(pa.array(theirs, pa.binary()), key, pa.array(fresh, pa.binary()))
    assert failure.value.failed == [0, 2]


def test_aes_192_is_refused_by_name():
    pa = require("pyarrow")
    for call in (
        lambda: layouts.spark_encrypt(pa.array([b"a"]), os.urandom(24)),
        lambda: layouts.clickhouse_encrypt(pa.array([b"a"]), os.urandom(24)),
    ):
        with pytest.raises(ValueError, match="AES-192"):
            call()
