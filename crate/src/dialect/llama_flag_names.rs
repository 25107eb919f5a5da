//! llama.cpp's flag and sampler names as data (`common/arg.cpp`,
//! `common/sampling.cpp`): what each flag does here, the sampler names and
//! letters of `--samplers` and `--sampling-seq`, and the nearest name to a
//! typo.

use crate::rules::StageKind;

/// What a flag does.
#[derive(Clone, Copy)]
pub(super) enum Flag {
    /// Sets one number of the rules (our key).
    Number(&'static str),
    Temperature,
    TopK,
    TopP,
    MinP,
    Typical,
    RepeatLastN,
    TopNSigma,
    Samplers,
    SamplingSeq,
    LogitBias,
    DryBreaker,
    Seed,
    NPredict,
    ReversePrompt,
    /// A decoding flag the playground cannot express (its reason).
    Unexpressed(&'static str, bool),
    /// Not a decoding setting (takes a value or not): noted and ignored.
    Other(bool),
}

/// Every flag read, by its names.
const FLAGS: &[(&[&str], Flag)] = &[
    (&["--temp", "--temperature"], Flag::Temperature),
    (&["--top-k"], Flag::TopK),
    (&["--top-p"], Flag::TopP),
    (&["--min-p"], Flag::MinP),
    (&["--typical", "--typical-p"], Flag::Typical),
    (&["--repeat-penalty"], Flag::Number("repetition_penalty")),
    (&["--repeat-last-n"], Flag::RepeatLastN),
    (&["--presence-penalty"], Flag::Number("presence_penalty")),
    (&["--frequency-penalty"], Flag::Number("frequency_penalty")),
    (&["--dry-multiplier"], Flag::Number("dry_multiplier")),
    (&["--dry-base"], Flag::Number("dry_base")),
    (&["--dry-allowed-length"], Flag::Number("dry_allowed_length")),
    (&["--dry-penalty-last-n"], Flag::Number("dry_penalty_last_n")),
    (&["--dry-sequence-breaker"], Flag::DryBreaker),
    (&["--xtc-probability"], Flag::Number("xtc_probability")),
    (&["--xtc-threshold"], Flag::Number("xtc_threshold")),
    (&["--top-nsigma", "--top-n-sigma"], Flag::TopNSigma),
    (&["--mirostat"], Flag::Number("mirostat")),
    (&["--mirostat-lr"], Flag::Number("mirostat_eta")),
    (&["--mirostat-ent"], Flag::Number("mirostat_tau")),
    (&["--samplers"], Flag::Samplers),
    (&["--sampling-seq", "--sampler-seq"], Flag::SamplingSeq),
    (&["-l", "--logit-bias"], Flag::LogitBias),
    (&["-s", "--seed"], Flag::Seed),
    (&["-n", "--n-predict", "--predict"], Flag::NPredict),
    (&["-r", "--reverse-prompt"], Flag::ReversePrompt),
    (&["--ignore-eos"], Flag::Unexpressed("generation here always stops at the end-of-text token", false)),
    (&["--dynatemp-range"], Flag::Unexpressed("dynamic temperature has no stage here; the temperature is fixed", true)),
    (&["--dynatemp-exp"], Flag::Unexpressed("dynamic temperature has no stage here", true)),
    (&["--grammar", "--grammar-file", "-j", "--json-schema", "-jf", "--json-schema-file"], Flag::Unexpressed("grammars are not rules of this playground", true)),
    (&["--min-keep"], Flag::Number("min_keep")),
    (
        &[
            "-m", "--model", "-p", "--prompt", "-f", "--file", "-c", "--ctx-size", "-t", "--threads", "-tb", "--threads-batch",
            "-b", "--batch-size", "-ub", "--ubatch-size", "-ngl", "--gpu-layers", "--n-gpu-layers", "--port", "--host", "-a",
            "--alias", "--chat-template", "--chat-template-file", "-sys", "--system-prompt", "--keep", "-hf", "-hfr", "--hf-repo",
            "-hff", "--hf-file", "--mmproj", "-np", "--parallel", "--lora", "-ctk", "--cache-type-k", "-ctv", "--cache-type-v",
            "--rope-scaling", "--rope-freq-base", "--rope-freq-scale", "-sm", "--split-mode", "-ts", "--tensor-split", "-mg",
            "--main-gpu", "--api-key", "--log-file", "-ot", "--override-tensor", "-fa", "--flash-attn", "-dev", "--device",
            "--reasoning-format", "--reasoning-budget", "-md", "--model-draft", "--n-probs", "-to", "--timeout",
            "--slot-save-path", "-mu", "--model-url", "--in-prefix", "--in-suffix", "-C", "--cpu-mask", "--numa",
            "--prio", "--poll", "--override-kv", "-dt", "--defrag-thold", "--spm-infill", "--threads-http",
        ],
        Flag::Other(true),
    ),
    (
        &[
            "-cnv", "--conversation", "-no-cnv", "--no-conversation", "-i", "--interactive", "-if", "--interactive-first",
            "--jinja", "--no-jinja", "--mlock", "--no-mmap", "-v", "--verbose", "--log-verbose", "--color", "--simple-io",
            "-st", "--single-turn", "--no-warmup", "-cb", "--cont-batching", "-nocb", "--no-cont-batching", "--metrics",
            "--embedding", "--embeddings", "-e", "--escape", "--no-escape", "--no-display-prompt", "--no-perf", "-h", "--help",
            "--version", "--multiline-input", "--verbose-prompt", "--special", "-sp", "--no-context-shift", "--context-shift",
            "--no-webui", "--log-disable", "--log-colors", "--check-tensors", "-kvu", "--kv-unified", "-nkvo", "--no-kv-offload",
        ],
        Flag::Other(false),
    ),
];

/// llama.cpp's sampler names (`common_sampler_type_from_name`, with the
/// alternatives it accepts) and letters (`common_sampler_type_from_chars`).
pub(super) const SAMPLER_NAMES: &[(&str, char, StageKind)] = &[
    ("penalties", 'e', StageKind::Penalties),
    ("dry", 'd', StageKind::Dry),
    ("top_n_sigma", 's', StageKind::TopNSigma),
    ("top_k", 'k', StageKind::TopK),
    ("typ_p", 'y', StageKind::TypicalPLlama),
    ("top_p", 'p', StageKind::TopP),
    ("min_p", 'm', StageKind::MinP),
    ("xtc", 'x', StageKind::Xtc),
    ("temperature", 't', StageKind::Temperature),
];

pub(super) fn sampler_named(name: &str) -> Option<StageKind> {
    let n = name.trim().to_ascii_lowercase().replace('-', "_");
    let n = match n.as_str() {
        "typical_p" | "typical" => "typ_p",
        "nucleus" => "top_p",
        "temp" => "temperature",
        "top_nsigma" | "top_n_sigma" => "top_n_sigma",
        other => other,
    };
    SAMPLER_NAMES.iter().find(|(s, _, _)| *s == n).map(|(_, _, k)| *k)
}

pub(super) fn flag_of(name: &str) -> Option<Flag> {
    FLAGS.iter().find(|(names, _)| names.contains(&name)).map(|(_, f)| *f)
}

/// The known flag closest to an unknown one (for "did you mean").
pub(super) fn nearest_flag(name: &str) -> Option<&'static str> {
    FLAGS
        .iter()
        .flat_map(|(names, _)| names.iter().copied())
        .filter(|n| n.starts_with("--"))
        .map(|n| (edit_distance(n, name), n))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, n)| n)
}

/// Edits between two names, a swap of neighbours counting as one (the
/// optimal string alignment distance): `--tmep` is one from `--temp`.
pub(super) fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for j in 0..=b.len() {
        d[0][j] = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}


impl Flag {
    pub(super) fn takes_value(self) -> bool {
        !matches!(self, Flag::Unexpressed(_, false) | Flag::Other(false))
    }
}
