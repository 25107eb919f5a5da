//! Tiny files of every family, written by `test_file::Writer`: they load and
//! run, their faults are named, and the options do what their definitions
//! say (a fused file is its split twin; frequency factors of 2 are linear
//! scaling by 2; a window as long as the text changes nothing).
//! (Over 400 lines: the tiny-file writer and every family's tests share one file.)

use super::*;

use crate::backend::BackendKind;
use crate::gguf::load::{self, WeightStorage};
use crate::gguf::test_file::Writer;
use crate::lm::LanguageModel;
use crate::model::DecoderLm;
use crate::rng::Rng;

/// d = 32 (one Q8_0 block per row), 2 query heads of 16 over 1 KV head,
/// d_ff 64, vocabulary 8, 3 layers.
const D: u64 = 32;
const VOCAB: u64 = 8;
const LAYERS: u32 = 3;

/// The shared keys of a tiny `arch` model.
fn keys(w: &mut Writer, arch: &str) {
    let k = |s: &str| format!("{arch}.{s}");
    w.kv_str("general.architecture", arch)
        .kv_u32(&k("block_count"), LAYERS)
        .kv_u32(&k("embedding_length"), D as u32)
        .kv_u32(&k("feed_forward_length"), 64)
        .kv_u32(&k("attention.head_count"), 2)
        .kv_u32(&k("attention.head_count_kv"), 1)
        .kv_u32(&k("context_length"), 64)
        .kv_f32(&k("attention.layer_norm_rms_epsilon"), 1e-5);
}

/// Values for a tensor: norms near 1, everything else N(0, 0.3), from the
/// tensor's name, so twins written in another layout hold the same numbers.
fn values(name: &str, n: usize) -> Vec<f32> {
    let seed = name.bytes().fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64));
    let mut rng = Rng::new(seed);
    let norm = name.contains("norm");
    (0..n).map(|_| if norm { 1.0 + 0.1 * rng.next_normal() as f32 } else { 0.3 * rng.next_normal() as f32 }).collect()
}

/// A stacked tensor's values: its parts' own, one after the other.
fn stacked(parts: &[(String, u64)]) -> Vec<f32> {
    parts.iter().flat_map(|(name, n)| values(name, *n as usize)).collect()
}

/// How a tiny file departs from its family's plain form.
#[derive(Default, Clone, Copy)]
struct Variant<'a> {
    fused_qkv: bool,
    qkv_bias: bool,
    /// A tensor left out.
    skip: &'a str,
    /// A tensor whose first dimension is doubled.
    reshape: &'a str,
}

/// A tiny `arch` file: the shared keys, `kv`'s (which may write tensors the
/// family reads as constants), and every tensor the model then needs, the
/// matrices as Q8_0.
fn tiny_file(arch: &str, kv: impl Fn(&mut Writer), v: Variant) -> Vec<u8> {
    // The model the metadata describes, read from a probe with a stand-in
    // embedding and enough tensors for the block count.
    let mut probe = Writer::new();
    keys(&mut probe, arch);
    kv(&mut probe);
    probe.f32_tensor("token_embd.weight", &[D, VOCAB], &[0.0; (D * VOCAB) as usize]);
    for i in 0..LAYERS * 20 {
        probe.f32_tensor(&format!("pad.{i}"), &[1], &[0.0]);
    }
    let bytes = probe.finish();
    let mut m = read(&GgufFile::parse(&bytes).unwrap()).unwrap();
    m.layout.fused_qkv = v.fused_qkv;
    m.config.options.qkv_bias = v.qkv_bias;

    let mut w = Writer::new();
    keys(&mut w, arch);
    kv(&mut w);
    let (q, kv_w, ff) = (D, 16, 64);
    for (name, mut dims) in expected_tensors(&m.config, &m.layout) {
        if name == v.skip || m.layout.constants.iter().any(|(n, _)| *n == name) {
            continue;
        }
        if name == v.reshape {
            dims[0] *= 2;
        }
        let n: u64 = dims.iter().product();
        let block = name.split('.').take(2).collect::<Vec<_>>().join(".");
        let kind = name.rsplit('.').next().unwrap();
        let part = |p: &str, len: u64| (format!("{block}.{p}.{kind}"), len);
        let per_row = if kind == "weight" { D } else { 1 };
        let data = if name == v.reshape {
            values(&name, n as usize)
        } else if name.ends_with("attn_qkv.weight") || name.ends_with("attn_qkv.bias") {
            stacked(&[part("attn_q", per_row * q), part("attn_k", per_row * kv_w), part("attn_v", per_row * kv_w)])
        } else if m.layout.fused_gate_up && name.ends_with("ffn_up.weight") {
            stacked(&[part("ffn_gate", D * ff), part("ffn_up", D * ff)])
        } else {
            values(&name, n as usize)
        };
        if dims.len() == 2 && dims[0] % 32 == 0 {
            w.q8_0_tensor(&name, &dims, &data);
        } else {
            w.f32_tensor(&name, &dims, &data);
        }
    }
    w.finish()
}

