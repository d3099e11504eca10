//! numpy's legacy `RandomState`: the MT19937 generator seeded with `init_genrand`, and the
//! legacy samplers built on it (53-bit doubles from two draws, the polar Box–Muller
//! normal with its cached second value, masked rejection for bounded integers, Fisher–
//! Yates shuffles), so `np.random.seed(0)` reproduces numpy's exact streams. The same
//! generator seeded by `init_by_array` is CPython's `random.Random`.
//!
//! Also TensorFlow's counter-based Philox4x32-10 generator and the CPU samplers of its
//! random kernels (uniform floats from the mantissa bits, Box–Muller normals, the
//! truncated normal's rejection, bounded integers by modulo), laid out over the output as
//! TF's `FillPhiloxRandom` does, so that `tf.random.*` with a seed gives TF's numbers.

const N: usize = 624;
const M: usize = 397;

/// The Mersenne Twister state plus the cached Gaussian of the legacy normal sampler.
#[derive(Clone)]
pub struct RandomState {
    mt: [u32; N],
    pos: usize,
    gauss: Option<f64>,
}

impl Default for RandomState {
    fn default() -> Self {
        RandomState::new(5489)
    }
}

impl RandomState {
    /// `RandomState(seed)` / `np.random.seed(seed)` for an integer seed in [0, 2**32).
    pub fn new(seed: u32) -> RandomState {
        let mut mt = [0u32; N];
        mt[0] = seed;
        for i in 1..N {
            mt[i] = 1812433253u32
                .wrapping_mul(mt[i - 1] ^ (mt[i - 1] >> 30))
                .wrapping_add(i as u32);
        }
        RandomState {
            mt,
            pos: N,
            gauss: None,
        }
    }

