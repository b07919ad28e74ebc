"""Consistency checks of the SophOMR paper's numbers as recorded in hepkg.reference.omr."""
import math

import pytest

from hepkg.reference import OMR
from hepkg.reference import omr

TABLES = {"TABLE3": omr.TABLE3, "TABLE7": omr.TABLE7}


def _ratio(table, num, den):
    return TABLES[table][num[0]][num[1]] / TABLES[table][den[0]][den[1]]


def test_exported():
    assert OMR is omr


def test_table3_and_table7_schemes_and_columns():
    assert set(omr.TABLE3) == {"perfomr", "sophomr", "perfomd", "sophomd"}
    assert set(omr.TABLE7) == set(omr.TABLE3) | {"perfomr-nu16", "perfomd-nu16"}
    for table in (omr.TABLE3, omr.TABLE7):
        for key, row in table.items():
            assert row["label"] == omr.LABELS[key]
            assert set(row) == {"label", *omr.TABLE_COLUMNS}
            assert all(row[c] > 0 for c in omr.TABLE_COLUMNS)


def test_sophomr_sizes_do_not_depend_on_n():
    for key in ("sophomr", "sophomd"):
        for col in ("decode_ms", "detection_key_mb", "digest_kb"):
            assert omr.TABLE3[key][col] == omr.TABLE7[key][col]
    assert omr.TABLE7["sophomr"]["digest_s"] > 6 * omr.TABLE3["sophomr"]["digest_s"]  # 8x the payloads


@pytest.mark.parametrize("name", sorted(omr.SPEEDUPS))
def test_stated_speedups_against_tables(name):
    stated, where, table, num, den = omr.SPEEDUPS[name]
    assert "l." in where
    recomputed = round(_ratio(table, num, den), 1)  # the text prints one decimal
    if name in omr.TABLE7_SPEEDUPS:  # the text's 3.0x / 1.1x disagree with Table 7
        assert recomputed != stated
        assert any(f"{stated}x" in m[1] and "Table 7" in m[0] for m in omr.MISPRINTS)
        assert round(_ratio(table, num, den), 2) == omr.TABLE7_SPEEDUPS[name]
    else:
        assert recomputed == stated


def test_table7_speedups_are_recorded_as_misprints():
    assert omr.TABLE7_SPEEDUPS == {"omr-digest-2^19-vs-nu2": 3.28, "omr-digest-2^19-vs-nu16": 1.25}
    text = " ".join(" ".join(m) for m in omr.MISPRINTS)
    assert "3.0x" in text and "3.28x" in text and "1.1x" in text and "1.25x" in text


def test_intro_throughput_claims():
    assert omr.TABLE3["sophomr"]["digest_s"] < 180  # "less than 3 minutes"
    assert round(omr.TABLE3["sophomr"]["digest_s"] / omr.N_PRIMARY * 1000, 1) == 2.5  # ms/payload
    assert 0.155 * omr.N_LARGE / 3600 > 20  # LT22: over 20 hours for 2^19 at 155 ms/payload


@pytest.mark.parametrize("key", sorted(omr.TABLE6))
def test_table6_rho_is_soundness_formula(key):
    row = omr.TABLE6[key]
    rho = row["ell"] * math.log2(row["q_ps"] / (2 * row["r"] + 1))
    assert round(rho, 1) == row["rho"]


@pytest.mark.parametrize("key", sorted(omr.TABLE6))
def test_table6_sizes_from_parameters(key):
    row = omr.TABLE6[key]
    bits = math.ceil(math.log2(row["q_ps"]))
    assert round(row["n_ps"] * bits / 8 / 1000, 1) == row["pk_kb"]  # beta only; alpha is a seed (footnote 21)
    assert round((row["n_ps"] + row["ell"]) * bits / 8 / 1000, 1) == row["signal_kb"]  # (a, b)


def test_table6_security_claims():
    assert omr.TABLE6["sophomr"]["security_bits"] >= 128 and omr.TABLE6["sophomr"]["nu"] >= 30
    assert round(omr.TABLE6["perfomr"]["security_bits"]) == 94 and round(omr.TABLE6["perfomr"]["nu"]) == 18
    for key in omr.TABLE6:  # PS modulus = BFV plaintext modulus
        assert omr.TABLE6[key]["q_ps"] == omr.TABLE4[key]["p"]


def test_code_window_is_narrower_than_table6():
    row = omr.TABLE6["sophomr"]
    rho_code = row["ell"] * math.log2(row["q_ps"] / (2 * (row["r"] - 1) + 1))
    assert round(rho_code, 1) != row["rho"] and rho_code > row["rho"]


@pytest.mark.parametrize("table", [omr.TABLE4, omr.TABLE5], ids=["TABLE4", "TABLE5"])
def test_bfv_moduli(table):
    for row in table.values():
        assert row["log_pq"] >= row["log_q"]
        assert row["n"] & (row["n"] - 1) == 0


