//! The page's course presets through the CLI: `nexttoken lesson <name>`
//! prints the numbers the Lessons menu shows, and each must be the lesson's
//! (course text 003, lesson 21, and the figures derived from it).
//! Every expected value below is copied from the course text, never from
//! our output. Tolerances follow the printed digits: 6 decimals printed →
//! within 0.5e-6; a 16/17-digit print → 1e-12 relative; numbers that depend
//! on the lesson's printed (6-decimal) logits at b → the spread those
//! roundings allow (see course_numbers.rs).

use std::process::Command;

use serde_json::Value;

fn lesson(name: &str, extra: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_nexttoken")).arg("lesson").arg(name).args(extra).output().expect("run nexttoken");
    assert!(out.status.success(), "nexttoken lesson {name}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON")
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn close(got: f64, printed: f64, tol: f64, what: &str) {
    assert!((got - printed).abs() <= tol, "{what}: got {got:.17}, the lesson prints {printed}, tolerance {tol:e}");
}

fn full(got: f64, printed: f64, what: &str) {
    close(got, printed, 1e-12 * printed.abs().max(1e-300), what);
}

fn six(got: f64, printed: f64, what: &str) {
    close(got, printed, 0.5e-6 + 1e-15, what);
}

#[test]
fn every_preset_is_listed_and_prints() {
    let out = Command::new(env!("CARGO_BIN_EXE_nexttoken")).args(["lesson", "--list"]).output().unwrap();
    let names = String::from_utf8(out.stdout).unwrap();
    let names: Vec<&str> = names.lines().collect();
    assert_eq!(names.len(), 19);
    for n in ["temperature-10class", "top-k-3", "top-p-0.9", "four-panel", "temperature-sweep", "entropy-curves", "tie-at-b",
        "repetition-penalty", "greedy-cycle", "sampled-chain", "gallery", "kv-cache", "kv-demo-flops", "flop-curve", "kv-size",
        "beam-b2", "bigram-retrain", "diversity", "answer-forms"] {
        assert!(names.contains(&n), "{n} missing from --list");
    }
    let bad = Command::new(env!("CARGO_BIN_EXE_nexttoken")).args(["lesson", "no-such-lesson"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown lesson"));
}

#[test]
fn temperature_top_k_top_p_and_the_four_panels() {
    let d = lesson("temperature-10class", &[]);
    // (tau, p_max, H bits, H nats) as printed.
    let printed = [
        (0.5, 0.6321492583604867, 1.5006227545290947, 1.040152431385941),
        (1.0, 0.39613850050808724, 2.398942379757357, 1.6628201468545776),
        (2.0, 0.24098006525329924, 3.000344393648524, 2.079680257166313),
    ];
    for (row, (tau, p_max, bits, nats)) in d["rows"].as_array().unwrap().iter().zip(printed) {
        assert_eq!(f(&row["tau"]), tau);
        full(f(&row["p_max"]), p_max, "p_max");
        full(f(&row["entropy"]["bits"]), bits, "H bits");
        full(f(&row["entropy"]["nats"]), nats, "H nats");
    }

    let k = lesson("top-k-3", &[]);
    for (got, p) in k["probs"].as_array().unwrap().iter().zip([0.506480, 0.307196, 0.186324, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]) {
        six(f(got), p, "top-k q");
    }
    full(f(&k["kept_mass"]), 0.7821398567522391, "kept mass");
    assert_eq!(k["support"], 3);

    let p = lesson("top-p-0.9", &[]);
    let cum = [0.396139, 0.636409, 0.782140, 0.870530, 0.924142, 0.956659, 0.976381, 0.988344];
    for (got, c) in p["cumulative"].as_array().unwrap().iter().zip(cum) {
        six(f(got), c, "cumulative");
    }
    full(f(&p["below"]), 0.8705303038115675, "4 tokens carry");
    full(f(&p["reaches"]), 0.9241418199787566, "5 tokens carry");
    assert_eq!(p["support"], 5);

    let four = lesson("four-panel", &[]);
    // The lesson's ordering: greedy → top-K=3 → tau=0.5 → top-P=0.9 → tau=1.0 → tau=2.0.
    let printed = [
        ("greedy", 0.0, 0.0),
        ("top-K=3", 1.0201913367268314, 1.4718249822536822),
        ("tau=0.5", 1.040152431385941, 1.5006227545290947),
        ("top-P=0.9", 1.3942849625089193, 2.0115280009976724),
        ("tau=1.0", 1.6628201468545776, 2.398942379757357),
        ("tau=2.0", 2.079680257166313, 3.000344393648524),
    ];
    let rows = four["entropies"].as_array().unwrap();
    assert_eq!(rows.len(), 6);
    for (row, (name, nats, bits)) in rows.iter().zip(printed) {
        assert_eq!(row["name"], name);
        if nats == 0.0 {
            assert_eq!(f(&row["nats"]), 0.0);
            assert_eq!(f(&row["bits"]), 0.0);
        } else {
            full(f(&row["nats"]), nats, name);
            full(f(&row["bits"]), bits, name);
        }
    }
    assert_eq!(four["panels"].as_array().unwrap().len(), 4);
}

#[test]
fn the_sweep_and_the_entropy_curves() {
    let s = lesson("temperature-sweep", &[]);
    let frames = s["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 30);
    close(f(&frames[0]["tau"]), 0.2, 1e-12, "first tau");
    close(f(&frames[29]["tau"]), 5.0, 1e-12, "last tau");
    // Log-spaced: a constant ratio between neighbours, (5/0.2)^(1/29).
    let ratio = 25f64.powf(1.0 / 29.0);
    for w in frames.windows(2) {
        close(f(&w[1]["tau"]) / f(&w[0]["tau"]), ratio, 1e-12, "log spacing");
    }
    // Entropy rises monotonically toward log2 10 = 3.32 ("uniform = 3.32").
    let bits: Vec<f64> = frames.iter().map(|x| f(&x["bits"])).collect();
    assert!(bits.windows(2).all(|w| w[1] > w[0]));
    assert!(bits[29] < 10f64.log2() && bits[29] > 3.2);

    let c = lesson("entropy-curves", &[]);
    full(f(&c["slope_fd_nats"]), 0.808682795298878, "dH/dln tau");
    full(f(&c["var_z"]), 0.8086827002533895, "Var_q(z)");
    assert_eq!(c["taus"].as_array().unwrap().len(), 60);
    let refs: Vec<f64> = c["references"].as_array().unwrap().iter().map(|r| f(&r["bits"])).collect();
    close(refs[0], 3.32, 0.005, "log2 10");
    close(refs[1], 1.58, 0.005, "log2 3");
    assert_eq!(refs[2], 1.0);
}

#[test]
fn the_tie_and_the_penalty_at_b() {
    let t = lesson("tie-at-b", &[]);
    let printed = [
        (0.5, [0.5, 0.0, 0.5], 1.0000000000000275, 1e-12),
        (1.0, [0.5, 0.0, 0.5], 1.000000431403955, 1e-12),
        (2.0, [0.499955, 0.000091, 0.499955], 1.001256212153058, 1e-9),
        (5.0, [0.492161, 0.015678, 0.492161], 1.1007526326437544, 3e-8),
    ];
    for (row, (tau, probs, bits, tol)) in t["rows"].as_array().unwrap().iter().zip(printed) {
        assert_eq!(f(&row["tau"]), tau);
        for (got, p) in row["probs"].as_array().unwrap().iter().zip(probs) {
            six(f(got), p, "P(.|b)");
        }
        close(f(&row["bits"]), bits, tol, "H(P(.|b))");
    }

    let r = lesson("repetition-penalty", &[]);
    for (got, p) in r["penalised"].as_array().unwrap().iter().zip([0.001845, 0.000000, 0.998155]) {
        six(f(got), p, "penalised");
    }
    // greedy 0, tau=0.5 1.0000000000000275, tau=1 1.000000431403955, tau=2 1.001256212153058,
    // top-K=2 1, top-P=0.9 1, penalty 0.019413435029058908 (printed).
    let printed = [0.0, 1.0000000000000275, 1.000000431403955, 1.001256212153058, 1.0, 1.0, 0.019413435029058908];
    let tols = [0.0, 1e-12, 1e-12, 1e-9, 1e-12, 1e-12, 2e-8];
    for ((row, want), tol) in r["controls"].as_array().unwrap().iter().zip(printed).zip(tols) {
        close(f(&row["bits"]), want, tol, row["name"].as_str().unwrap());
    }
}

#[test]
fn the_greedy_cycle_the_chain_and_the_gallery() {
    let g = lesson("greedy-cycle", &[]);
    let printed = [("a", "b", "ababababa"), ("b", "a", "babababab"), ("c", "b", "cbabababa")];
    for (m, (from, to, orbit)) in g["map"].as_array().unwrap().iter().zip(printed) {
        assert_eq!(m["from"], from);
        assert_eq!(m["to"], to);
        assert_eq!(m["orbit"], orbit);
        assert_eq!(m["period"], 2);
    }
    assert_eq!(g["greedy"], "ababababababababa");
    assert_eq!(g["greedy_penalty"], "abcbababcbababcba");

    let c = lesson("sampled-chain", &[]);
    let mut eig: Vec<f64> = c["lesson"]["eigenvalues"].as_array().unwrap().iter().map(|e| f(&e["re"])).collect();
    eig.sort_by(f64::total_cmp);
    for (got, want) in eig.iter().zip([-1.0, 0.0, 1.0]) {
        six(*got, want, "eigenvalue");
    }
    for (got, want) in c["lesson"]["stationary"].as_array().unwrap().iter().zip([0.25, 0.5, 0.25]) {
        six(f(got), want, "stationary");
    }
    // The lesson prints 0.5000004951647452 from its own trained rows a and c;
    // its printed rows (0, 1, 0) carry no entropy, so 6 decimals are what it fixes.
    six(f(&c["lesson"]["entropy_rate_bits"]), 0.5000004951647452, "entropy rate");
    assert_eq!(f(&c["corpus_entropy_rate_bits"]), 0.5);

    let gal = lesson("gallery", &[]);
    let rows = gal["rows"].as_array().unwrap();
    let text = |name: &str| rows.iter().find(|r| r["name"] == name).unwrap()["text"].as_str().unwrap().to_string();
    assert_eq!(text("greedy"), "ababababababa");
    assert_eq!(text("greedy (no penalty)"), "ababababababababa");
    assert_eq!(text("greedy (penalty=2)"), "abcbababcbababcba");
    // Sampled rows draw other coins than the lesson's, so their letters differ; what the
    // lesson reads from them holds: a and c are always followed by b.
    for r in rows {
        let s: Vec<char> = r["text"].as_str().unwrap().chars().collect();
        assert!(s[0] == 'a' && s.len() >= 13);
        if r["name"] != "temp tau=2.0" {
            for w in s.windows(2) {
                assert!(w[0] == 'b' || w[1] == 'b', "{}: {} after {}", r["name"], w[1], w[0]);
            }
        }
    }
}

#[test]
fn the_kv_cache_counts_flops_and_sizes() {
    let k = lesson("kv-cache", &[]);
    assert_eq!(k["triangle"]["cached_scores"], 78);
    assert_eq!(k["triangle"]["naive_scores"], 364);
    assert_eq!(k["decode"]["cached_kv"], 31);
    assert_eq!(k["decode"]["naive_kv"], 468);
    close(f(&k["decode"]["ratio"]), 15.1, 0.05, "15.1x");

    let d = lesson("kv-demo-flops", &[]);
    for (i, r) in d["per_step_ratio"].as_array().unwrap().iter().enumerate() {
        six(f(r), (i + 1) as f64, "per-step ratio");
    }
    assert_eq!(d["cumulative_naive"], 3564);
    assert_eq!(d["cumulative_cached"], 708);
    full(f(&d["cumulative_ratio"]), 5.033898305084746, "cumulative ratio");
    assert_eq!(d["cache_numbers"], 64);
    // Same arithmetic, different order: round-off at most (f32 logits here).
    assert!(f(&d["engine_check"]["max_abs_diff"]) < 1e-5);

    let c = lesson("flop-curve", &[]);
    assert_eq!(c["cumulative_naive"].as_array().unwrap().len(), 64);
    assert_eq!(c["cumulative_naive"][7], 3564);
    assert_eq!(c["cumulative_cached"][7], 708);
    // Exercise 4: the FLOP exponents in T are 3 (naive) and 2 (cached), approached from below.
    let (sn, sc) = (f(&c["slope_naive_last_octave"]), f(&c["slope_cached_last_octave"]));
    assert!(sn > 2.5 && sn < 3.0, "naive slope {sn}");
    assert!(sc > 1.5 && sc < 2.0, "cached slope {sc}");

    let s = lesson("kv-size", &[]);
    assert_eq!(s["numbers"], 2147483648u64);
    full(f(&s["gb"]), 4.294967296, "GB at fp16");
    let g = lesson("kv-size", &["--kv-heads", "8"]);
    assert_eq!(g["numbers"], 2147483648u64 / 4);
    assert_eq!(f(&g["gqa_saving"]), 4.0);
    let bad = Command::new(env!("CARGO_BIN_EXE_nexttoken")).args(["lesson", "kv-size", "--kv-heads", "5"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn beam_search_and_retraining_the_bigram() {
    let b = lesson("beam-b2", &[]);
    let half4 = 4.0 * 0.5f64.ln();
    for run in b["runs"].as_array().unwrap() {
        let beams = run["beams"].as_array().unwrap();
        assert_eq!(beams.len(), 2);
        for beam in beams {
            let text = beam["text"].as_str().unwrap();
            assert_eq!(text.len(), 8);
            // b on every second position; 4 coin flips of ½ each.
            assert!(text.chars().step_by(2).all(|c| c == 'b'), "{text}");
            close(f(&beam["logprob"]), half4, 0.01, "4 ln 1/2");
        }
    }
    // The same two beams whatever α: normalisation divides equal lengths alike.
    assert_eq!(b["runs"][0]["beams"][0]["text"], b["runs"][1]["beams"][0]["text"]);
    assert_eq!(b["runs"][0]["beams"][1]["text"], b["runs"][1]["beams"][1]["text"]);

    let r = lesson("bigram-retrain", &[]);
    close(f(&r["floor"]), 0.3395, 0.5e-4, "(24/49) ln 2");
    let losses = r["losses"].as_array().unwrap();
    assert_eq!(losses.len(), 600);
    close(f(losses.last().unwrap()), 0.3395, 0.005, "final loss");
    let p = &r["probs"];
    close(f(&p[0][1]), 1.0, 0.01, "P(b|a)");
    close(f(&p[1][0]), 0.5, 0.01, "P(a|b)");
    close(f(&p[1][2]), 0.5, 0.01, "P(c|b)");
    close(f(&p[2][1]), 1.0, 0.01, "P(b|c)");
    // The rows settling: snapshots from before the first step to after the
    // last, the last the trained rows, and each of the lesson's four rows
    // nearer its optimum at the end than at the start.
    let trace = r["trace"].as_array().unwrap();
    assert!(trace.len() >= 30, "{} snapshots", trace.len());
    assert_eq!(trace[0]["step"], 0);
    assert_eq!(trace.last().unwrap()["step"], 600);
    assert!(trace.windows(2).all(|w| w[0]["step"].as_u64() < w[1]["step"].as_u64()));
    assert_eq!(&trace.last().unwrap()["probs"], p);
    let (start, end) = (&trace[0]["probs"], &trace.last().unwrap()["probs"]);
    for (x, y, optimum) in [(0, 1, 1.0), (1, 0, 0.5), (1, 2, 0.5), (2, 1, 1.0)] {
        let (a, b) = ((f(&start[x][y]) - optimum).abs(), (f(&end[x][y]) - optimum).abs());
        assert!(b < a && b < 0.01, "row {x}, next {y}: {a} from the optimum at the start, {b} at the end");
    }
}

#[test]
fn diversity_rises_with_the_temperature_on_the_default_model() {
    // Course text 000: "raising the temperature increases the number of distinct
    // 8-token completions produced from 40 seeds"; greedy gives one.
    let d = lesson("diversity", &["--model", "../www/models/bard"]);
    assert_eq!(d["seeds"], 40);
    assert_eq!(d["length"], 8);
    let counts: Vec<(f64, u64)> =
        d["points"].as_array().unwrap().iter().map(|p| (f(&p["tau"]), p["distinct"].as_u64().unwrap())).collect();
    assert_eq!(counts[0], (0.0, 1), "greedy: one completion whatever the seed");
    assert!(counts.windows(2).all(|w| w[1].0 > w[0].0 && w[1].1 >= w[0].1), "{counts:?}");
    assert!(counts.iter().all(|c| c.1 <= 40));
    assert!(counts.last().unwrap().1 > counts[1].1, "{counts:?}");
}
