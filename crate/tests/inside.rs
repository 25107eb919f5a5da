//! The inside view against a recompute: what the cached pass captured (each
//! layer's residual stream and its last query's attention weights) equals
//! what a pass from scratch without the cache computes, on every tiny model
//! family (`tests/fixtures/families/*.gguf`: grouped heads, rotary styles,
//! biases, Q/K norms, Gemma 3's sliding window and post-norms); the lens's
//! last layer is the step's own logits; and switching the view on, off or
//! asking for it mid-generation changes nothing of the generation.

use std::path::PathBuf;

use burn::tensor::activation::softmax;
use burn::tensor::{Int, Tensor, TensorData};
use nexttoken::backend::BackendKind;
use nexttoken::gguf::{self, WeightStorage};
use nexttoken::inside::Capture;
use nexttoken::kv_cache::KvPrecision;
use nexttoken::lm::LanguageModel;
use nexttoken::model::attention::first_visible;
use nexttoken::model::rope::apply_rope;
use nexttoken::model::{DecoderLm, Transformer, rope_specs};
use nexttoken::report::StepReport;
use nexttoken::session::{GenerationSettings, Session};

const FAMILIES: [&str; 7] = ["llama", "llama-q8_0", "llama3", "qwen2", "qwen3", "gemma3", "phi3"];

fn family_bytes(name: &str) -> Vec<u8> {
    let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/families")).join(format!("{name}.gguf"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn family_model(name: &str) -> DecoderLm {
    let (mut lm, _) = gguf::model_from_gguf(family_bytes(name), name, BackendKind::Flex, WeightStorage::Blocks).unwrap();
    // f32 keys, so the cached pass and the recompute differ only by the order of sums.
    lm.set_kv_precision(KvPrecision::F32).unwrap();
    lm
}

fn ids_tensor(lm: &DecoderLm, ids: &[u32]) -> Tensor<2, Int> {
    let v: Vec<i64> = ids.iter().map(|&t| t as i64).collect();
    Tensor::from_data(TensorData::new(v, [1, ids.len()]), lm.device())
}

fn last_row(x: Tensor<3>) -> Vec<f32> {
    let [b, t, d] = x.dims();
    x.slice([0..b, t - 1..t, 0..d]).into_data().try_to_vec::<f32>().unwrap()
}

/// The model's first `l` blocks only: its residual stream after block `l`.
fn truncated(model: &Transformer, l: usize) -> Transformer {
    Transformer { blocks: model.blocks[..l].to_vec(), ..model.clone() }
}

/// Layer `l`'s attention weights of the last position over all of `ids`,
/// recomputed without a cache from the stream the first `l` blocks give
/// (the definition: softmax(q·k / √d) over the keys its window sees).
fn recomputed_weights(lm: &DecoderLm, ids: &[u32], l: usize) -> Vec<Vec<f64>> {
    let c = &lm.config;
    let x = truncated(&lm.model, l).hidden(c, ids_tensor(lm, ids), 0, None);
    let block = &lm.model.blocks[l];
    let a = &block.attn;
    let xn = block.attn_norm.forward(x);
    let [_, t, _] = xn.dims();
    let (h, kvh, hd) = (a.n_heads, a.n_kv_heads, a.head_dim);
    let heads = |y: Tensor<3>, n: usize, norm: &Option<nexttoken::model::norm::Norm>| {
        let y = match norm {
            Some(norm) => norm.forward(y.reshape([1, t * n, hd])).reshape([1, t, n * hd]),
            None => y,
        };
        y.reshape([1, t, n, hd]).swap_dims(1, 2)
    };
    let mut q = heads(a.wq.forward(xn.clone()), h, &a.q_norm);
    let mut k = heads(a.wk.forward(xn), kvh, &a.k_norm);
    let window = c.layer_window(l);
    let (global, local) = rope_specs(c);
    let spec = if window.is_some() { local.or(global) } else { global };
    if let (Some(spec), Some((_, style))) = (spec, nexttoken::model::attention::needs_rope(&c.positions)) {
        let (cos, sin) = spec.tables(0, t, lm.device());
        q = apply_rope(q, &cos, &sin, style);
        k = apply_rope(k, &cos, &sin, style);
    }
    let scale = c.options.attn_scale.unwrap_or(1.0 / (hd as f64).sqrt());
    let q: Vec<f32> = q.slice([0..1, 0..h, t - 1..t, 0..hd]).into_data().try_to_vec().unwrap();
    let k: Vec<f32> = k.into_data().try_to_vec().unwrap(); // [kvh][t][hd]
    let first = first_visible(t - 1, window);
    (0..h)
        .map(|head| {
            let kv = head / (h / kvh);
            let scores: Vec<f64> = (first..t)
                .map(|p| (0..hd).map(|i| q[head * hd + i] as f64 * k[(kv * t + p) * hd + i] as f64).sum::<f64>() * scale)
                .collect();
            let scores = Tensor::<1>::from_data(TensorData::new(scores.iter().map(|&s| s as f32).collect::<Vec<_>>(), [scores.len()]), lm.device());
            softmax(scores, 0).into_data().try_to_vec::<f32>().unwrap().into_iter().map(f64::from).collect()
        })
        .collect()
}

