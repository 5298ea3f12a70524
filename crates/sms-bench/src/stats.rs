//! Medians of repeated runs.

/// The median of `values` (the mean of the middle two for an even count); `None` when empty.
#[must_use]
pub fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let middle = sorted.len() / 2;
    match sorted.len() {
        0 => None,
        n if n % 2 == 1 => sorted.get(middle).copied(),
        _ => Some((sorted.get(middle - 1)? + sorted.get(middle)?) / 2.0),
    }
}
