//! Logit bias and banned tokens.

/// Adds each `(id, b)` bias to its logit (repeated ids add up), then sets every
/// banned id to `-inf` so it gets probability exactly 0. Ids outside the
/// vocabulary are skipped here; `RuleSettings::validate` refuses them.
pub fn apply_bias_and_bans(logits: &[f64], bias: &[(u32, f64)], banned: &[u32]) -> Vec<f64> {
    let mut out = logits.to_vec();
    for &(id, b) in bias {
        if let Some(z) = out.get_mut(id as usize) {
            *z += b;
        }
    }
    for &id in banned {
        if let Some(z) = out.get_mut(id as usize) {
            *z = f64::NEG_INFINITY;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bias_adds_and_bans_win() {
        let out = apply_bias_and_bans(&[1.0, 2.0, 3.0], &[(0, 0.5), (2, 10.0)], &[2]);
        assert_eq!(out, vec![1.5, 2.0, f64::NEG_INFINITY]);
    }
}
