"""Encrypt and decrypt a table column across Spark workers with ``mapInArrow``.

Each task receives Arrow record batches and seals the column in one ``encrypt_column`` call
per batch: no Python object per row. The key stays in a key file that every worker reads
(see ``keys.py``); only its path travels with the tasks.

    python spark_columns.py [ROWS]      # a local SparkSession on every core
"""

import sys

import pyarrow as pa

import keys


def _replace(batch, column, values):
    i = batch.schema.get_field_index(column)
    return batch.set_column(i, column, values)


def encrypt_batches(key_path, column, nonce=None):
    """A ``mapInArrow`` function sealing ``column`` (randomized, or deterministic under
    ``nonce``). ``threads=1``: Spark already runs one task per core."""

    def run(batches):
        cipher = keys.cipher(key_path)
        for batch in batches:
            yield _replace(batch, column, cipher.encrypt_column(batch[column], nonce=nonce, threads=1))

    return run


def decrypt_batches(key_path, column, nonce=None, as_string=True):
    """A ``mapInArrow`` function opening ``column``; ``as_string`` decodes it as UTF-8."""

    def run(batches):
        cipher = keys.cipher(key_path)
        for batch in batches:
            opened = cipher.decrypt_column(batch[column], nonce=nonce, threads=1)
            yield _replace(batch, column, opened.cast(pa.string()) if as_string else opened)

    return run


def with_type(schema, column, data_type):
    """``schema`` with ``column`` of ``data_type`` (the output schema of a mapInArrow)."""
    from pyspark.sql.types import StructField, StructType

    return StructType(
        [StructField(f.name, data_type, f.nullable) if f.name == column else f for f in schema.fields]
    )


def session(master="local[*]"):
    """A local SparkSession whose Python workers run this interpreter and can import this
    module and ``keys``."""
    import os

    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = SparkSession.builder.master(master).appName("combsiv columns").getOrCreate()
    spark.sparkContext.addPyFile(keys.__file__)
    spark.sparkContext.addPyFile(__file__)
    return spark


def main(rows=100_000):
    import os
    import tempfile

    from pyspark.sql.types import BinaryType, StringType

    spark = session()
    with tempfile.TemporaryDirectory() as tmp:
        key_path = keys.write_key_file(os.path.join(tmp, "column.key"))
        people = spark.range(rows).selectExpr("id", "format_string('%09d', id * 7919 % 1000000000) AS ssn")
        sealed = people.mapInArrow(encrypt_batches(key_path, "ssn"), with_type(people.schema, "ssn", BinaryType()))
        sealed.show(3, truncate=40)
        opened = sealed.mapInArrow(decrypt_batches(key_path, "ssn"), with_type(sealed.schema, "ssn", StringType()))
        assert opened.exceptAll(people).count() == 0
        print(f"{rows} rows sealed and opened across {spark.sparkContext.defaultParallelism} workers")
    spark.stop()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
