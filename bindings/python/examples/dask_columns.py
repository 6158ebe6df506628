"""Encrypt and decrypt a table column across Dask workers (``distributed.LocalCluster``
with worker processes) with ``map_partitions``.

Each partition's column is sealed in one ``encrypt_column`` call: no Python object per row.
The key stays in a key file that every worker reads (see ``keys.py``); only its path
travels with the tasks.

    python dask_columns.py [ROWS]       # one worker process per core
"""

import sys

import pandas as pd
import pyarrow as pa

import keys


def encrypt_partition(df, key_path, column, nonce=None):
    """``df`` with ``column`` sealed (randomized, or deterministic under ``nonce``).
    ``threads=1``: Dask already runs one task per worker thread."""
    sealed = keys.cipher(key_path).encrypt_column(df[column], nonce=nonce, threads=1)
    return df.assign(**{column: pd.arrays.ArrowExtensionArray(sealed)})


def decrypt_partition(df, key_path, column, nonce=None, as_string=True):
    """``df`` with ``column`` opened; ``as_string`` decodes it as UTF-8."""
    opened = keys.cipher(key_path).decrypt_column(df[column], nonce=nonce, threads=1)
    if as_string:
        opened = opened.cast(pa.large_string())
    return df.assign(**{column: pd.arrays.ArrowExtensionArray(opened)})


def meta_with(meta, column, data_type):
    """Dask's ``meta`` of the result: ``meta`` with ``column`` of the Arrow ``data_type``."""
    return meta.assign(**{column: pd.Series([], dtype=pd.ArrowDtype(data_type))})


def main(rows=100_000):
    import os
    import tempfile

    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    with LocalCluster(processes=True, threads_per_worker=1) as cluster, Client(cluster):
        with tempfile.TemporaryDirectory() as tmp:
            key_path = keys.write_key_file(os.path.join(tmp, "column.key"))
            ids = pd.RangeIndex(rows)
            people = pd.DataFrame(
                {"id": ids, "ssn": pd.Series([f"{i * 7919 % 10**9:09d}" for i in ids], dtype="string[pyarrow]")}
            )
            frame = dd.from_pandas(people, npartitions=len(cluster.workers) * 2)
            sealed = frame.map_partitions(
                encrypt_partition, key_path, "ssn", meta=meta_with(frame._meta, "ssn", pa.large_binary())
            )
            opened = sealed.map_partitions(
                decrypt_partition, key_path, "ssn", meta=meta_with(frame._meta, "ssn", pa.large_string())
            ).compute()
            assert opened["ssn"].tolist() == people["ssn"].tolist()
            print(f"{rows} rows sealed and opened across {len(cluster.workers)} workers")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
