"""The cluster examples on real engines: a local Spark session with two Python workers and a
Dask LocalCluster of two worker processes, encrypting and decrypting a table column."""

import pathlib
import sys

import pytest

from engines import require

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"
sys.path.insert(0, str(EXAMPLES))

import keys  # noqa: E402

NONCE = b"column nonce"
ROWS = 5000


@pytest.fixture(scope="module")
def key_path(tmp_path_factory):
    return keys.write_key_file(str(tmp_path_factory.mktemp("keys") / "column.key"))


@pytest.fixture(scope="module")
def spark():
    require("pyspark")
    import spark_columns

    session = spark_columns.session("local[2]")
    yield session
    session.stop()


def test_spark_map_in_arrow_round_trip(spark, key_path):
    import spark_columns
    from pyspark.sql.types import BinaryType, StringType

    people = spark.range(ROWS).selectExpr(
        "id", "CASE WHEN id % 10 = 3 THEN NULL ELSE repeat(string(id), int(id % 7)) END AS ssn"
    )
    people = people.repartition(4)
    for nonce in (None, NONCE):
        sealed = people.mapInArrow(
            spark_columns.encrypt_batches(key_path, "ssn", nonce),
            spark_columns.with_type(people.schema, "ssn", BinaryType()),
        )
        opened = sealed.mapInArrow(
            spark_columns.decrypt_batches(key_path, "ssn", nonce),
            spark_columns.with_type(sealed.schema, "ssn", StringType()),
        )
        assert sorted(opened.collect()) == sorted(people.collect())
    fixed = people.mapInArrow(
        spark_columns.encrypt_batches(key_path, "ssn", NONCE),
        spark_columns.with_type(people.schema, "ssn", BinaryType()),
    )
    # Deterministic: equal values, equal ciphertexts, so the sealed column still groups.
    assert fixed.select("ssn").distinct().count() == people.select("ssn").distinct().count()


def test_spark_tampered_row_fails_the_task(spark, key_path, tmp_path):
    import spark_columns
    from pyspark.sql.types import BinaryType, StringType

    people = spark.range(100).selectExpr("id", "string(id) AS ssn")
    sealed = people.mapInArrow(
        spark_columns.encrypt_batches(key_path, "ssn"), spark_columns.with_type(people.schema, "ssn", BinaryType())
    )
    tampered = sealed.selectExpr("id", "CASE WHEN id = 7 THEN reverse(ssn) ELSE ssn END AS ssn")
    opened = tampered.mapInArrow(
        spark_columns.decrypt_batches(key_path, "ssn"), spark_columns.with_type(sealed.schema, "ssn", StringType())
    )
    with pytest.raises(Exception, match="InvalidTag"):
        opened.collect()


@pytest.fixture(scope="module")
def dask_client():
    require("dask.dataframe")
    distributed = require("distributed")
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1) as cluster:
        with distributed.Client(cluster) as client:
            client.upload_file(keys.__file__)
            client.upload_file(str(EXAMPLES / "dask_columns.py"))
            yield client


def test_dask_map_partitions_round_trip(dask_client, key_path):
    import dask.dataframe as dd
    import dask_columns
    import pandas as pd
    import pyarrow as pa

    values = [None if i % 10 == 3 else str(i) * (i % 7) for i in range(ROWS)]
    people = pd.DataFrame({"id": range(ROWS), "ssn": pd.Series(values, dtype=pd.ArrowDtype(pa.large_string()))})
    frame = dd.from_pandas(people, npartitions=4)
    for nonce in (None, NONCE):
        sealed = frame.map_partitions(
            dask_columns.encrypt_partition,
            key_path,
            "ssn",
            nonce,
            meta=dask_columns.meta_with(frame._meta, "ssn", pa.large_binary()),
        )
        opened = sealed.map_partitions(
            dask_columns.decrypt_partition,
            key_path,
            "ssn",
            nonce,
            meta=dask_columns.meta_with(frame._meta, "ssn", pa.large_string()),
        ).compute()
        assert opened["ssn"].tolist() == people["ssn"].tolist()
    # Both workers took part.
    assert len(dask_client.scheduler_info()["workers"]) == 2


def test_a_cipher_cannot_be_shipped_by_accident(dask_client):
    """A cipher captured in a task is refused at pickling: keys travel only as you send them."""
    import combsiv

    cipher = combsiv.AESGCMSIV(bytes(16))
    with pytest.raises(Exception, match="serialize|pickle"):
        dask_client.submit(lambda: cipher.backend).result()
