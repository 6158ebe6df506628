"""combsiv against `cryptography` from Python, in the same run: per-call throughput of
`encrypt` at 16 B, 1 KiB, 16 KiB and 1 MiB, and `encrypt_many` over the Internet mix against
a Python loop over `cryptography`'s `AESGCMSIV.encrypt`. Medians of repeated timings.

    python bindings/python/bench.py [--quick]
"""

import os
import random
import statistics
import sys
import time

from cryptography.hazmat.primitives.ciphers import aead as reference

import combsiv

QUICK = "--quick" in sys.argv
SIZES = [16, 1024, 16 * 1024, 1024 * 1024]


def per_call_seconds(fn, size):
    """Median seconds per call over repeats of a batch of calls that takes ~20 ms."""
    calls = max(1, (2 << 20) // max(size, 64))
    repeats = 3 if QUICK else 9
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


def internet_mix(rng, count):
    """44 % 40-100 B, 37 % 1400-1500 B, 19 % in between."""
    sizes = []
    for _ in range(count):
        r = rng.random()
        if r < 0.44:
            sizes.append(rng.randint(40, 100))
        elif r < 0.81:
            sizes.append(rng.randint(1400, 1500))
        else:
            sizes.append(rng.randint(101, 1399))
    return [rng.randbytes(n) for n in sizes]


def main():
    key = bytes(range(32))
    nonce = os.urandom(12)
    rows = []
    ratios = {}
    for name, ours, theirs in [
        ("AESGCMSIV", combsiv.AESGCMSIV(key), reference.AESGCMSIV(key)),
        ("AESGCM", combsiv.AESGCM(key), reference.AESGCM(key)),
    ]:
        for size in SIZES:
            data = os.urandom(size)
            t_ours = per_call_seconds(lambda: ours.encrypt(nonce, data, None), size)
            t_theirs = per_call_seconds(lambda: theirs.encrypt(nonce, data, None), size)
            ratios[(name, size)] = t_theirs / t_ours
            rows.append(
                f"| {name}.encrypt | {size} B | {t_ours * 1e6:.2f} us, {size / t_ours / 1e9:.2f} GB/s "
                f"| {t_theirs * 1e6:.2f} us, {size / t_theirs / 1e9:.2f} GB/s | {t_theirs / t_ours:.1f}x |"
            )
    rng = random.Random(1)
    messages = internet_mix(rng, 1000)
    nonces = [os.urandom(12) for _ in messages]
    total = sum(map(len, messages))
    ours, theirs = combsiv.AESGCMSIV(key), reference.AESGCMSIV(key)
    repeats = 5 if QUICK else 15

    def median(fn):
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    t_batch = median(lambda: ours.encrypt_many(nonces, messages))
    t_ours_loop = median(lambda: [ours.encrypt(n, m, None) for n, m in zip(nonces, messages)])
    t_loop = median(lambda: [theirs.encrypt(n, m, None) for n, m in zip(nonces, messages)])
    ratios["mix"] = t_loop / t_batch
    rows.append(
        f"| AESGCMSIV.encrypt_many | mix, 1000 messages | {t_batch * 1e6:.0f} us, {total / t_batch / 1e9:.2f} GB/s "
        f"| loop: {t_loop * 1e6:.0f} us, {total / t_loop / 1e9:.2f} GB/s | {t_loop / t_batch:.1f}x |"
    )
    rows.append(
        f"| AESGCMSIV.encrypt, Python loop | mix, 1000 messages | {t_ours_loop * 1e6:.0f} us, "
        f"{total / t_ours_loop / 1e9:.2f} GB/s | loop: {t_loop * 1e6:.0f} us | {t_loop / t_ours_loop:.1f}x |"
    )
    import cryptography

    print(
        f"combsiv (backend {combsiv.backend()}) vs cryptography {cryptography.__version__}, "
        f"Python {sys.version.split()[0]}; median per call\n"
    )
    print("| call | size | combsiv | cryptography | speedup |")
    print("|---|---|---:|---:|---:|")
    for row in rows:
        print(row)
    targets = [
        ("AESGCMSIV.encrypt 16 B", ratios[("AESGCMSIV", 16)], 4.0),
        ("AESGCMSIV.encrypt 16 KiB", ratios[("AESGCMSIV", 16384)], 6.0),
        ("AESGCMSIV.encrypt 1 MiB", ratios[("AESGCMSIV", 1 << 20)], 6.0),
        ("AESGCM.encrypt 16 B", ratios[("AESGCM", 16)], 1.5),
        ("AESGCM.encrypt 16 KiB", ratios[("AESGCM", 16384)], 1.0),
        ("encrypt_many over the mix vs a cryptography loop", ratios["mix"], 8.0),
    ]
    print("\n| target | measured | wanted | |\n|---|---:|---:|---|")
    for name, measured, wanted in targets:
        print(f"| {name} | {measured:.2f}x | >= {wanted}x | {'met' if measured >= wanted else 'NOT met'} |")


if __name__ == "__main__":
    main()
