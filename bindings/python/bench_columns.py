"""Arrow columns against what users write today, in the same run: ``encrypt_column`` and
``decrypt_column`` over 1M rows of the Internet mix, against ``encrypt_many``/``decrypt_many``
on Python lists and a per-row ``cryptography`` loop, on one core and on all cores; then a
column encrypted across Spark (``mapInArrow``) and Dask (``map_partitions``) workers, one and
two workers, against a per-row ``cryptography`` function on the same engine and the engine
alone (the same job with a function that passes the rows through). Medians.

    python bindings/python/bench_columns.py [--quick] [--no-clusters | --only-clusters]

Needs pyarrow and cryptography; the cluster part pyspark (with a Java runtime) and
dask[dataframe] with distributed.
"""

import functools
import os
import statistics
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa
from cryptography.hazmat.primitives.ciphers import aead as reference

import combsiv

QUICK = "--quick" in sys.argv
MACHINE = "--only-clusters" not in sys.argv
CLUSTERS = "--no-clusters" not in sys.argv
ROWS = 20_000 if QUICK else 1_000_000
CLUSTER_ROWS = 20_000 if QUICK else 1_000_000
KEY = bytes(range(32))


def mix_lengths(rng, count):
    """The Internet mix: 44 % 40-100 B, 37 % 1400-1500 B, 19 % in between."""
    r = rng.random(count)
    small = rng.integers(40, 101, count)
    large = rng.integers(1400, 1501, count)
    middle = rng.integers(101, 1400, count)
    return np.where(r < 0.44, small, np.where(r < 0.81, large, middle))


