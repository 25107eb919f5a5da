//! A long session on the shipped model (bard, context 128): generating far
//! past the context limit with the sliding window and with stop-at-limit,
//! rewinding and re-running many times. Every re-run must draw the tokens
//! the first run drew at the same places; at checkpoints the cached logits
//! must equal a full recompute over the window the cache holds; and the
//! process's resident memory must stay flat.
//!
//! CI runs a short version (`NEXTTOKEN_LONG_TOKENS`, default 2,000 steps, and
//! `NEXTTOKEN_LONG_REWINDS`, default 200, split between the two policies);
//! `pkg-scripts/long-session` runs the 10,000 tokens and 1,000 rewinds
//! on an optimised build. One test in this file, so no other test's
//! allocations share the process while its memory is measured.

use std::path::Path;

use nexttoken::backend::BackendKind;
use nexttoken::loader::session_from_path;
use nexttoken::report::StopReason;
use nexttoken::rng::Rng;
use nexttoken::rules::RuleSettings;
use nexttoken::session::{ContextPolicy, GenerationSettings, Session};

fn model_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../www/models/bard"))
}

fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Resident set size in bytes, from /proc/self/statm (second field, pages).
fn rss_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("Linux /proc");
    let pages: usize = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

#[derive(Default, Debug)]
struct Tally {
    steps: usize,
    rewinds: usize,
    checkpoints: usize,
    slides: usize,
    context_stops: usize,
    max_new_stops: usize,
    worst_cache_diff: f64,
}

/// The pending logits against a full recompute over the window the cache holds.
fn check_cache(s: &mut Session, tally: &mut Tally, context: usize) {
    let history = s.history();
    let cached = s.model_mut().cache_len();
    assert!(cached <= context, "the cache holds {cached} positions, more than the context {context}");
    let start = s.pending_position() - cached;
    let pending = s.pending_logits().to_vec();
    let recomputed = s.model_mut().forward_naive_last(&history[start..]).unwrap();
    let diff = pending.iter().zip(&recomputed).map(|(a, &b)| (a - b as f64).abs()).fold(0.0, f64::max);
    assert!(diff < 1e-3, "step {}: cached logits differ from the recompute by {diff}", tally.steps);
    tally.worst_cache_diff = tally.worst_cache_diff.max(diff);
    tally.checkpoints += 1;
}

/// Steps and rewinds under one policy until `steps` steps and `rewinds`
/// rewinds are done. `drawn[i]` is the token first drawn at generated index i;
/// every later draw there must be the same token.
fn run_policy(policy: ContextPolicy, steps: usize, rewinds: usize, tally: &mut Tally) {
    let mut s = session_from_path(model_dir(), BackendKind::Flex).unwrap();
    let context = s.info().context;
    let settings = GenerationSettings {
        rules: RuleSettings { temperature: 0.9, top_k: 50, ..RuleSettings::default() },
        seed: 7,
        max_new: 4096,
        context_policy: policy,
        ..GenerationSettings::default()
    };
    let prompt = "ROMEO:\nWhat light through yonder window breaks?";
    s.start(prompt, &settings).unwrap();
    let prompt_len = s.history().len();
    let mut drawn: Vec<u32> = Vec::new();
    let mut pick = Rng::new(99);
    let every = (steps / rewinds.max(1)).max(1);
    let (mut done_steps, mut done_rewinds) = (0, 0);
    let mut last_dropped = 0;
    while done_steps < steps || done_rewinds < rewinds {
        let rep = s.step(&settings).unwrap();
        done_steps += 1;
        let chosen = rep.chosen.expect("a step draws a token").id;
        let n = s.generated_ids().len();
        let at = n - 1;
        match drawn.get(at) {
            Some(&first) => assert_eq!(chosen, first, "{policy:?}: a re-run drew another token at {at}"),
            None => drawn.push(chosen),
        }
        if rep.kv.dropped > last_dropped {
            tally.slides += 1;
        }
        last_dropped = rep.kv.dropped;
        match rep.stop {
            Some(StopReason::ContextFull) => tally.context_stops += 1,
            Some(StopReason::MaxNew) => tally.max_new_stops += 1,
            Some(other) => panic!("{policy:?}: stopped by {other:?}"),
            None => {}
        }
        if policy == ContextPolicy::Error {
            assert!(prompt_len + n <= context + 1, "stop-at-limit went past the context");
        }
        if done_steps % 97 == 0 && rep.stop.is_none() {
            check_cache(&mut s, tally, context);
        }
        // Rewind on schedule, and always when stopped (else nothing more can be drawn).
        if rep.stop.is_some() || (done_steps % every == 0 && done_rewinds < rewinds) {
            // Scheduled rewinds go back less than the steps between them on
            // average (so the generation moves on past the context); after a
            // stop, up to 64 tokens (across a slide of the window, often).
            let reach = if rep.stop.is_some() { 64 } else { every as u64 };
            let depth = 1 + (pick.next_u64() % reach) as usize;
            let to = n.saturating_sub(depth);
            let back = s.rewind(to, &settings).unwrap();
            assert_eq!(back.full.map(|t| t.generated.len()), Some(to));
            assert_eq!(s.generated_ids()[..], drawn[..to]);
            last_dropped = back.kv.dropped;
            done_rewinds += 1;
            if done_rewinds % 7 == 0 {
                check_cache(&mut s, tally, context);
            }
        }
    }
    tally.steps += done_steps;
    tally.rewinds += done_rewinds;
}

