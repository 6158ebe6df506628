"""combsiv.tink against Tink itself (the ``tink`` package): keysets Tink wrote, read from
its JSON and binary forms, several keys per keyset (the primary encrypts, any enabled key
decrypts by its id), both directions, columns with null rows, empty values and a tampered
row; what is not read is refused by name."""

import pytest

from combsiv import InvalidTag
from combsiv import tink as ours
from engines import require

TEMPLATES = ["AES128_GCM", "AES256_GCM_RAW", "AES128_GCM_SIV_RAW", "AES256_GCM_SIV"]
ROWS = [b"alice", None, b"", b"x" * 1000, None, b"\x00" * 17]


def tink_keyset(*templates):
    """A keyset of one key per template, the last one primary, as Tink handles and as our
    Keyset read from both forms."""
    tink = require("tink")
    from tink import aead, secret_key_access
    from tink.proto import tink_pb2

    aead.register()
    token = secret_key_access.TOKEN
    keys = []
    for name in templates:
        handle = tink.new_keyset_handle(getattr(aead.aead_key_templates, name))
        keys.append(tink_pb2.Keyset.FromString(tink.proto_keyset_format.serialize(handle, token)).key[0])
    proto = tink_pb2.Keyset(primary_key_id=keys[-1].key_id, key=keys)
    handle = tink.proto_keyset_format.parse(proto.SerializeToString(), token)
    json_form = tink.json_proto_keyset_format.serialize(handle, token)
    return handle.primitive(aead.Aead), proto, json_form


@pytest.mark.parametrize("template", TEMPLATES)
def test_each_reads_the_other(template):
    theirs, proto, json_form = tink_keyset(template)
    for keyset in (ours.Keyset.from_json(json_form), ours.Keyset.from_binary(proto.SerializeToString())):
        assert keyset.primary_key_id == proto.primary_key_id
        for value, ad in [(b"", b""), (b"hello", b"row 1"), (bytes(5000), b"")]:
            assert keyset.decrypt(theirs.encrypt(value, ad), ad) == value
            assert theirs.decrypt(keyset.encrypt(value, ad), ad) == value
        with pytest.raises(InvalidTag):
            keyset.decrypt(theirs.encrypt(b"v", b"a"), b"b")


def primitive_of(proto, key):
    """Tink's primitive for a keyset holding `key` alone, as primary."""
    tink = require("tink")
    from tink import aead, secret_key_access
    from tink.proto import tink_pb2

    single = tink_pb2.Keyset(primary_key_id=key.key_id, key=[key])
    handle = tink.proto_keyset_format.parse(single.SerializeToString(), secret_key_access.TOKEN)
    return handle.primitive(aead.Aead)


def test_rotated_keysets_and_columns():
    pa = require("pyarrow")
    from tink.proto import tink_pb2

    theirs, proto, _ = tink_keyset("AES128_GCM", "AES256_GCM", "AES256_GCM_SIV_RAW")
    older, disabled = primitive_of(proto, proto.key[0]), primitive_of(proto, proto.key[1])
    proto.key[1].status = tink_pb2.DISABLED
    keyset = ours.Keyset.from_binary(proto.SerializeToString())
    column = pa.array(ROWS, pa.binary())
    # The primary (RAW AES-256-GCM-SIV) encrypts; Tink reads it.
    sealed = ours.encrypt_column(column, keyset, b"table t")
    assert [None if v is None else theirs.decrypt(v, b"table t") for v in sealed.to_pylist()] == ROWS
    # Rows Tink wrote under the older TINK key decrypt by its id; the disabled key's do not.
    tinks = [None if v is None else older.encrypt(v, b"table t") for v in ROWS]
    assert ours.decrypt_column(pa.array(tinks, pa.binary()), keyset, b"table t").to_pylist() == ROWS
    with pytest.raises(InvalidTag):
        keyset.decrypt(disabled.encrypt(b"v", b""), b"")
    tinks[0] = tinks[0][:-1] + bytes([tinks[0][-1] ^ 1])
    with pytest.raises(InvalidTag) as failure:
        ours.decrypt_column(pa.array(tinks, pa.binary()), keyset, b"table t")
    assert failure.value.failed == [0]


def test_what_is_not_read_is_named():
    tink = require("tink")
    from tink import aead, secret_key_access
    from tink.proto import tink_pb2

    aead.register()
    handle = tink.new_keyset_handle(aead.aead_key_templates.AES128_EAX)
    data = tink.proto_keyset_format.serialize(handle, secret_key_access.TOKEN)
    with pytest.raises(ValueError, match="AesEaxKey"):
        ours.Keyset.from_binary(data)
    proto = tink_pb2.Keyset.FromString(
        tink.proto_keyset_format.serialize(tink.new_keyset_handle(aead.aead_key_templates.AES128_GCM), secret_key_access.TOKEN)
    )
    proto.key[0].output_prefix_type = tink_pb2.LEGACY
    with pytest.raises(ValueError, match="LEGACY"):
        ours.Keyset.from_binary(proto.SerializeToString())
    proto.key[0].output_prefix_type = tink_pb2.TINK
    proto.key[0].key_data.value = b"\x1a\x18" + bytes(24)
    with pytest.raises(ValueError, match="AES-192"):
        ours.Keyset.from_binary(proto.SerializeToString())
