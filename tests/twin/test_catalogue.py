"""Catalogue loading, lookups, user YAML additions and their error messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from scoville.errors import DataError, TargetError
from scoville.twin.catalogue import load_catalogue

REQUIRED_HW = [
    "H100",
    "H200",
    "B200",
    "B300",
    "GB200",
    "GB300",
    "MI300X",
    "MI355X",
    "TPU-v6e",
    "Ironwood",
    "Jalapeno-B0",
    "Jalapeno-A0",
]
REQUIRED_MODELS = [
    "gpt-oss-120b",
    "gpt-oss-20b",
    "DeepSeek-R1",
    "Kimi-K2-Instruct",
    "Kimi-K2.5",
    "Llama-3.1-8B",
    "Llama-3.1-70B",
    "Llama-3.1-405B",
    "Llama-2-70B",
    "Qwen3-30B-A3B",
    "Qwen3-235B-A22B",
]


def test_shipped_catalogue_has_every_required_entry_with_a_source() -> None:
    cat = load_catalogue()
    for name in REQUIRED_HW:
        assert cat.hardware[name].source
    for name in REQUIRED_MODELS:
        assert cat.models[name].source


def test_lookup_by_alias_is_case_insensitive() -> None:
    cat = load_catalogue()
    assert cat.get_hardware("h200 sxm").name == "H200"
    assert cat.get_hardware("Jalapeño B0").name == "Jalapeno-B0"
    assert cat.get_model("openai/gpt-oss-120b").name == "gpt-oss-120b"


def test_datasheet_figures_survive_loading() -> None:
    h200 = load_catalogue().get_hardware("H200")
    assert h200.hbm_tb_s == 4.8
    assert h200.hbm_gb == 141
    assert h200.dense_tflops.fp8 == 1979
    assert h200.dense_tflops.fp4 is None


def test_unknown_names_list_the_known_ones() -> None:
    cat = load_catalogue()
    with pytest.raises(TargetError, match=r"Known: .*H200"):
        cat.get_hardware("H900")
    with pytest.raises(TargetError, match=r"Known: .*gpt-oss-120b"):
        cat.get_model("gpt-5")


def test_power_only_hardware_cannot_be_simulated() -> None:
    with pytest.raises(TargetError, match="power-only"):
        load_catalogue().get_hardware("Jalapeno-A0")


def test_user_yaml_derives_from_a_base_and_adds_a_model(tmp_path: Path) -> None:
    f = tmp_path / "mine.yaml"
    f.write_text(
        "hardware:\n"
        "  - name: H200-fast\n"
        "    base: H200\n"
        "    hbm_tb_s: 9.6\n"
        "    dense_tflops: {fp8: 4000}\n"
        "models:\n"
        "  - name: tiny\n"
        "    num_layers: 2\n    hidden_size: 64\n    num_attention_heads: 4\n"
        "    num_kv_heads: 2\n    head_dim: 16\n    intermediate_size: 128\n"
        "    first_k_dense_layers: 2\n    vocab_size: 1000\n    max_position_embeddings: 4096\n"
        "    source: my notes\n",
        encoding="utf-8",
    )
    cat = load_catalogue([f])
    hw = cat.get_hardware("h200-fast")
    assert hw.hbm_tb_s == 9.6
    assert hw.dense_tflops.fp8 == 4000
    assert hw.dense_tflops.bf16 == 989  # inherited
    assert hw.source.startswith("derived from H200")
    assert cat.get_model("tiny").num_layers == 2


def test_reported_device_memory_is_the_binary_reading_of_the_quoted_capacity() -> None:
    """Serving engines take their memory fraction of the total the driver reports; vendors quote
    most capacities in binary units, so the report is 1-8 % above the quoted figure, and every
    report names its source or says what is assumed."""
    cat = load_catalogue()
    reported = {h.name: h for h in cat.hardware.values() if h.memory_reported_gb is not None}
    assert {"H100", "H200", "B200", "GB200", "B300", "MI300X", "MI355X"} <= set(reported)
    for h in reported.values():
        assert h.hbm_gb is not None
        assert h.hbm_gb <= h.memory_reported_gb <= h.hbm_gb * 1.08, h.name
        assert "memory_reported_gb" in h.source or "memory_reported_gb" in h.assumed, h.name
    assert reported["MI300X"].device_memory_bytes == pytest.approx(206_141_652_992, rel=1e-5)
    assert cat.get_hardware("Rubin").device_memory_bytes == 288e9  # no report: the quoted figure


def test_a_derived_entry_that_sets_its_capacity_drops_the_base_report(tmp_path: Path) -> None:
    f = tmp_path / "mine.yaml"
    f.write_text(
        "hardware:\n"
        "  - name: H200-small\n    base: H200\n    hbm_gb: 96\n"
        "  - name: H200-same\n    base: H200\n    hbm_tb_s: 5.0\n",
        encoding="utf-8",
    )
    cat = load_catalogue([f])
    assert cat.get_hardware("H200-small").device_memory_bytes == 96e9
    assert cat.get_hardware("H200-same").device_memory_bytes == pytest.approx(151.398e9)


def test_user_yaml_errors_name_the_file_entry_and_field(tmp_path: Path) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text("hardware:\n  - name: X\n    base: H200\n    hbm_tb_s: -1\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"bad.yaml hardware\[0\] \(X\): hbm_tb_s"):
        load_catalogue([f])
    f.write_text("hardware:\n  - name: X\n    base: H999\n", encoding="utf-8")
    with pytest.raises(DataError, match="base 'H999' is not in the catalogue"):
        load_catalogue([f])
    f.write_text("models:\n  - name: m\n    num_layers: 1\n", encoding="utf-8")
    with pytest.raises(DataError, match="hidden_size"):
        load_catalogue([f])
    f.write_text("just text", encoding="utf-8")
    with pytest.raises(DataError, match="hardware:"):
        load_catalogue([f])
    with pytest.raises(DataError, match="does not exist"):
        load_catalogue([tmp_path / "nope.yaml"])


def test_inconsistent_architecture_is_rejected(tmp_path: Path) -> None:
    f = tmp_path / "moe.yaml"
    f.write_text(
        "models:\n  - name: bad-moe\n    base: gpt-oss-20b\n    experts_per_token: 64\n",
        encoding="utf-8",
    )
    with pytest.raises(DataError, match="experts_per_token"):
        load_catalogue([f])


def test_parameter_counts_match_the_model_cards() -> None:
    from scoville.twin.shape import model_shape

    for m in load_catalogue().models.values():
        assert m.official_total_params_b is not None
        total_b = model_shape(m).total_params / 1e9
        # Kimi's card rounds 1.03 T to "1 T": 3 % covers every card's rounding
        assert total_b == pytest.approx(m.official_total_params_b, rel=0.03), m.name


def test_every_model_simulates_on_some_hardware_parallelism() -> None:
    from scoville.client.plan import length_requests
    from scoville.twin.fast import run_point
    from scoville.twin.target import parse_twin_url

    for name in REQUIRED_MODELS:
        for tp in (1, 2, 4, 8):
            cfg = parse_twin_url(f"twin:B300/{name}?tp={tp}")
            try:
                res = run_point(cfg, length_requests(4, 512, 4), "c2", concurrency=2)
            except TargetError as e:  # weights do not fit: the message says to raise tp
                assert "raise tp" in str(e)
                continue
            assert all(r.ok and r.output_tokens == 4 for r in res.records), name
            break
        else:
            raise AssertionError(f"{name} fits no B300 TP up to 8")


NEW_HARDWARE = ["MI325X", "Rubin", "VR200-NVL72", "Ironwood"]
NEW_MODELS = [
    "DeepSeek-V3.2",
    "DeepSeek-V4-Pro",
    "DeepSeek-V4-Flash",
    "Kimi-K3",
    "Qwen3.5-397B-A17B",
    "GLM-5",
    "MiniMax-M2.5",
]


def test_newer_entries_carry_sources_and_say_what_is_assumed() -> None:
    cat = load_catalogue()
    for name in NEW_HARDWARE:
        hw = cat.get_hardware(name)
        assert hw.source and hw.tdp_w is not None  # TPU v7 now has a (stated) power
        assert "fabric.latency" in hw.assumed
    assert cat.get_hardware("Vera Rubin NVL72").fabric.scaleup_gpus == 72
    assert cat.get_hardware("Rubin").fabric.scaleup_gpus == 8
    assert "tdp_w" in cat.get_hardware("Ironwood").assumed
    for name in NEW_MODELS:
        m = cat.get_model(name)
        assert m.source and m.official_total_params_b
    assert "experts_per_token" in cat.get_model("Kimi-K3").assumed


def test_newer_models_simulate_on_rack_scale_systems() -> None:
    from scoville.client.plan import length_requests
    from scoville.twin.fast import run_point
    from scoville.twin.target import parse_twin_url

    for name in NEW_MODELS:
        cfg = parse_twin_url(f"twin:GB300/{name}?tp=16&dp_attention=1&precision=fp4")
        res = run_point(cfg, length_requests(4, 512, 4), "c2", concurrency=2)
        assert all(r.ok and r.output_tokens == 4 for r in res.records), name


def test_deepseek_v4_pro_kv_bytes_per_token_by_hand() -> None:
    """V4-Pro, FP8 KV (584 B per entry: 448 FP8 + 64 BF16 elements + 8 B scales; 68 B per
    indexer key): 30 CSA layers store 584/4 + 68/4 = 163 B per token, 31 HCA layers 584/128 =
    4.5625 B: 4,890 + 141.4375 = 5,031.4375 B per token. Every one of the 61 layers keeps a
    128-token raw window: 61 x 584 = 35,624 B per window token. A decoding query reads the top
    1,024 entries of each CSA layer: 30 x 1,024 x 584 = 17,940,480 B, plus per context token
    the HCA entries and indexer keys: 141.4375 + 30 x 17 = 651.4375 B."""
    from scoville.twin.kvlayout import kv_layout
    from scoville.twin.shape import model_shape

    m = load_catalogue().get_model("DeepSeek-V4-Pro")
    lay = kv_layout(m, model_shape(m), "fp8")
    assert lay.store_bytes_per_ctx_token == pytest.approx(5031.4375)
    assert lay.store_bytes_per_window_token == pytest.approx(35624.0)
    assert lay.window_tokens == 128
    assert lay.read_bytes_per_query == pytest.approx(17_940_480.0)
    assert lay.read_bytes_per_ctx_token == pytest.approx(651.4375)
    # an 8k-token sequence: 8,192 x 5,031.4375 + 128 x 35,624 = 45,777,408 B (about 46 MB),
    # where 61 uncompressed 2 x 512 FP8 heads would hold 8,192 x 62,464 = 511.7 MB
    stored = 8192 * lay.store_bytes_per_ctx_token + 128 * lay.store_bytes_per_window_token
    assert stored == pytest.approx(45_777_408.0)


def test_compressed_attention_entries_are_checked() -> None:
    cat = load_catalogue()
    raw = cat.get_model("DeepSeek-V4-Flash").model_dump()
    raw["compressed_kv"]["compress_ratios"] = [4, 128]
    with pytest.raises(ValueError, match="one ratio per layer"):
        type(cat.get_model("DeepSeek-V4-Flash")).model_validate(raw)


def test_v4_kv_cache_against_v32_matches_the_technical_report() -> None:
    """The DeepSeek-V4 report's figure 1: at 1M tokens the accumulated KV cache is 9.5x smaller
    than V3.2's for V4-Pro and 13.7x smaller for V4-Flash. By hand (FP8): V3.2 stores
    61 x (656 + 132) = 48,068 B per token; V4-Pro 1,048,576 x 5,031.4375 + 128 x 35,624 B,
    ratio 9.55; V4-Flash 21 x (146 + 17) + 20 x 4.5625 = 3,514.25 B per token plus 128 x 43 x
    584 B of window, ratio 13.67."""
    from scoville.twin.kvlayout import kv_layout
    from scoville.twin.shape import model_shape

    cat = load_catalogue()

    def stored(name: str, ctx: int) -> float:
        m = cat.get_model(name)
        lay = kv_layout(m, model_shape(m), "fp8")
        window = min(ctx, lay.window_tokens)
        return ctx * lay.store_bytes_per_ctx_token + window * lay.store_bytes_per_window_token

    ctx = 1_048_576
    assert stored("DeepSeek-V3.2", 1) == pytest.approx(48_068.0)
    assert stored("DeepSeek-V4-Flash", ctx) == pytest.approx(ctx * 3514.25 + 128 * 43 * 584)
    assert stored("DeepSeek-V3.2", ctx) / stored("DeepSeek-V4-Pro", ctx) == pytest.approx(
        9.5, rel=0.01
    )
    assert stored("DeepSeek-V3.2", ctx) / stored("DeepSeek-V4-Flash", ctx) == pytest.approx(
        13.7, rel=0.01
    )


def test_glm5_reads_the_top_2048_latents_and_every_indexer_key() -> None:
    """GLM-5 is DeepSeek Sparse Attention on 78 layers. By hand (FP8 cache): it stores 78 x
    (656 + 132) = 61,464 B per token; a decode query at 8,192 tokens reads every indexer key,
    78 x 132 x 8,192 = 84,344,832 B, and the top 2,048 latents, 78 x 656 x 2,048 = 104,792,064
    B, where dense MLA would read 78 x 656 x 8,192 = 419,168,256 B."""
    from scoville.twin.kvlayout import kv_layout
    from scoville.twin.shape import model_shape

    m = load_catalogue().get_model("GLM-5")
    lay = kv_layout(m, model_shape(m), "fp8")
    assert lay.store_bytes_per_ctx_token == pytest.approx(61_464.0)
    assert 8192 * lay.read_bytes_per_ctx_token == pytest.approx(84_344_832.0)
    assert lay.read_bytes_per_query == pytest.approx(104_792_064.0)
