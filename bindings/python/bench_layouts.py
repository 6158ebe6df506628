"""Other engines' column layouts: each engine's own function next to combsiv's, on the same
rows, in rows per second (medians of repeats, same run).

    python bindings/python/bench_layouts.py [--quick] [--rows N]

- Spark: ``aes_encrypt(v, key, 'GCM')`` over a cached DataFrame on a local session (every
  core), against ``layouts.spark_encrypt`` on the Arrow column in this process;
- ClickHouse (chdb, in process): ``encrypt('aes-256-gcm', v, key, iv)`` over the rows as an
  Arrow table, against ``layouts.clickhouse_encrypt``;
- Tink: a keyset's primitive ``encrypt`` per row (the ``tink`` package), against
  ``tink.encrypt_column``.

The rows follow the Internet mix (44 % 40-100 B, 37 % 1400-1500 B, the rest in between).
"""

import os
import random
import statistics
import sys
import time

import pyarrow as pa

from combsiv import layouts
from combsiv import tink as ours_tink

QUICK = "--quick" in sys.argv
ROWS = int(sys.argv[sys.argv.index("--rows") + 1]) if "--rows" in sys.argv else 200_000
REPEATS = 3 if QUICK else 5


def internet_mix(rng, count):
    sizes = []
    for _ in range(count):
        r = rng.random()
        sizes.append(rng.randint(40, 100) if r < 0.44 else rng.randint(1400, 1500) if r < 0.81 else rng.randint(101, 1399))
    return [rng.randbytes(n) for n in sizes]


def rate(fn):
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return ROWS / statistics.median(times)


def main():
    rows = internet_mix(random.Random(1), ROWS)
    column = pa.array(rows, pa.binary())
    key = os.urandom(32)
    results = []

    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    spark = SparkSession.builder.master("local[*]").appName("layouts bench").getOrCreate()
    frame = spark.createDataFrame(pa.table({"v": column}).to_pandas()).cache()
    frame.count()
    sealed = frame.select(F.expr(f"aes_encrypt(v, unhex('{key.hex()}'), 'GCM')").alias("c"))
    results.append(("Spark", "aes_encrypt(v, key, 'GCM')", rate(lambda: sealed.agg(F.sum(F.length("c"))).collect())))
    results.append(("Spark", "layouts.spark_encrypt", rate(lambda: layouts.spark_encrypt(column, key))))
    spark.stop()

    import chdb

    table = pa.table({"v": column, "iv": pa.array([os.urandom(12) for _ in rows], pa.binary())})
    query = (f"SELECT sum(length(encrypt('aes-256-gcm', v, unhex('{key.hex()}'), iv))) "
             "FROM Python(table)")
    results.append(("ClickHouse", "encrypt('aes-256-gcm', v, key, iv)", rate(lambda: chdb.query(query, "CSV"))))
    results.append(("ClickHouse", "layouts.clickhouse_encrypt", rate(lambda: layouts.clickhouse_encrypt(column, key))))

    import tink
    from tink import aead, secret_key_access

    aead.register()
    handle = tink.new_keyset_handle(aead.aead_key_templates.AES256_GCM_SIV)
    primitive = handle.primitive(aead.Aead)
    keyset = ours_tink.Keyset.from_json(tink.json_proto_keyset_format.serialize(handle, secret_key_access.TOKEN))
    results.append(("Tink", "primitive.encrypt per row", rate(lambda: [primitive.encrypt(r, b"") for r in rows])))
    results.append(("Tink", "tink.encrypt_column", rate(lambda: ours_tink.encrypt_column(column, keyset, b""))))

    print(f"{ROWS} Internet-mix rows, {os.cpu_count()} cores, medians of {REPEATS}: rows/s")
    for engine, what, rows_per_second in results:
        print(f"{engine:11} {what:38} {rows_per_second:12,.0f}")


if __name__ == "__main__":
    main()
