use std::collections::BTreeMap;

/// Splits a budget in proportion to lengths (largest remainder).
pub fn split_budget(lengths: &[u64], total: u64) -> Vec<u64> {
    let sum: u64 = lengths.iter().sum();
    if sum <= total { return lengths.to_vec(); }
    let mut out: Vec<u64> = lengths.iter().map(|l| l * total / sum).collect();
    let mut rem: BTreeMap<(u64, usize), ()> = BTreeMap::new();
    for (i, l) in lengths.iter().enumerate() { rem.insert(((l * total) % sum, usize::MAX - i), ()); }
    let short = total - out.iter().sum::<u64>();
    for ((_, j), _) in rem.iter().rev().take(short as usize) { out[usize::MAX - j] += 1; }
    out
}

#[cfg(test)]
mod tests { #[test] fn sums() { assert_eq!(super::split_budget(&[3, 3, 3], 8).iter().sum::<u64>(), 8); } }
