"""Buffers that another thread writes while a call reads them: every call acts on one
snapshot of its inputs, so a ciphertext is opened exactly as it was authenticated and a
seal always opens again."""

import os
import threading
import time

import pytest

import combsiv

SECONDS = 1.0


def flip_continuously(buf, position, stop):
    while not stop.is_set():
        buf[position] ^= 1


def racing(buf, position, body):
    """Runs `body` repeatedly for SECONDS while another thread flips one bit of `buf`."""
    stop = threading.Event()
    flipper = threading.Thread(target=flip_continuously, args=(buf, position, stop))
    flipper.start()
    calls = 0
    try:
        deadline = time.monotonic() + SECONDS
        while time.monotonic() < deadline:
            body()
            calls += 1
    finally:
        stop.set()
        flipper.join()
    return calls


@pytest.mark.parametrize("cls", [combsiv.AESGCM, combsiv.AESGCMSIV])
def test_a_ciphertext_changed_mid_call_is_refused_or_opened_exactly(cls, backend):
    cipher = cls(bytes(range(32)), backend=backend)
    nonce = os.urandom(12)
    plaintext = os.urandom(1 << 20)
    sealed = bytearray(cipher.encrypt(nonce, plaintext, b"ad"))
    outcomes = {"refused": 0, "opened": 0}

    def decrypt():
        try:
            opened = cipher.decrypt(nonce, sealed, b"ad")
        except combsiv.InvalidTag:
            outcomes["refused"] += 1
            return
        assert opened == plaintext, "a changed ciphertext was opened as authentic"
        outcomes["opened"] += 1

    racing(sealed, len(plaintext) // 2, decrypt)
    assert outcomes["refused"] + outcomes["opened"] > 0


def test_a_plaintext_changed_mid_call_still_seals_something_that_opens(backend):
    cipher = combsiv.AESGCMSIV(bytes(range(32)), backend=backend)
    nonce = os.urandom(12)
    plaintext = bytearray(os.urandom(1 << 20))
    position = len(plaintext) // 2
    sealed = []
    racing(plaintext, position, lambda: sealed.append(cipher.encrypt(nonce, plaintext, None)))
    unopenable = 0
    for ciphertext in sealed:
        try:
            opened = cipher.decrypt(nonce, ciphertext, None)
        except combsiv.InvalidTag:
            unopenable += 1
            continue
        # The snapshot holds the bit either way; nothing else may differ.
        assert opened[:position] == plaintext[:position]
        assert opened[position + 1 :] == plaintext[position + 1 :]
    assert unopenable == 0, f"{unopenable} of {len(sealed)} ciphertexts can never be opened"


def test_batches_and_buffers_read_one_snapshot(backend):
    cipher = combsiv.AESGCMSIV(bytes(32), backend=backend)
    nonces = [os.urandom(12) for _ in range(4)]
    messages = [bytearray(os.urandom(300_000)) for _ in range(4)]
    sealed = []
    racing(messages[2], 1000, lambda: sealed.append(cipher.encrypt_many(nonces, messages)))
    for batch in sealed:
        assert len(cipher.decrypt_many(nonces, batch)) == 4