def mix_column(seed, count, random_bytes=True):
    """A binary column of ``count`` rows of Internet-mix lengths, built in place: random
    bytes, or (cheaper to make, as fast to seal) the letter x."""
    rng = np.random.default_rng(seed)
    offsets = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(mix_lengths(rng, count), out=offsets[1:])
    if random_bytes:
        data = rng.integers(0, 256, int(offsets[-1]), dtype=np.uint8)
    else:
        data = np.full(int(offsets[-1]), ord("x"), dtype=np.uint8)
    return pa.Array.from_buffers(pa.large_binary(), count, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def median_seconds(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
        del result
    return statistics.median(times)


def cryptography_seal_rows(aead, values):
    """The per-row loop users write today: a fresh nonce, then nonce || ciphertext || tag."""
    out = []
    for value in values:
        nonce = os.urandom(12)
        out.append(nonce + aead.encrypt(nonce, value, None))
    return out


def cryptography_open_rows(aead, sealed):
    return [aead.decrypt(row[:12], row[12:], None) for row in sealed]


def one_machine(rows, targets):
    column = mix_column(1, rows)
    total = column.buffers()[2].size
    values = column.to_pylist()
    nonces = [os.urandom(12) for _ in values]
    ours, theirs = combsiv.AESGCMSIV(KEY), reference.AESGCMSIV(KEY)
    fast, slow = (3, 1) if QUICK else (7, 3)
    sealed_column = ours.encrypt_column(column)
    sealed_list = ours.encrypt_many(nonces, values)
    sealed_rows = sealed_column.to_pylist()
    print(f"\n{rows} rows of the Internet mix, {total / 1e6:.0f} MB; median seconds per call\n")
    print("| call | cores | seconds | GB/s | column speedup |")
    print("|---|---|---:|---:|---:|")
    loop = {
        "encrypt": median_seconds(lambda: cryptography_seal_rows(theirs, values), slow),
        "decrypt": median_seconds(lambda: cryptography_open_rows(theirs, sealed_rows), slow),
    }
    for cores, threads in (("1", 1), ("all", 0)):
        timed = {
            ("encrypt", "column"): lambda: ours.encrypt_column(column, threads=threads),
            ("encrypt", "list"): lambda: ours.encrypt_many(nonces, values, threads=threads),
            ("decrypt", "column"): lambda: ours.decrypt_column(sealed_column, threads=threads),
            ("decrypt", "list"): lambda: ours.decrypt_many(nonces, sealed_list, threads=threads),
        }
        for op in ("encrypt", "decrypt"):
            t_column = median_seconds(timed[(op, "column")], fast)
            t_list = median_seconds(timed[(op, "list")], fast)
            rows_of = [
                (f"AESGCMSIV.{op}_column (Arrow)", t_column),
                (f"AESGCMSIV.{op}_many (lists)", t_list),
            ]
            if cores == "1":
                rows_of.append((f"cryptography AESGCMSIV.{op}, per-row loop", loop[op]))
                targets.append((f"one core: {op}_column vs {op}_many", t_list / t_column, 2.5))
                targets.append((f"one core: {op}_column vs cryptography loop", loop[op] / t_column, 20.0))
            for name, seconds in rows_of:
                print(f"| {name} | {cores} | {seconds:.3f} | {total / seconds / 1e9:.2f} | {seconds / t_column:.1f}x |")


def spark_rows_per_second(rows, workers, udf):
    """Rows per second of a Spark job that makes the mix column and seals it with ``udf``
    (a mapInArrow function), on ``workers`` task slots; the result is discarded (noop
    sink), so the figure is the workers' throughput."""
    from pyspark.sql import SparkSession
    from pyspark.sql.types import BinaryType, LongType, StructField, StructType

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master(f"local[{workers}]")
        .appName("combsiv bench")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        h = "pmod(hash(id), 100)"
        length = f"CASE WHEN {h} < 44 THEN 40 + id % 61 WHEN {h} < 81 THEN 1400 + id % 101 ELSE 101 + id % 1299 END"
        frame = spark.range(0, rows, numPartitions=8 * workers).selectExpr(
            "id", f"cast(repeat('x', int({length})) AS binary) AS value"
        )
        schema = StructType([StructField("id", LongType()), StructField("value", BinaryType())])
        job = lambda: frame.mapInArrow(udf, schema).write.format("noop").mode("overwrite").save()  # noqa: E731
        job()  # warm: Python workers started
        return rows / median_seconds(job, 1 if QUICK else 3)
    finally:
        spark.stop()


def spark_alone(batches):
    """The engine alone: the batches pass through the Python workers unchanged."""
    yield from batches


def spark_combsiv(batches):
    cipher = combsiv.AESGCMSIV(KEY)
    for batch in batches:
        yield batch.set_column(1, "value", cipher.encrypt_column(batch[1], threads=1))


def spark_cryptography(batches):
    aead = reference.AESGCMSIV(KEY)
    for batch in batches:
        sealed = cryptography_seal_rows(aead, batch[1].to_pylist())
        yield batch.set_column(1, "value", pa.array(sealed, type=pa.binary()))


@functools.lru_cache(maxsize=1)
def cached_mix_column(rows):
    """One worker's column, made once: the job then measures sealing and the engine, not
    the kernel zeroing fresh pages for new data (on a VM, as slow as sealing it)."""
    return mix_column(rows, rows, random_bytes=False)


def dask_partition(seed, rows):
    import pandas as pd

    return pd.DataFrame({"value": pd.arrays.ArrowExtensionArray(cached_mix_column(rows))})


def dask_alone(df):
    return df


def dask_combsiv(df):
    import pandas as pd

    sealed = combsiv.AESGCMSIV(KEY).encrypt_column(df["value"], threads=1)
    return df.assign(value=pd.arrays.ArrowExtensionArray(sealed))


def dask_cryptography(df):
    import pandas as pd

    sealed = cryptography_seal_rows(reference.AESGCMSIV(KEY), df["value"].tolist())
    return df.assign(value=pd.arrays.ArrowExtensionArray(pa.array(sealed, type=pa.large_binary())))


def dask_rows_per_second(rows, workers, seal):
    """Rows per second of a Dask job whose workers seal the mix column (made once per
    worker) with ``seal``; only the sealed bytes' total comes back."""
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    parts = 8 * workers
    runs = iter(range(1, 100))

    def job():
        # New seeds each run: Dask would answer a graph it has just computed from memory.
        run = next(runs)
        seeds = range(run * parts, (run + 1) * parts)
        frame = dd.from_map(dask_partition, seeds, rows=rows // parts)
        sealed = frame.map_partitions(seal, meta=frame._meta)
        return sealed.map_partitions(value_bytes, meta=(None, "int64")).sum().compute()

    with LocalCluster(n_workers=workers, processes=True, threads_per_worker=1) as cluster, Client(cluster):
        job()
        return (rows // parts * parts) / median_seconds(job, 1 if QUICK else 3)


def value_bytes(df):
    """The bytes of a partition's values: a result that needs every row sealed."""
    import pandas as pd
    import pyarrow.compute as pc

    return pd.Series([pc.sum(pc.binary_length(pa.array(df["value"]))).as_py() or 0])


def clusters(targets):
    print(f"\n{CLUSTER_ROWS} rows of the Internet mix sealed on the workers; rows per second\n")
    print("| engine | workers | engine alone | combsiv encrypt_column | cryptography per row | speedup |")
    print("|---|---:|---:|---:|---:|---:|")
    engines = [("Spark mapInArrow", spark_rows_per_second, spark_alone, spark_combsiv, spark_cryptography)]
    engines.append(("Dask map_partitions", dask_rows_per_second, dask_alone, dask_combsiv, dask_cryptography))
    for name, run, alone, ours, theirs in engines:
        per_workers = {}
        for workers in (1, 2):
            r_alone = run(CLUSTER_ROWS, workers, alone)
            r_ours = run(CLUSTER_ROWS, workers, ours)
            r_theirs = run(CLUSTER_ROWS, workers, theirs)
            per_workers[workers] = r_ours
            print(
                f"| {name} | {workers} | {r_alone:,.0f} | {r_ours:,.0f} | {r_theirs:,.0f} "
                f"| {r_ours / r_theirs:.1f}x |"
            )
            if workers == 2:
                targets.append((f"{name}, 2 workers: combsiv vs cryptography", r_ours / r_theirs, 10.0))
        targets.append((f"{name}: 2 workers vs 1", per_workers[2] / per_workers[1], 1.7))


def main():
    import cryptography

    cpu = "unknown CPU"
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    print(
        f"combsiv (backend {combsiv.backend()}) vs cryptography {cryptography.__version__}, pyarrow "
        f"{pa.__version__}, Python {sys.version.split()[0]}; {cpu}, {os.cpu_count()} cores"
    )
    targets = []
    if MACHINE:
        one_machine(ROWS, targets)
    if CLUSTERS:
        with tempfile.TemporaryDirectory():
            clusters(targets)
    print("\n| target | measured | wanted | |\n|---|---:|---:|---|")
    for name, measured, wanted in targets:
        print(f"| {name} | {measured:.2f}x | >= {wanted}x | {'met' if measured >= wanted else 'NOT met'} |")


if __name__ == "__main__":
    main()