def test_table4_plaintext_moduli_and_security():
    for row in omr.TABLE4.values():
        assert (row["p"] - 1) % (2 * row["n"]) == 0
    assert omr.TABLE4["sophomr"]["security_bits"] >= 128 > omr.TABLE4["perfomr"]["security_bits"]
    assert omr.TABLE4["sophomr"]["p"] > omr.N_LARGE  # index compression needs p > N (Sec. 2.4.1)


def test_bfv_tables_match_authors_code():
    cfg = omr.AUTHORS_CODE["openfhe"]
    limbs = omr.TABLE4["sophomr"]["log_q"] // cfg["scaling_mod_size"]
    assert limbs * cfg["scaling_mod_size"] == omr.TABLE4["sophomr"]["log_q"]
    assert omr.TABLE4["sophomr"]["log_pq"] == (limbs + math.ceil(limbs / cfg["dnum"])) * cfg["scaling_mod_size"]
    assert omr.TABLE4["sophomr"]["n"] == cfg["ring_dim"] and omr.TABLE4["sophomr"]["p"] == cfg["plaintext_modulus"]
    for key, variant in (("sophomr", "omr"), ("sophomd", "omd")):
        row = omr.TABLE5[key]
        limbs = row["log_q"] // cfg["scaling_mod_size"]
        special = math.ceil(limbs / cfg["comp_dnum"][variant]) * cfg["scaling_mod_size"]
        assert row["log_pq"] == row["log_q"] + special
        assert row["n"] == cfg["ring_dim"] // cfg["dim_trace"][variant]


def test_digest_is_one_64bit_limb_ciphertext_in_switched_ring():
    for key in ("sophomr", "sophomd"):
        bytes_ = 2 * omr.TABLE5[key]["n"] * 8
        assert 0 <= omr.TABLE3[key]["digest_kb"] - bytes_ / 1000 < 2


def test_authors_code_counts():
    omr_16 = omr.AUTHORS_CODE_COUNTS[("sophomr", 2 ** 16)]
    omd_16 = omr.AUTHORS_CODE_COUNTS[("sophomd", 2 ** 16)]
    assert omr_16["t"] == 250 and omd_16["t"] == 0
    for (key, n), c in omr.AUTHORS_CODE_COUNTS.items():
        assert c["ring_switch_n"] == omr.TABLE5[key]["n"]
        assert c["rows"] <= c["rows_po2"] <= c["ring_switch_n"]  # the digest fits the switched ring
        assert c["b1"] * c["g1"] >= 1024 and c["b2"] * c["g2"] >= c["rows_po2"]
        assert c["affine_rotations"] < 1023  # PerfOMR's single-key Alg. 7 needs n' - 1
    assert (omr_16["b1"], omr_16["g1"], omr_16["affine_rotations"]) == (46, 23, 89)
    assert (omr_16["b2"], omr_16["g2"], omr_16["compress_rotations"]) == (128, 128, 257)
    assert omd_16["comp_rot_keys"] > omr_16["comp_rot_keys"]  # SophOMD's larger key (l.1674-1677)
    assert omr.TABLE3["sophomd"]["detection_key_mb"] > omr.TABLE3["sophomr"]["detection_key_mb"]
    assert 786432 == 3 * 2 ** 18  # p - 1: Fermat's X^(p-1) is 19 squarings + 1 product


def test_compression_speedups_fit_the_digest_times():
    s = omr.COMPRESSION_SPEEDUPS
    assert s["omd-2^16"][0] * 1 < omr.TABLE3["perfomd"]["digest_s"]
    assert s["omd-2^19-vs-nu2"][0] * 2 < omr.TABLE7["perfomd"]["digest_s"]
    assert s["omd-2^19-vs-nu16"][0] * 2 < omr.TABLE7["perfomd-nu16"]["digest_s"]
    derived = omr.FIGURE2["derived_2^16"]
    for key, d in derived.items():
        assert abs(d["detect_s"] + d["compress_s"] - omr.TABLE3[key]["digest_s"]) <= 2
    assert abs(derived["perfomr"]["detect_s"] / derived["perfomd"]["detect_s"] - 1) < 0.1
    assert round(derived["perfomr"]["compress_s"] / derived["sophomr"]["compress_s"], 1) == s["omr-2^16"][0]


def test_claims_and_misprints_are_well_formed():
    names = [c[0] for c in omr.CLAIMS]
    assert len(names) == len(set(names)) >= 20
    for entry in omr.CLAIMS + omr.MISPRINTS:
        assert len(entry) == 3 and all(isinstance(x, str) and x for x in entry)
    assert all("l." in c[2] for c in omr.CLAIMS)


def test_formula_tables():
    assert omr.TABLE1["ptxt_mult"] == "s*k" and "log2(n/k)" in omr.TABLE1["rotation"]
    assert omr.TABLE2["alg7"]["rot_key"] == "1" and omr.TABLE2["alg8"]["rot_key"] == "2"
    # Alg. 8's exact count at the code's N = 2^16 choice (s*ell = 2 chains, k = n' = 1024) equals the code count
    c = omr.AUTHORS_CODE_COUNTS[("sophomr", 2 ** 16)]
    assert eval(omr.TABLE2["alg8"]["exact_rotation"], {}, dict(b=c["b1"], g=c["g1"], s=2)) == c["affine_rotations"]
