//! Stable hashing: the same number from the same input on every build and platform (std's
//! hasher is not promised to stay the same across Rust releases, and a run must repeat).
//! FNV-1a, 64 bits, and SplitMix64's finaliser, which spreads nearby inputs over the whole
//! range.

/// FNV-1a's 64-bit offset basis.
const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
/// FNV-1a's 64-bit prime.
const FNV_PRIME: u64 = 0x0100_0000_01b3;

/// FNV-1a over bytes written in several parts.
#[derive(Debug, Clone, Copy)]
pub struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Fnv1a(FNV_OFFSET_BASIS)
    }
}

impl Fnv1a {
    /// Adds `bytes` to the hash.
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(FNV_PRIME);
        }
    }

    /// The hash of everything written.
    pub fn finish(self) -> u64 {
        self.0
    }
}

/// FNV-1a of `bytes`.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h = Fnv1a::default();
    h.write(bytes);
    h.finish()
}

/// SplitMix64's finaliser (its output function, without the step that adds to the state).
pub fn splitmix_finalise(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Published FNV-1a test vectors, and the finaliser's known first output of SplitMix64
    /// seeded with 0 (the state after one step is the golden gamma).
    #[test]
    fn known_values() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
        let mut parts = Fnv1a::default();
        parts.write(b"foo");
        parts.write(b"bar");
        assert_eq!(parts.finish(), fnv1a(b"foobar"));
        assert_eq!(
            splitmix_finalise(0x9E37_79B9_7F4A_7C15),
            0xe220_a839_7b1d_cdaf
        );
    }
}
