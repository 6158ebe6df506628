//! The benchmark workloads: fixed message sizes and the Internet mix.

/// Fixed message sizes, bytes.
pub const SIZES: [usize; 9] = [16, 64, 256, 1024, 1500, 2048, 4096, 8192, 65536];

/// Sizes of the cycles-per-message table, those the AES-GCM-SIV papers quote (a subset of
/// [`SIZES`]).
pub const PER_MESSAGE_SIZES: [usize; 7] = [16, 64, 256, 1024, 2048, 4096, 8192];

/// A set of messages processed as one pass.
#[derive(Clone, Debug)]
pub struct Workload {
    pub label: String,
    pub sizes: Vec<usize>,
}

impl Workload {
    pub fn fixed(size: usize) -> Workload {
        Workload {
            label: format!("{size}"),
            sizes: vec![size],
        }
    }

    /// The Internet mix: 1000 messages from a generator with a fixed start, 44 % uniform in
    /// 40..=100 bytes, 37 % in 1400..=1500 and 19 % in 101..=1399 (exact counts, shuffled).
    pub fn internet_mix() -> Workload {
        let mut rng = SplitMix64(0x0C0B_5EED);
        let mut sizes = Vec::with_capacity(1000);
        for (count, low, high) in [(440, 40, 100), (370, 1400, 1500), (190, 101, 1399)] {
            sizes.extend((0..count).map(|_| rng.in_range(low, high)));
        }
        for i in (1..sizes.len()).rev() {
            sizes.swap(i, rng.in_range(0, i));
        }
        Workload {
            label: "mix".to_string(),
            sizes,
        }
    }

    pub fn bytes(&self) -> usize {
        self.sizes.iter().sum()
    }

    pub fn messages(&self) -> usize {
        self.sizes.len()
    }

    pub fn all() -> Vec<Workload> {
        SIZES
            .iter()
            .map(|&size| Workload::fixed(size))
            .chain([Workload::internet_mix()])
            .collect()
    }
}

/// SplitMix64: a small, well-mixed generator; its fixed starting state fixes the mix for every
/// run.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn in_range(&mut self, low: usize, high: usize) -> usize {
        low + (self.next() % (high - low + 1) as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mix_has_its_stated_shape() {
        let mix = Workload::internet_mix();
        assert_eq!(mix.messages(), 1000);
        let count = |low: usize, high: usize| {
            mix.sizes
                .iter()
                .filter(|&&s| (low..=high).contains(&s))
                .count()
        };
        assert_eq!(
            (count(40, 100), count(1400, 1500), count(101, 1399)),
            (440, 370, 190)
        );
        assert_eq!(Workload::internet_mix().sizes, mix.sizes, "fixed start");
    }
}
