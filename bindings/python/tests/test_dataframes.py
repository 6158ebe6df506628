"""The dataframe one-liners of the README, each round-tripping a column."""

import pytest

from engines import require

import combsiv

NONCE = b"column nonce"  # 12 bytes: a deterministic column, for joins
SSNS = ["078-05-1120", None, "", "219-09-9999", "078-05-1120"]


@pytest.fixture
def cipher():
    return combsiv.AESGCMSIV(combsiv.AESGCMSIV.generate_key(256))


def test_polars_map_batches(cipher):
    pl = require("polars")
    df = pl.DataFrame({"ssn": SSNS})
    sealed = df.with_columns(
        pl.col("ssn").map_batches(lambda s: pl.Series(cipher.encrypt_column(s)), return_dtype=pl.Binary)
    )
    assert sealed["ssn"].dtype == pl.Binary
    assert sealed["ssn"][0] != sealed["ssn"][4]  # randomized
    opened = sealed.with_columns(
        pl.col("ssn").map_batches(
            lambda s: pl.Series(cipher.decrypt_column(s)).cast(pl.String), return_dtype=pl.String
        )
    )
    assert opened["ssn"].to_list() == SSNS


def test_polars_deterministic_join(cipher):
    pl = require("polars")
    enc = lambda s: pl.Series(cipher.encrypt_column(s, nonce=NONCE))  # noqa: E731
    people = pl.DataFrame({"ssn": SSNS, "name": ["a", "b", "c", "d", "e"]})
    claims = pl.DataFrame({"ssn": ["219-09-9999"], "claim": [42]})
    both = [d.with_columns(pl.col("ssn").map_batches(enc, return_dtype=pl.Binary)) for d in (people, claims)]
    joined = both[0].join(both[1], on="ssn")
    assert joined["name"].to_list() == ["d"]


def test_pandas_arrow_dtypes(cipher):
    pd = require("pandas")
    pa = require("pyarrow")
    df = pd.DataFrame({"ssn": pd.Series(SSNS, dtype=pd.ArrowDtype(pa.string()))})
    df["ssn"] = pd.arrays.ArrowExtensionArray(cipher.encrypt_column(df["ssn"]))
    assert str(df["ssn"].dtype).startswith("binary")
    df["ssn"] = pd.arrays.ArrowExtensionArray(cipher.decrypt_column(df["ssn"]).cast(pa.string()))
    assert df["ssn"].tolist()[:1] + df["ssn"].tolist()[2:] == SSNS[:1] + SSNS[2:]
    assert pd.isna(df["ssn"][1])


def test_duckdb_arrow_udf(cipher):
    duckdb = require("duckdb")
    pa = require("pyarrow")
    con = duckdb.connect()
    con.create_function(
        "seal", lambda v: cipher.encrypt_column(v), ["VARCHAR"], "BLOB", type="arrow", side_effects=True
    )
    con.create_function(
        "unseal", lambda v: cipher.decrypt_column(v).cast(pa.string()), ["BLOB"], "VARCHAR", type="arrow"
    )
    con.execute("create table people as select * from (values ('078-05-1120'), (null), ('')) t(ssn)")
    con.execute("create table sealed as select seal(ssn) as ssn from people")
    assert con.sql("select unseal(ssn) from sealed").fetchall() == [("078-05-1120",), (None,), ("",)]
    # Many rows: DuckDB hands the UDF vectors of 2048 rows.
    rows = con.sql(
        "select count(*) from (select unseal(seal('x' || i)) = 'x' || i as ok from range(10000) r(i)) where ok"
    ).fetchall()
    assert rows == [(10000,)]