fn tiny(arch: &str) -> Vec<u8> {
    tiny_file(arch, |_| {}, Variant::default())
}

fn load_message(bytes: &[u8]) -> String {
    let f = match GgufFile::parse(bytes) {
        Ok(f) => f,
        Err(e) => return e.message,
    };
    let m = match read(&f) {
        Ok(m) => m,
        Err(e) => return e.message,
    };
    match check_tensors(&f, &m) {
        Ok(()) => "accepted".into(),
        Err(e) => e.message,
    }
}

fn model(bytes: &[u8]) -> GgufModel {
    read(&GgufFile::parse(bytes).unwrap()).unwrap()
}

fn lm(bytes: &[u8]) -> DecoderLm {
    lm_with(bytes, |_| {})
}

/// The model of a file, its config changed by `edit` before it is built.
fn lm_with(bytes: &[u8], edit: impl FnOnce(&mut ModelConfig)) -> DecoderLm {
    let f = GgufFile::parse(bytes).unwrap();
    let mut m = read(&f).unwrap();
    let plan = load::plan(&f, &m, WeightStorage::Blocks).unwrap();
    edit(&mut m.config);
    let model = load::build(&m, plan, burn::tensor::Bytes::from_bytes_vec(bytes.to_vec()), &burn::tensor::Device::flex()).unwrap();
    DecoderLm::new("tiny", m.config, model, BackendKind::Flex).unwrap()
}

