"""combsiv.cobblestone against `cryptography.cobblestone` itself: what either encrypts the
other decrypts, at the chunk boundaries and at random lengths up to a few MiB, with and without
a context; every truncation, extension, chunk swap and wrong commitment refused by both alike;
the classes' surface (update_into, finalize, errors) as cryptography's."""

import random

import pytest
from cryptography import cobblestone as theirs
from cryptography.exceptions import AlreadyFinalized as TheirAlreadyFinalized
from cryptography.exceptions import InvalidTag as TheirInvalidTag

import combsiv
from combsiv import cobblestone as ours

CHUNK = 16384
SEALED = CHUNK + 16
HEADER = 56
PAIRS = [
    (ours.Cobblestone128Encryptor, ours.Cobblestone128Decryptor,
     theirs.Cobblestone128Encryptor, theirs.Cobblestone128Decryptor),
    (ours.Cobblestone256Encryptor, ours.Cobblestone256Decryptor,
     theirs.Cobblestone256Encryptor, theirs.Cobblestone256Decryptor),
]
SIV = [
    (ours.CobblestoneSiv128Encryptor, ours.CobblestoneSiv128Decryptor),
    (ours.CobblestoneSiv256Encryptor, ours.CobblestoneSiv256Decryptor),
]
LENGTHS = [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK]


def seal(encryptor, key, context, data, piece):
    e = encryptor(key, context)
    if piece == 0:
        return e.update(data) + e.finalize()
    out = b"".join(e.update(data[i:i + piece]) for i in range(0, len(data), piece))
    return out + e.finalize()


def open_(decryptor, key, context, sealed, piece):
    d = decryptor(key, context)
    if piece == 0:
        return d.update(sealed) + d.finalize()
    out = b"".join(d.update(sealed[i:i + piece]) for i in range(0, len(sealed), piece))
    return out + d.finalize()


@pytest.mark.parametrize("pair", PAIRS, ids=["128", "256"])
@pytest.mark.parametrize("context", [b"", b"combsiv and cryptography"])
def test_each_decrypts_the_others_messages(pair, context):
    our_enc, our_dec, their_enc, their_dec = pair
    rng = random.Random(1)
    key = our_enc.generate_key()
    lengths = LENGTHS + [rng.randrange(3 << 20) for _ in range(3)]
    for length in lengths:
        data = rng.randbytes(length)
        piece = rng.choice([0, 1000, CHUNK, SEALED + 7])
        mine = seal(our_enc, key, context, data, piece)
        assert len(mine) == HEADER + length + 16 * (length // CHUNK + 1)
        assert open_(their_dec, key, context, mine, piece) == data
        assert open_(our_dec, key, context, mine, piece) == data
        theirs_ = seal(their_enc, key, context, data, piece)
        assert open_(our_dec, key, context, theirs_, piece) == data


def both_refuse(pair, key, context, sealed):
    _, our_dec, _, their_dec = pair
    for decryptor in (our_dec, their_dec):
        with pytest.raises(TheirInvalidTag):
            open_(decryptor, key, context, sealed, 0)


@pytest.mark.parametrize("pair", PAIRS, ids=["128", "256"])
def test_changed_messages_are_refused_like_cryptography(pair):
    our_enc = pair[0]
    key = our_enc.generate_key()
    sealed = seal(our_enc, key, b"ctx", bytes(2 * CHUNK + 100), 0)
    boundaries = [HEADER + SEALED, HEADER + 2 * SEALED]
    cuts = list(range(0, HEADER + 18)) + [b + d for b in boundaries for d in range(-1, 18)]
    cuts += list(range(len(sealed) - 17, len(sealed)))
    for cut in cuts:
        both_refuse(pair, key, b"ctx", sealed[:cut])
    for extra in [1, 16, SEALED]:
        both_refuse(pair, key, b"ctx", sealed + bytes(extra))
    swapped = bytearray(sealed)
    swapped[HEADER:HEADER + SEALED] = sealed[HEADER + SEALED:HEADER + 2 * SEALED]
    swapped[HEADER + SEALED:HEADER + 2 * SEALED] = sealed[HEADER:HEADER + SEALED]
    both_refuse(pair, key, b"ctx", bytes(swapped))
    for byte in [0, 23, 24, HEADER - 1, HEADER, len(sealed) - 1]:
        changed = bytearray(sealed)
        changed[byte] ^= 1
        both_refuse(pair, key, b"ctx", bytes(changed))
    both_refuse(pair, key, b"other context", sealed)
    both_refuse(pair, our_enc.generate_key(), b"ctx", sealed)


def test_the_surface_is_cryptographys():
    key = ours.Cobblestone128Encryptor.generate_key()
    assert len(key) == 16 and len(ours.Cobblestone256Encryptor.generate_key()) == 32
    for cls in (ours.Cobblestone128Encryptor, ours.Cobblestone128Decryptor):
        with pytest.raises(ValueError, match="key must be 16 bytes"):
            cls(bytes(32), b"")
    e = ours.Cobblestone128Encryptor(key, b"")
    buf = bytearray(HEADER + SEALED)
    with pytest.raises(ValueError, match="buffer must be at least"):
        e.update_into(bytes(CHUNK), bytearray(HEADER + SEALED - 1))
    assert e.update_into(memoryview(bytes(CHUNK)), buf) == HEADER + SEALED
    sealed = bytes(buf) + e.finalize()
    for call in (lambda: e.update(b""), e.finalize):
        with pytest.raises(TheirAlreadyFinalized):
            call()
    d = ours.Cobblestone128Decryptor(key, b"")
    out = bytearray(CHUNK)
    assert d.update_into(sealed[:HEADER + SEALED], out) == CHUNK
    assert bytes(out) == bytes(CHUNK)
    assert d.update(sealed[HEADER + SEALED:]) == b""  # the empty final chunk's tag
    assert d.finalize() == b""
    with pytest.raises(TheirAlreadyFinalized):
        d.update(b"")
    # A failed decryptor takes nothing more, as cryptography's.
    d = ours.Cobblestone128Decryptor(key, b"wrong")
    with pytest.raises(TheirInvalidTag):
        d.update(sealed)
    with pytest.raises(TheirAlreadyFinalized):
        d.update(b"")
    assert issubclass(combsiv.AlreadyFinalized, TheirAlreadyFinalized)


@pytest.mark.parametrize("pair", SIV, ids=["siv128", "siv256"])
def test_the_gcm_siv_instantiation_round_trips_and_is_not_cobblestone(pair):
    encryptor, decryptor = pair
    key = encryptor.generate_key()
    for length in LENGTHS:
        data = bytes(range(256)) * (length // 256) + bytes(length % 256)
        sealed = seal(encryptor, key, b"ctx", data, 5000)
        assert open_(decryptor, key, b"ctx", sealed, 5000) == data
    gcm = theirs.Cobblestone128Decryptor if len(key) == 16 else theirs.Cobblestone256Decryptor
    with pytest.raises(TheirInvalidTag):
        open_(gcm, key, b"ctx", sealed, 0)
