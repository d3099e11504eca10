//! numpy's legacy `RandomState`: the MT19937 generator seeded with `init_genrand`, and the
//! legacy samplers built on it (53-bit doubles from two draws, the polar Box–Muller
//! normal with its cached second value, masked rejection for bounded integers, Fisher–
//! Yates shuffles), so `np.random.seed(0)` reproduces numpy's exact streams.

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