fn worst(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

const TEXT: [u32; 12] = [1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4];

/// The logits after the last token, fed as a prompt of `prompt` tokens and
/// then one at a time through the cache.
fn cached_logits(lm: &mut DecoderLm, text: &[u32], prompt: usize) -> Vec<f32> {
    lm.truncate(0);
    let mut out = lm.forward_cached(&text[..prompt]).unwrap();
    for i in prompt..text.len() {
        out = lm.forward_cached(&text[i..=i]).unwrap();
    }
    out
}

/// Every family's tiny file loads, runs to finite logits, and its cached
/// path gives the recompute's logits.
#[test]
fn every_family_loads_and_runs() {
    for arch in supported() {
        let bytes = tiny(arch);
        assert_eq!(load_message(&bytes), "accepted", "{arch}");
        let mut lm = lm(&bytes);
        let cached = cached_logits(&mut lm, &TEXT, 5);
        let whole = lm.forward_naive_last(&TEXT).unwrap();
        assert_eq!(cached.len(), VOCAB as usize);
        assert!(cached.iter().all(|v| v.is_finite()), "{arch}");
        assert!(worst(&cached, &whole) < 1e-4, "{arch}: cached and recomputed logits differ by {}", worst(&cached, &whole));
    }
}

/// What each family file sets, and the parameter count: the sum of the
/// element counts of the tensors that are weights.
#[test]
fn families_set_their_options() {
    for arch in supported() {
        let m = model(&tiny(arch));
        let (c, o) = (&m.config, &m.config.options);
        let Positions::Rope { style, base } = c.positions else { panic!("{arch}: learned positions") };
        assert_eq!(base, 10000.0, "{arch}: the default base");
        let expected = match arch {
            "llama" => (RopeStyle::Interleaved, MlpKind::SwiGlu, false, false, None),
            "qwen2" | "phi3" => (RopeStyle::RotateHalf, MlpKind::SwiGlu, false, false, None),
            "qwen3" => (RopeStyle::RotateHalf, MlpKind::SwiGlu, true, false, None),
            "gemma3" => (RopeStyle::RotateHalf, MlpKind::GeGlu, true, true, Some((D as f64).sqrt())),
            other => panic!("no expectation for {other}"),
        };
        assert_eq!((style, c.mlp, o.qk_norm, o.post_norms, o.embed_scale), expected, "{arch}");
        assert_eq!(m.layout.fused_gate_up, arch == "phi3");
        assert!(c.tied_embeddings && o.sliding_window.is_none() && o.logit_softcap.is_none(), "{arch}");
        let weights: u64 = expected_tensors(c, &m.layout)
            .iter()
            .filter(|(name, _)| !m.layout.constants.iter().any(|(n, _)| n == name))
            .map(|(_, d)| d.iter().product::<u64>())
            .sum();
        assert_eq!(weights as usize, c.param_count(), "{arch}");
    }
}

/// A file's missing or misshapen tensor is named, in every family's own
/// tensors; another architecture is refused with the list of those that run.
#[test]
fn faults_are_named() {
    let cases = [
        ("llama", "blk.1.ffn_up.weight", "", "lacks the tensor 'blk.1.ffn_up.weight' that a 3-layer llama model needs"),
        ("llama", "", "blk.0.attn_k.weight", "tensor 'blk.0.attn_k.weight' has shape [64, 16] but the metadata implies [32, 16]"),
        ("qwen3", "blk.2.attn_k_norm.weight", "", "lacks the tensor 'blk.2.attn_k_norm.weight' that a 3-layer qwen3 model needs"),
        ("gemma3", "blk.0.post_ffw_norm.weight", "", "lacks the tensor 'blk.0.post_ffw_norm.weight' that a 3-layer gemma3 model needs"),
        ("gemma3", "", "blk.1.post_attention_norm.weight", "tensor 'blk.1.post_attention_norm.weight' has shape [64]"),
        ("phi3", "", "blk.2.ffn_up.weight", "tensor 'blk.2.ffn_up.weight' has shape [64, 128] but the metadata implies [32, 128]"),
        ("phi3", "blk.1.ffn_down.weight", "", "lacks the tensor 'blk.1.ffn_down.weight' that a 3-layer phi3 model needs"),
    ];
    for (arch, skip, reshape, message) in cases {
        let m = load_message(&tiny_file(arch, |_| {}, Variant { skip, reshape, ..Variant::default() }));
        assert!(m.contains(message), "{arch}: {m}");
    }
    // A fused Q/K/V missing from one block, and a bias only some blocks have.
    let m = load_message(&tiny_file("phi3", |_| {}, Variant { fused_qkv: true, skip: "blk.2.attn_qkv.weight", ..Variant::default() }));
    assert!(m.contains("lacks the tensor 'blk.2.attn_qkv.weight'"), "{m}");
    let m = load_message(&tiny_file("qwen2", |_| {}, Variant { qkv_bias: true, skip: "blk.1.attn_v.bias", ..Variant::default() }));
    assert!(m.contains("lacks the tensor 'blk.1.attn_v.bias'"), "{m}");
    // A tensor no family has a place for.
    let extra = |w: &mut Writer| {
        w.f32_tensor("blk.0.attn_output.bias", &[D], &[0.0; D as usize]);
    };
    let m = load_message(&tiny_file("llama", extra, Variant::default()));
    assert!(m.contains("has tensors a llama model of this build has no place for (e.g. blk.0.attn_output.bias)"), "{m}");

    let mut w = Writer::new();
    w.kv_str("general.architecture", "gpt2");
    let m = load_message(&w.finish());
    assert_eq!(m, "the GGUF architecture is 'gpt2': this build runs llama, qwen2, qwen3, gemma3, phi3 models only");
}

/// Hostile sizes are refused before anything is sized from them.
#[test]
fn hostile_sizes_are_refused_first() {
    let mut w = Writer::new();
    w.kv_str("general.architecture", "llama").kv_u32("llama.block_count", 2);
    assert!(load_message(&w.finish()).contains("no 'llama.embedding_length'"));

    // A model claiming 2^40 layers: refused before the tensor list (or
    // anything else) is built for it.
    let mut w = Writer::new();
    w.kv_str("general.architecture", "gemma3")
        .kv_raw("gemma3.block_count", 10, &(1u64 << 40).to_le_bytes())
        .kv_u32("gemma3.embedding_length", 32)
        .kv_u32("gemma3.feed_forward_length", 64)
        .kv_u32("gemma3.attention.head_count", 2)
        .kv_u32("gemma3.context_length", 64)
        .kv_u32("gemma3.attention.sliding_window", 4)
        .kv_f32("gemma3.attention.layer_norm_rms_epsilon", 1e-5);
    w.f32_tensor("token_embd.weight", &[32, 8], &[0.0; 256]);
    let m = load_message(&w.finish());
    assert!(m.contains("gemma3.block_count 1099511627776 needs at least"), "{m}");

    // Widths that no tensor could back, refused before any shape arithmetic.
    let mut w = Writer::new();
    w.kv_str("general.architecture", "qwen3")
        .kv_u32("qwen3.block_count", 1)
        .kv_u32("qwen3.embedding_length", 32)
        .kv_u32("qwen3.feed_forward_length", 64)
        .kv_u32("qwen3.attention.head_count", 2)
        .kv_raw("qwen3.attention.key_length", 10, &(1u64 << 40).to_le_bytes());
    assert!(load_message(&w.finish()).contains("key_length 1099511627776 is too large"));
    let mut w = Writer::new();
    w.kv_str("general.architecture", "llama")
        .kv_u32("llama.block_count", 1)
        .kv_u32("llama.embedding_length", 1 << 20)
        .kv_u32("llama.feed_forward_length", 64)
        .kv_u32("llama.attention.head_count", 1 << 20)
        .kv_u32("llama.attention.key_length", 1 << 20);
    assert!(load_message(&w.finish()).contains("query width 1048576 × 1048576 is too large"));

    // Rotary factors of the wrong length, a window pattern of the wrong
    // length, YaRN scaling: named.
    let m = load_message(&tiny_file_result("llama", |w| {
        w.f32_tensor("rope_freqs.weight", &[5], &[1.0; 5]);
    }));
    assert!(m.contains("tensor 'rope_freqs.weight' has shape [5]; rotary frequency factors for heads of 16 need [8]"), "{m}");
    let m = load_message(&tiny_file_result("gemma3", |w| {
        w.kv_u32("gemma3.attention.sliding_window", 4).kv_bool_array("gemma3.attention.sliding_window_pattern", &[true, false]);
    }));
    assert!(m.contains("'gemma3.attention.sliding_window_pattern' has 2 entries for 3 layers"), "{m}");
    let m = load_message(&tiny_file_result("qwen2", |w| {
        w.kv_str("qwen2.rope.scaling.type", "yarn");
    }));
    assert!(m.contains("'yarn' RoPE scaling (qwen2.rope.scaling.type)"), "{m}");
}

/// A tiny file whose metadata `read` may refuse: the shared keys, `kv`'s,
/// and a token embedding.
fn tiny_file_result(arch: &str, kv: impl Fn(&mut Writer)) -> Vec<u8> {
    let mut w = Writer::new();
    keys(&mut w, arch);
    kv(&mut w);
    w.f32_tensor("token_embd.weight", &[D, VOCAB], &[0.0; (D * VOCAB) as usize]);
    for i in 0..LAYERS * 20 {
        w.f32_tensor(&format!("pad.{i}"), &[1], &[0.0]);
    }
    w.finish()
}

/// Phi-3's fused Q/K/V and gate/up matrices are split into views of their
/// Q8_0 rows: the model is its split twin's (a qwen2 file with the same
/// numbers in separate tensors, the same rotation and MLP), bit for bit.
#[test]
fn fused_matrices_are_their_split_twins() {
    let fused = tiny_file("phi3", |_| {}, Variant { fused_qkv: true, qkv_bias: true, ..Variant::default() });
    let m = model(&fused);
    assert!(m.layout.fused_qkv && m.layout.fused_gate_up && m.config.options.qkv_bias);
    let weights: u64 = expected_tensors(&m.config, &m.layout).iter().map(|(_, d)| d.iter().product::<u64>()).sum();
    assert_eq!(weights as usize, m.config.param_count(), "the biases are counted");
    // The same numbers: the writer fills a fused tensor with its parts' values, by name.
    let split = tiny_file("qwen2", |_| {}, Variant { qkv_bias: true, ..Variant::default() });
    let (mut a, mut b) = (lm(&fused), lm(&split));
    for end in [1, 4, TEXT.len()] {
        assert_eq!(a.forward_naive_last(&TEXT[..end]).unwrap(), b.forward_naive_last(&TEXT[..end]).unwrap(), "{end} tokens");
    }
}

/// Llama 3's `rope_freqs` divide each frequency: factors all 2 are linear
/// scaling by 2 (`rope.scaling.factor`), and all 1 are no scaling.
#[test]
fn frequency_factors_are_divisors() {
    let factors = |f: f32| move |w: &mut Writer| {
        w.f32_tensor("rope_freqs.weight", &[8], &[f; 8]);
    };
    let halved = tiny_file("llama", factors(2.0), Variant::default());
    let m = model(&halved);
    assert_eq!(m.config.options.rope_scaling.freq_factors, vec![2.0; 8]);
    assert_eq!(m.layout.constants, vec![("rope_freqs.weight".to_string(), vec![8])]);
    let linear = tiny_file("llama", |w| {
        w.kv_str("llama.rope.scaling.type", "linear").kv_f32("llama.rope.scaling.factor", 2.0);
    }, Variant::default());
    assert_eq!(model(&linear).config.options.rope_scaling.position_scale, 0.5);
    let ones = tiny_file("llama", factors(1.0), Variant::default());
    let plain = tiny("llama");
    let (a, b) = (lm(&halved).forward_naive_last(&TEXT).unwrap(), lm(&linear).forward_naive_last(&TEXT).unwrap());
    assert!(worst(&a, &b) < 1e-5, "factors 2 against linear 2: {}", worst(&a, &b));
    let (c, d) = (lm(&ones).forward_naive_last(&TEXT).unwrap(), lm(&plain).forward_naive_last(&TEXT).unwrap());
    assert_eq!(c, d);
    assert!(worst(&a, &d) > 1e-3, "the scaling changes the logits");
}

/// Gemma 3's layers: local but each `period`-th, the window and the local
/// base from the file, a per-layer flag list, and the 270M model's defaults.
#[test]
fn gemma_windows_come_from_the_file() {
    let window = |kv: &dyn Fn(&mut Writer)| model(&tiny_file("gemma3", kv, Variant::default())).config.options.sliding_window;
    let w = window(&|w: &mut Writer| {
        w.kv_u32("gemma3.attention.sliding_window", 4);
    })
    .unwrap();
    assert_eq!((w.size, w.local, w.rope_base), (4, vec![true, true, true], Some(10_000.0)), "the default period of 6");
    let w = window(&|w: &mut Writer| {
        w.kv_u32("gemma3.attention.sliding_window", 4).kv_u32("gemma3.attention.sliding_window_pattern", 2).kv_f32("gemma3.rope.freq_base_swa", 500.0);
    })
    .unwrap();
    assert_eq!((w.local, w.rope_base), (vec![true, false, true], Some(500.0)));
    let w = window(&|w: &mut Writer| {
        w.kv_u32("gemma3.attention.sliding_window", 4).kv_bool_array("gemma3.attention.sliding_window_pattern", &[false, true, false]);
    })
    .unwrap();
    assert_eq!(w.local, vec![false, true, false]);
    assert!(window(&|_: &mut Writer| {}).is_none());
}

/// A window as long as the text changes nothing; a shorter one changes the
/// logits past it, and there the cached path (the fused kernel over the
/// cache's pages) gives the recompute's (burn's masked attention), for a
/// prompt that ends before, at and after the window's edge, and after a
/// step back across it.
#[test]
fn sliding_windows_mask_the_same_on_both_paths() {
    let kv = |w: &mut Writer| {
        w.kv_u32("gemma3.attention.sliding_window", 4).kv_u32("gemma3.attention.sliding_window_pattern", 2).kv_f32("gemma3.rope.freq_base_swa", 100.0);
    };
    let bytes = tiny_file("gemma3", kv, Variant::default());
    let mut windowed = lm(&bytes);
    let mut wide = lm_with(&bytes, |c| c.options.sliding_window.as_mut().unwrap().size = TEXT.len());
    let short = &TEXT[..4];
    assert_eq!(windowed.forward_naive_last(short).unwrap(), wide.forward_naive_last(short).unwrap(), "a text within the window");
    let (a, b) = (windowed.forward_naive_last(&TEXT).unwrap(), wide.forward_naive_last(&TEXT).unwrap());
    assert!(worst(&a, &b) > 1e-3, "the window hides the first keys: {}", worst(&a, &b));
    for prompt in [1, 3, 4, 5, 9, TEXT.len()] {
        let cached = cached_logits(&mut windowed, &TEXT, prompt);
        assert!(worst(&cached, &a) < 1e-4, "prompt {prompt}: cached {cached:?} against recomputed {a:?}");
    }
    // Step back from 12 to 2 (behind the window's edge) and go on.
    windowed.truncate(2);
    let mut out = Vec::new();
    for i in 2..TEXT.len() {
        out = windowed.forward_cached(&TEXT[i..=i]).unwrap();
    }
    assert!(worst(&out, &a) < 1e-4, "after stepping back across the window: {}", worst(&out, &a));
}

/// The SmolLM2 shape: 272 tensors, whose element counts sum to the parameter count.
#[test]
fn smollm2_tensor_list_has_its_272_tensors() {
    let c = ModelConfig::smollm2_135m();
    let t = expected_tensors(&c, &Layout::default());
    assert_eq!(t.len(), 272);
    let params: u64 = t.iter().map(|(_, d)| d.iter().product::<u64>()).sum();
    assert_eq!(params as usize, c.param_count());
}