fn max_gap(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

/// Every capture along a prompt fed as a prefill and then token by token
/// (for gemma3 past its window of 8, so local layers stop reading the start).
#[test]
fn the_capture_is_the_recompute_on_every_family() {
    for name in FAMILIES {
        let mut lm = family_model(name);
        let ids: Vec<u32> = (0..21u32).map(|i| (i * 37 + 11) % 290).collect();
        let mut fed = 0;
        for chunk in [13, 1, 1, 1, 1, 1, 1, 1, 1] {
            let (logits, capture) = lm.forward_cached_inside(&ids[fed..fed + chunk]).unwrap();
            fed += chunk;
            let capture: Capture = capture.expect("a transformer captures");
            let c = lm.config.clone();
            assert_eq!(capture.query, fed - 1, "{name}");
            assert_eq!((capture.attention.len(), capture.residuals.len()), (c.n_layers, c.n_layers + 1), "{name}");
            for l in 0..=c.n_layers {
                let want = last_row(truncated(&lm.model, l).hidden(&c, ids_tensor(&lm, &ids[..fed]), 0, None));
                let scale = want.iter().fold(1f32, |m, x| m.max(x.abs()));
                let gap = max_gap(&capture.residuals[l], &want);
                assert!(gap <= 2e-5 * scale, "{name} at {fed}: residual after layer {l} differs by {gap} (scale {scale})");
            }
            for l in 0..c.n_layers {
                let want = recomputed_weights(&lm, &ids[..fed], l);
                let first = first_visible(fed - 1, c.layer_window(l));
                assert_eq!(capture.attention[l].first, first, "{name} layer {l}");
                assert_eq!(capture.attention[l].window, c.layer_window(l));
                for (h, row) in want.iter().enumerate() {
                    let got = capture.row(l, h);
                    let sum: f64 = got.iter().map(|&w| w as f64).sum();
                    assert!((sum - 1.0).abs() < 1e-5, "{name} layer {l} head {h}: the row sums to {sum}");
                    let got: Vec<f64> = got.iter().map(|&w| w as f64).collect();
                    let gap = got.iter().zip(row).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
                    assert!(gap < 2e-5, "{name} at {fed}, layer {l} head {h}: weights differ by {gap}");
                }
            }
            if name == "gemma3" && fed > 8 {
                let locals = (0..c.n_layers).filter(|&l| capture.attention[l].first > 0).count();
                assert_eq!(locals, c.n_layers - 1, "gemma3 past its window: every local layer reads only its window");
            }
            // The lens's last layer is the step's own logits.
            let mut lens = Vec::new();
            lm.lens(&capture.residuals, &mut |i, row| {
                assert_eq!(i, lens.len());
                lens.push(row.to_vec());
                Ok(())
            })
            .unwrap();
            assert_eq!(lens.len(), c.n_layers + 1);
            let scale = logits.iter().fold(1f32, |m, x| m.max(x.abs()));
            let gap = max_gap(lens.last().unwrap(), &logits);
            assert!(gap <= 1e-5 * scale, "{name}: the last lens layer differs from the logits by {gap}");
            // And each earlier layer is the head on the recomputed stream.
            let l = c.n_layers / 2;
            let mid = truncated(&lm.model, l).hidden(&c, ids_tensor(&lm, &ids[..fed]), 0, None);
            let want = last_row(lm.model.head(&c, mid));
            let gap = max_gap(&lens[l], &want);
            assert!(gap <= 1e-4 * want.iter().fold(1f32, |m, x| m.max(x.abs())), "{name}: lens layer {l} differs by {gap}");
        }
    }
}

fn session(name: &str) -> Session {
    gguf::session_from_gguf(family_bytes(name), name, BackendKind::Flex).unwrap()
}

fn sampled() -> GenerationSettings {
    let mut s = GenerationSettings::default();
    s.rules.temperature = 1.3;
    s.seed = 7;
    s
}

/// What a generation shows the reader, but for the inside view.
fn outside(r: &StepReport) -> (Option<u32>, Vec<(u32, u64)>, String) {
    let top: Vec<(u32, u64)> = r.distribution.raw_top.iter().map(|t| (t.id, t.prob.to_bits())).collect();
    (r.chosen.as_ref().map(|c| c.id), top, format!("{:?}", r.counters))
}

/// The same seed gives the same tokens, distributions and work counters
/// with the view off, on, switched midway, and asked for between steps
/// (which runs the last token again when the pass captured nothing).
#[test]
fn the_view_changes_nothing_of_the_generation() {
    for name in ["gemma3", "qwen2"] {
        let settings = sampled();
        let mut plain = session(name);
        let mut reports = vec![outside(&plain.start("the cat sat on", &settings).unwrap())];
        for _ in 0..14 {
            reports.push(outside(&plain.step(&settings).unwrap()));
        }
        for pattern in [[true; 15], [false, false, true, false, true, true, false, true, true, true, false, false, true, true, true]] {
            let mut s = session(name);
            s.set_inside(pattern[0]);
            let first = s.start("the cat sat on", &settings).unwrap();
            assert_eq!(first.inside.is_some(), pattern[0]);
            assert_eq!(outside(&first), reports[0], "{name}");
            for (i, &on) in pattern.iter().enumerate().skip(1) {
                if on != s.inside_on() {
                    s.set_inside(on);
                    if on {
                        let now = s.inside_now().unwrap().expect("a transformer");
                        assert!(!now.token_is_chosen);
                    }
                }
                let r = s.step(&settings).unwrap();
                assert_eq!(outside(&r), reports[i], "{name} step {i} with the view {}", if on { "on" } else { "off" });
                assert_eq!(r.inside.is_some(), on);
            }
        }
    }
}

/// A step's view follows the token it drew: the lens's last layer gives it
/// the raw distribution's rank and probability; the query is the token fed
/// before; every row sums to 1; and the view asked for again (a second
/// capture of the same position) is the one the pass captured.
#[test]
fn a_step_follows_its_token() {
    let settings = sampled();
    let mut s = session("gemma3");
    s.set_inside(true);
    let start = s.start("the cat sat on the mat and the dog", &settings).unwrap();
    let prompt = start.full.as_ref().unwrap().prompt_tokens.len();
    let first = start.inside.expect("on");
    assert_eq!(first.query, prompt - 1);
    assert_eq!(first.token.id, first.raw_top.id, "before a draw the lens follows the raw top-1");
    for step in 0..12 {
        let pending = s.inside_now().unwrap().unwrap();
        let r = s.step(&settings).unwrap();
        let chosen = r.chosen.as_ref().unwrap();
        let inside = r.inside.as_ref().unwrap();
        assert_eq!(inside.query, prompt + step - 1);
        assert!(inside.token_is_chosen);
        assert_eq!(inside.token.id, chosen.id);
        let last = inside.lens.last().unwrap();
        assert_eq!(inside.lens.len(), inside.layers + 1);
        assert_eq!(last.token_rank, chosen.rank, "step {step}: the last lens layer ranks the token as the raw distribution");
        assert!((last.token_prob - inside.raw_prob).abs() < 1e-5, "step {step}: {} against {}", last.token_prob, inside.raw_prob);
        assert_eq!(last.top[0].id, inside.raw_top.id);
        assert_eq!(inside.top1_from.map(|l| l <= inside.layers), Some(true));
        for a in &inside.attention {
            let n = inside.query + 1 - a.first;
            assert_eq!(a.weights.len(), inside.heads * n);
            for row in a.weights.chunks(n) {
                let sum: f64 = row.iter().map(|&w| w as f64).sum();
                assert!((sum - 1.0).abs() < 1e-5);
            }
            for (h, row) in a.weights.chunks(n).enumerate() {
                let entropy = -row.iter().filter(|&&w| w > 0.0).map(|&w| w as f64 * (w as f64).ln()).sum::<f64>();
                assert!((a.entropy[h] - entropy).abs() < 1e-9);
                assert_eq!(a.sink[h], if a.first == 0 { row[0] as f64 } else { 0.0 });
            }
        }
        // The same position's view, captured by its own pass and asked for before the draw.
        assert_eq!(pending.query, inside.query);
        for (a, b) in pending.attention.iter().zip(&inside.attention) {
            assert_eq!(a.weights, b.weights, "step {step}");
        }
        for (a, b) in pending.lens.iter().zip(&inside.lens) {
            assert_eq!(a.top, b.top);
        }
    }
}

/// Models without layers have nothing inside; the CLI-facing errors say why.
#[test]
fn toy_models_have_no_inside() {
    let mut s = nexttoken::builtin::open("logits10").unwrap();
    s.set_inside(true);
    let r = s.start("t1", &GenerationSettings::default()).unwrap();
    assert!(r.inside.is_none());
    assert!(s.inside_now().unwrap().is_none());
    let mut s = nexttoken::builtin::open("kv-demo").unwrap();
    let e = s.inside_now().unwrap_err();
    assert!(e.message.contains("no prompt yet"), "{}", e.message);
    s.start("abc", &GenerationSettings::default()).unwrap();
    assert!(s.inside_now().unwrap_err().message.contains("switch it on"));
    s.set_inside(true);
    let inside = s.inside_now().unwrap().expect("kv-demo is a transformer");
    assert_eq!((inside.layers, inside.lens.len(), inside.attention[0].weights.len()), (1, 2, 3));
}

/// With the lens left out, a report still carries the attention, its lens is
/// empty, and the next report with the lens has it again; `inside_now`
/// always runs it.
#[test]
fn the_lens_can_be_left_out() {
    let settings = sampled();
    let mut s = session("qwen3");
    s.set_inside(true);
    s.start("the cat sat", &settings).unwrap();
    s.set_lens(false);
    let r = s.step(&settings).unwrap();
    let inside = r.inside.unwrap();
    assert!(inside.lens.is_empty() && inside.top1_from.is_none());
    assert_eq!(inside.attention.len(), inside.layers);
    assert_eq!(s.inside_now().unwrap().unwrap().lens.len(), inside.layers + 1);
    s.set_lens(true);
    assert_eq!(s.step(&settings).unwrap().inside.unwrap().lens.len(), inside.layers + 1);
}
