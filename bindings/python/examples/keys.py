"""How the examples' workers get the key: each worker reads it from a key file and keeps one
cipher per key file, so that only the file's path travels with the tasks.

Cipher objects cannot be pickled (``TypeError``) and never show their key in a ``repr``:
a key reaches a worker only the way you send it. Ship a *path* (a file only the service's
user can read, a mounted secret, a KMS key id your function resolves on the worker), not
the key: a key captured in a Spark or Dask function is pickled into every task and crosses
the network with it (encrypted only where the engine's own transport encryption is on:
``spark.network.crypto.enabled``, Dask's TLS security).
"""

import functools
import os
import stat

import combsiv


def write_key_file(path):
    """A new random 256-bit key in a file only this user can read (mode 0600)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(combsiv.AESGCMSIV.generate_key(256))
    return path


@functools.lru_cache(maxsize=None)
def cipher(key_path, backend=None):
    """The AES-GCM-SIV cipher of the key in ``key_path``, made once per worker process.

    The file must be 16 or 32 bytes and readable by this user only."""
    with open(key_path, "rb") as f:
        mode = os.fstat(f.fileno()).st_mode
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise PermissionError(f"{key_path} is readable by other users (chmod 600 it)")
        return combsiv.AESGCMSIV(f.read(), backend=backend)