#[test]
fn a_long_session_across_the_context_keeps_its_tokens_its_cache_and_its_memory() {
    let steps = env_count("NEXTTOKEN_LONG_TOKENS", 2000);
    let rewinds = env_count("NEXTTOKEN_LONG_REWINDS", 200);
    let started = std::time::Instant::now();
    let mut tally = Tally::default();
    // Warm-up: one short round of each policy, so the allocator's pools, the
    // backend's buffers and the model's caches have reached their working size.
    run_policy(ContextPolicy::Sliding, 200, 20, &mut tally);
    run_policy(ContextPolicy::Error, 200, 20, &mut tally);
    let before = rss_bytes();
    let mut measured = Tally::default();
    run_policy(ContextPolicy::Sliding, steps / 2, rewinds / 2, &mut measured);
    run_policy(ContextPolicy::Error, steps - steps / 2, rewinds - rewinds / 2, &mut measured);
    let after = rss_bytes();
    let mib = |b: usize| b as f64 / (1 << 20) as f64;
    eprintln!(
        "long session: {} steps, {} rewinds, {} checkpoints (worst cache difference {:.2e}), {} slides, {} context stops, {} max_new stops; \
         RSS {:.1} MiB before, {:.1} MiB after (+{:.1} MiB); {:.1} s",
        measured.steps,
        measured.rewinds,
        measured.checkpoints,
        measured.worst_cache_diff,
        measured.slides,
        measured.context_stops,
        measured.max_new_stops,
        mib(before),
        mib(after),
        mib(after.saturating_sub(before)),
        started.elapsed().as_secs_f64()
    );
    assert!(measured.steps >= steps && measured.rewinds >= rewinds);
    assert!(measured.slides > 0, "the sliding window never slid: {measured:?}");
    assert!(measured.context_stops > 0, "stop-at-limit never reached the limit: {measured:?}");
    // Flat: a session keeps per generated token only its id, text and RNG
    // state (well under 1 KB; at most 4,096 tokens live), and the KV cache is
    // bounded by the context (bard: 4 layers x K,V x 2 heads x 128 x 32 x 4 B
    // = 256 KiB). 16 MiB covers those with the allocator's slack; keeping one
    // step's 2,048-entry distributions (16 KB of f64 each, or more) per step
    // would pass it within about a thousand steps.
    let growth = after.saturating_sub(before);
    assert!(growth < 16 << 20, "resident memory grew by {:.1} MiB over the session", mib(growth));
}
