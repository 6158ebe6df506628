"""C2SP chunked encryption of a large file, and random reads into it, against
`cryptography`'s Cobblestone in the same run. Medians of alternating repeats.

    python bindings/python/bench_c2sp.py [--quick] [--mib N] [--dir PATH]

Rows: encrypting and decrypting an N MiB file (default 1024) with Cobblestone-256:
`cryptography` (its incremental API over 1 MiB reads, on one core), combsiv on one core
(`threads=1`) and on every core, in GB/s, with combsiv's ratio to `cryptography` and its
every-core rate over cores x its one-core rate. Then a 4 KiB read at a random offset through
`open_encrypted` (the file opened once), in microseconds, next to what two chunks of
decryption and a read of them cost. The files go to /dev/shm by default, so that the disk
and `fsync` do not hide the work.
"""

import os
import random
import statistics
import sys
import tempfile
import time

from cryptography import cobblestone as theirs

from combsiv import AESGCM
from combsiv import cobblestone as ours

QUICK = "--quick" in sys.argv
MIB = int(sys.argv[sys.argv.index("--mib") + 1]) if "--mib" in sys.argv else 1024
DIRECTORY = sys.argv[sys.argv.index("--dir") + 1] if "--dir" in sys.argv else "/dev/shm"
REPEATS = 3 if QUICK else 5
PIECE = 1 << 20
CHUNK = 16384


def cobblestone_file(src, dst, step):
    """`cryptography`'s incremental API over a file, written as it goes."""
    with open(src, "rb") as inp, open(dst, "wb") as out:
        while piece := inp.read(PIECE):
            out.write(step.update(piece))
        out.write(step.finalize())


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main():
    key, context = os.urandom(32), b"bench"
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory(dir=DIRECTORY) as scratch:
        plain = os.path.join(scratch, "plain")
        with open(plain, "wb") as out:
            for _ in range(MIB):
                out.write(os.urandom(PIECE))
        sealed = os.path.join(scratch, "sealed")
        other = os.path.join(scratch, "other")
        opened = os.path.join(scratch, "opened")
        cobblestone_file(plain, sealed, theirs.Cobblestone256Encryptor(key, context))

        def ours_encrypt(threads):
            return lambda: ours.encrypt_file(
                plain, other, key, context, threads=threads, overwrite=True
            )

        def ours_decrypt(threads):
            return lambda: ours.decrypt_file(
                sealed, opened, key, context, threads=threads, overwrite=True
            )

        subjects = {
            ("encrypt", "cryptography"): lambda: cobblestone_file(
                plain, other, theirs.Cobblestone256Encryptor(key, context)
            ),
            ("encrypt", "combsiv 1 core"): ours_encrypt(1),
            ("encrypt", f"combsiv {cores} cores"): ours_encrypt(0),
            ("decrypt", "cryptography"): lambda: cobblestone_file(
                sealed, opened, theirs.Cobblestone256Decryptor(key, context)
            ),
            ("decrypt", "combsiv 1 core"): ours_decrypt(1),
            ("decrypt", f"combsiv {cores} cores"): ours_decrypt(0),
        }
        times = {name: [] for name in subjects}
        for _ in range(REPEATS):
            for name, fn in subjects.items():
                times[name].append(timed(fn))
        size = MIB * PIECE
        print(f"Cobblestone-256, a {MIB} MiB file in {DIRECTORY}, medians of {REPEATS}:")
        print(f"{'':8} {'subject':18} {'GB/s':>7} {'vs cryptography':>16}")
        for (op, who), samples in times.items():
            rate = size / statistics.median(samples) / 1e9
            base = size / statistics.median(times[(op, "cryptography")]) / 1e9
            print(f"{op:8} {who:18} {rate:7.2f} {rate / base:15.2f}x")
        for op in ("encrypt", "decrypt"):
            one = statistics.median(times[(op, "combsiv 1 core")])
            every = statistics.median(times[(op, f"combsiv {cores} cores")])
            print(f"{op}: every core / ({cores} x one core) = {one / every / cores:.2f}")

        # Random 4 KiB reads: the file opened once (its final chunk authenticated there).
        rng = random.Random(1)
        reads = 500 if QUICK else 2000
        offsets = [rng.randrange(size - 4096) for _ in range(reads)]
        batches = []
        with ours.open_encrypted(sealed, key, context) as f:
            for _ in range(REPEATS):
                start = time.perf_counter()
                for offset in offsets:
                    f.seek(offset)
                    f.read(4096)
                batches.append((time.perf_counter() - start) / reads)
        per_read = statistics.median(batches) * 1e6
        # What the bound is made of: one 16 KiB chunk opened, and a chunk read with pread.
        aead = AESGCM(key)
        chunk = aead.encrypt(b"\0" * 12, os.urandom(CHUNK), None)
        open_chunk = statistics.median(
            timed(lambda: [aead.decrypt(b"\0" * 12, chunk, None) for _ in range(200)]) / 200
            for _ in range(REPEATS)
        )
        fd = os.open(sealed, os.O_RDONLY)
        try:
            pread = statistics.median(
                timed(lambda: [os.pread(fd, CHUNK + 16, o) for o in offsets[:200]]) / 200
                for _ in range(REPEATS)
            )
        finally:
            os.close(fd)
        bound = (2 * open_chunk + 2 * pread) * 1e6
        print(
            f"random 4 KiB read: {per_read:.1f} us (one 16 KiB chunk opened "
            f"{open_chunk * 1e6:.1f} us, one pread {pread * 1e6:.1f} us: two of each "
            f"{bound:.1f} us)"
        )


if __name__ == "__main__":
    main()