    /// CPython's `random.seed(n)`: `init_by_array` over the 32-bit words of `|n|`,
    /// least significant first (`[0]` for zero).
    pub fn from_key(key: &[u32]) -> RandomState {
        let mut r = RandomState::new(19650218);
        let key: &[u32] = if key.is_empty() { &[0] } else { key };
        let mt = &mut r.mt;
        let (mut i, mut j) = (1usize, 0usize);
        for _ in 0..N.max(key.len()) {
            mt[i] = (mt[i] ^ (mt[i - 1] ^ (mt[i - 1] >> 30)).wrapping_mul(1664525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= N {
                mt[0] = mt[N - 1];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..N - 1 {
            mt[i] = (mt[i] ^ (mt[i - 1] ^ (mt[i - 1] >> 30)).wrapping_mul(1566083941))
                .wrapping_sub(i as u32);
            i += 1;
            if i >= N {
                mt[0] = mt[N - 1];
                i = 1;
            }
        }
        mt[0] = 0x8000_0000;
        r
    }

    /// The generator's words and position, for CPython's `getstate`/`setstate`.
    pub fn words(&self) -> (Vec<u32>, usize) {
        (self.mt.to_vec(), self.pos)
    }

    /// A state from `words` (624 of them) and a position; `None` when either is invalid.
    pub fn from_words(words: &[u32], pos: usize) -> Option<RandomState> {
        let mt: [u32; N] = words.try_into().ok()?;
        (pos <= N).then_some(RandomState {
            mt,
            pos,
            gauss: None,
        })
    }

    /// A state seeded from the clock, for `RandomState()` without a seed.
    pub fn from_entropy() -> RandomState {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        RandomState::new((t ^ (t >> 32)) as u32)
    }

    fn twist(&mut self) {
        for i in 0..N {
            let y = (self.mt[i] & 0x8000_0000) | (self.mt[(i + 1) % N] & 0x7fff_ffff);
            let mut v = self.mt[(i + M) % N] ^ (y >> 1);
            if y & 1 != 0 {
                v ^= 0x9908_b0df;
            }
            self.mt[i] = v;
        }
        self.pos = 0;
    }

    pub fn next_u32(&mut self) -> u32 {
        if self.pos >= N {
            self.twist();
        }
        let mut y = self.mt[self.pos];
        self.pos += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    pub fn next_u64(&mut self) -> u64 {
        let hi = self.next_u32() as u64;
        (hi << 32) | self.next_u32() as u64
    }

    /// A double in [0, 1) with 53 random bits, from two 32-bit draws.
    pub fn next_f64(&mut self) -> f64 {
        let a = (self.next_u32() >> 5) as f64;
        let b = (self.next_u32() >> 6) as f64;
        (a * 67108864.0 + b) / 9007199254740992.0
    }

    /// A standard normal draw: the legacy polar method, returning the cached value of the
    /// previous pair first.
    pub fn gauss(&mut self) -> f64 {
        if let Some(g) = self.gauss.take() {
            return g;
        }
        loop {
            let x1 = 2.0 * self.next_f64() - 1.0;
            let x2 = 2.0 * self.next_f64() - 1.0;
            let r2 = x1 * x1 + x2 * x2;
            if r2 < 1.0 && r2 != 0.0 {
                let f = (-2.0 * r2.ln() / r2).sqrt();
                self.gauss = Some(f * x1);
                return f * x2;
            }
        }
    }

    /// A value in `[0, rng]` by masked rejection, as numpy's legacy bounded integers.
    pub fn bounded(&mut self, rng: u64) -> u64 {
        if rng == 0 {
            return 0;
        }
        let mut mask = rng;
        for s in [1, 2, 4, 8, 16, 32] {
            mask |= mask >> s;
        }
        if rng <= 0xffff_ffff {
            if rng == 0xffff_ffff {
                return self.next_u32() as u64;
            }
            loop {
                let v = (self.next_u32() as u64) & mask;
                if v <= rng {
                    return v;
                }
            }
        }
        loop {
            let v = self.next_u64() & mask;
            if v <= rng {
                return v;
            }
        }
    }

    /// `randint(low, high)` for one value; the caller checks `low < high`.
    pub fn randint(&mut self, low: i64, high: i64) -> i64 {
        let rng = (high as i128 - 1 - low as i128) as u64;
        low.wrapping_add(self.bounded(rng) as i64)
    }

    /// A uniform index in `[0, max]` (numpy's `random_interval`, used by shuffles).
    pub fn interval(&mut self, max: u64) -> u64 {
        self.bounded(max)
    }

    /// Shuffles `n` items in place through `swap(i, j)`, as numpy's legacy shuffle does.
    pub fn shuffle_with(&mut self, n: usize, mut swap: impl FnMut(usize, usize)) {
        for i in (1..n).rev() {
            let j = self.interval(i as u64) as usize;
            swap(i, j);
        }
    }

    /// A permutation of `0..n`.
    pub fn permutation(&mut self, n: usize) -> Vec<i64> {
        let mut v: Vec<i64> = (0..n as i64).collect();
        self.shuffle_with(n, |i, j| v.swap(i, j));
        v
    }
}

const PHILOX_M0: u32 = 0xD251_1F53;
const PHILOX_M1: u32 = 0xCD9E_8D57;
const PHILOX_W0: u32 = 0x9E37_79B9;
const PHILOX_W1: u32 = 0xBB67_AE85;

/// TensorFlow's Philox4x32-10: a 128-bit counter and a 64-bit key; each call returns four
/// 32-bit words and advances the counter by one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Philox {
    counter: [u32; 4],
    key: [u32; 2],
}

impl Philox {
    /// The generator at `key` with the 128-bit counter `(lo, hi)`, each half as TF stores
    /// it in memory (`PhiloxRandom(seed, seed2)` is `key = seed`, counter `(0, seed2)`).
    pub fn new(key: u64, counter_lo: u64, counter_hi: u64) -> Philox {
        Philox {
            counter: [
                counter_lo as u32,
                (counter_lo >> 32) as u32,
                counter_hi as u32,
                (counter_hi >> 32) as u32,
            ],
            key: [key as u32, (key >> 32) as u32],
        }
    }

    /// The generator of a stateless op's `seed=[a, b]` (TF's `GenerateKey`): one Philox
    /// block of the seed under a fixed key gives the key (its first two words) and the
    /// high half of the counter (its last two); the low half starts at zero. Returned as
    /// `(key, counter_hi)`.
    pub fn stateless_key(seed0: u64, seed1: u64) -> (u64, u64) {
        let mix = Philox::new(0x0246_1e29_3ec8_f720, seed0, seed1).next_block();
        (
            (mix[0] as u64) | ((mix[1] as u64) << 32),
            (mix[2] as u64) | ((mix[3] as u64) << 32),
        )
    }

    fn round(c: [u32; 4], k: [u32; 2]) -> [u32; 4] {
        let p0 = (PHILOX_M0 as u64) * (c[0] as u64);
        let p1 = (PHILOX_M1 as u64) * (c[2] as u64);
        [
            ((p1 >> 32) as u32) ^ c[1] ^ k[0],
            p1 as u32,
            ((p0 >> 32) as u32) ^ c[3] ^ k[1],
            p0 as u32,
        ]
    }

    /// The next four words.
    pub fn next_block(&mut self) -> [u32; 4] {
        let mut c = self.counter;
        let mut k = self.key;
        for r in 0..10 {
            if r > 0 {
                k[0] = k[0].wrapping_add(PHILOX_W0);
                k[1] = k[1].wrapping_add(PHILOX_W1);
            }
            c = Philox::round(c, k);
        }
        self.skip(1);
        c
    }

    /// Advances the counter by `n` blocks, carrying through all 128 bits.
    pub fn skip(&mut self, n: u64) {
        let lo = (self.counter[0] as u64 | ((self.counter[1] as u64) << 32)) as u128;
        let hi = (self.counter[2] as u64 | ((self.counter[3] as u64) << 32)) as u128;
        let v = (lo | (hi << 64)).wrapping_add(n as u128);
        *self = Philox::new(
            (self.key[0] as u64) | ((self.key[1] as u64) << 32),
            v as u64,
            (v >> 64) as u64,
        );
    }
}

/// The distributions of TF's Philox kernels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PhiloxDist {
    /// `[0, 1)` from the mantissa bits.
    Uniform,
    /// Standard normal by Box–Muller.
    Normal,
    /// Standard normal samples with `|x| < 2`, by rejection.
    TruncatedNormal,
}

/// `[1, 2) - 1` from 23 random mantissa bits, as TF's `Uint32ToFloat`.
fn u32_to_f32(x: u32) -> f32 {
    f32::from_bits((x & 0x7f_ffff) | 0x3f80_0000) - 1.0
}

/// `[1, 2) - 1` from 52 random mantissa bits, as TF's `Uint64ToDouble`.
fn u64_to_f64(x0: u32, x1: u32) -> f64 {
    let man = (((x0 & 0xf_ffff) as u64) << 32) | x1 as u64;
    f64::from_bits((1023u64 << 52) | man) - 1.0
}

fn box_muller_f32(x0: u32, x1: u32) -> [f32; 2] {
    let u1 = u32_to_f32(x0).max(1.0e-7);
    let v1 = 2.0 * std::f32::consts::PI * u32_to_f32(x1);
    let u2 = (-2.0 * u1.ln()).sqrt();
    [v1.sin() * u2, v1.cos() * u2]
}

fn box_muller_f64(x: [u32; 4]) -> [f64; 2] {
    let u1 = u64_to_f64(x[0], x[1]).max(1.0e-7);
    let v1 = 2.0 * std::f64::consts::PI * u64_to_f64(x[2], x[3]);
    let u2 = (-2.0 * u1.ln()).sqrt();
    [v1.sin() * u2, v1.cos() * u2]
}

/// One output group of `dist` (four float32 or two float64 values) from `gen`.
fn philox_group(gen: &mut Philox, dist: PhiloxDist, wide: bool) -> Vec<f64> {
    match (dist, wide) {
        (PhiloxDist::Uniform, false) => gen.next_block().map(|x| u32_to_f32(x) as f64).to_vec(),
        (PhiloxDist::Uniform, true) => {
            let b = gen.next_block();
            vec![u64_to_f64(b[0], b[1]), u64_to_f64(b[2], b[3])]
        }
        (PhiloxDist::Normal, false) => {
            let b = gen.next_block();
            let [a, c] = box_muller_f32(b[0], b[1]);
            let [d, e] = box_muller_f32(b[2], b[3]);
            [a, c, d, e].map(f64::from).to_vec()
        }
        (PhiloxDist::Normal, true) => box_muller_f64(gen.next_block()).to_vec(),
        (PhiloxDist::TruncatedNormal, _) => {
            // TF draws single words (a `SingleSampleAdapter`) and keeps the pairs' values
            // inside two standard deviations until the group is full.
            let want = if wide { 2 } else { 4 };
            let mut words = Words::new(gen);
            let mut out = Vec::with_capacity(want);
            loop {
                let pair = if wide {
                    box_muller_f64([words.next(), words.next(), words.next(), words.next()])
                } else {
                    let x0 = words.next();
                    box_muller_f32(x0, words.next()).map(f64::from)
                };
                for v in pair {
                    if v.abs() < 2.0 {
                        out.push(v);
                        if out.len() == want {
                            return out;
                        }
                    }
                }
            }
        }
    }
}

/// TF's `SingleSampleAdapter`: a generator's blocks handed out one word at a time.
struct Words<'a> {
    gen: &'a mut Philox,
    block: [u32; 4],
    used: usize,
}

impl<'a> Words<'a> {
    fn new(gen: &'a mut Philox) -> Words<'a> {
        Words {
            gen,
            block: [0; 4],
            used: 4,
        }
    }

    fn next(&mut self) -> u32 {
        if self.used == 4 {
            self.block = self.gen.next_block();
            self.used = 0;
        }
        self.used += 1;
        self.block[self.used - 1]
    }

    /// TF's `SimplePhilox::RandDouble`: two words as a double in `[0, 1)`.
    fn double(&mut self) -> f64 {
        let x0 = self.next();
        u64_to_f64(x0, self.next())
    }
}

/// The permutation of `0..n` TF's `RandomShuffle` applies: `n - 1` words, each swapping
/// position `i` with `i + word % (n - i)`.
pub fn philox_permutation(base: Philox, n: usize) -> Vec<i64> {
    let mut perm: Vec<i64> = (0..n as i64).collect();
    let mut gen = base;
    let mut words = Words::new(&mut gen);
    for i in 0..n.saturating_sub(1) {
        let j = i + (words.next() as usize) % (n - i);
        perm.swap(i, j);
    }
    perm
}

/// TF's CPU `Multinomial` (`tf.random.categorical`): for each row of `logits` (`classes`
/// wide), `num_samples` class indices drawn by inverting the running sum of
/// `exp(logit - max)` over the finite logits with a uniform double each.
pub fn philox_categorical(
    base: Philox,
    logits: &[f64],
    classes: usize,
    num_samples: usize,
) -> Vec<i64> {
    let mut gen = base;
    let mut words = Words::new(&mut gen);
    let mut out = Vec::with_capacity(num_samples * logits.len() / classes.max(1));
    for row in logits.chunks(classes.max(1)) {
        let max = row
            .iter()
            .filter(|v| v.is_finite())
            .fold(f64::MIN, |m, &v| m.max(v));
        let mut total = 0.0;
        let cdf: Vec<f64> = row
            .iter()
            .map(|&v| {
                if v.is_finite() {
                    total += (v - max).exp();
                }
                total
            })
            .collect();
        for _ in 0..num_samples {
            let x = words.double() * total;
            out.push(cdf.partition_point(|&c| c <= x) as i64);
        }
    }
    out
}

/// `n` samples of `dist` from `base`, float32 (or, `wide`, float64), each output group
/// drawn from its own place of the stream as TF's CPU kernels do (the truncated normal,
/// which may use many words per group, reserves 256 blocks per group).
pub fn philox_floats(base: Philox, dist: PhiloxDist, wide: bool, n: usize) -> Vec<f64> {
    let group = if wide { 2 } else { 4 };
    let mut out = Vec::with_capacity(n);
    let mut gen = base;
    for g in 0..n.div_ceil(group) {
        if dist == PhiloxDist::TruncatedNormal {
            gen = base;
            gen.skip(g as u64 * group as u64 * 256 / 4);
        }
        let vals = philox_group(&mut gen, dist, wide);
        let take = group.min(n - g * group);
        out.extend_from_slice(&vals[..take]);
    }
    out
}

/// `n` integers in `[lo, hi)` from `base` by modulo, as TF's `RandomUniformInt`: one word
/// each for 32-bit outputs, two for 64-bit ones. The caller checks `lo < hi`.
pub fn philox_ints(base: Philox, lo: i64, hi: i64, wide: bool, n: usize) -> Vec<i64> {
    let mut gen = base;
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let b = gen.next_block();
        if wide {
            let range = (hi as u64).wrapping_sub(lo as u64);
            for i in 0..2 {
                let bits = b[2 * i] as u64 | ((b[2 * i + 1] as u64) << 32);
                out.push(lo.wrapping_add((bits % range) as i64));
            }
        } else {
            let range = (hi as i32 as u32).wrapping_sub(lo as i32 as u32);
            for x in b {
                out.push((lo as i32).wrapping_add((x % range) as i32) as i64);
            }
        }
    }
    out.truncate(n);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn philox_matches_the_random123_known_answers() {
        // Known-answer vectors of Philox4x32-10 from the Random123 distribution.
        let mut zero = Philox::new(0, 0, 0);
        assert_eq!(
            zero.next_block(),
            [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]
        );
        let mut pi = Philox {
            counter: [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
            key: [0xa409_3822, 0x299f_31d0],
        };
        assert_eq!(
            pi.next_block(),
            [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1]
        );
    }

    #[test]
    fn init_by_array_gives_cpythons_first_doubles() {
        // `random.seed(0); random.random()` and `random.seed(42); random.random()`.
        assert_eq!(RandomState::from_key(&[0]).next_f64(), 0.8444218515250481);
        assert_eq!(RandomState::from_key(&[42]).next_f64(), 0.6394267984578837);
    }

    #[test]
    fn skip_carries_into_the_high_words() {
        let mut g = Philox::new(7, u64::MAX, 0);
        g.skip(1);
        assert_eq!(g, Philox::new(7, 0, 1));
    }
}
