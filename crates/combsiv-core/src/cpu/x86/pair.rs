//! A test-only tier: two blocks per register, as a pair of XMM registers, on the AES-NI
//! instructions. It exists to check two things on any machine with AES-NI: that a tier is
//! added by the files `docs/ARCHITECTURE.md` names and no others (this file, a `TierToken`
//! and a `Backend` variant, one arm of `per_tier!`), and that the generic kernels compute the
//! same at width 2 as at width 1 natively, where otherwise only a VAES machine or Miri runs
//! width 2.

use core::arch::x86_64::__m128i;

use super::Aesni;
use crate::cpu::{Tier, TierToken};

/// Proof that the CPU has AES-NI, for a tier of two blocks per register.
#[derive(Clone, Copy, Debug)]
pub struct Pair(Aesni);

impl Pair {
    pub fn get() -> Option<Pair> {
        Aesni::get().map(Pair)
    }
}

/// Applies a one-block operation to both blocks of a pair.
fn each(f: impl Fn(usize) -> __m128i) -> [__m128i; 2] {
    [f(0), f(1)]
}

impl Tier for Pair {
    type Reg = [__m128i; 2];
    type Bytes = [u8; 32];
    type Single = Aesni;
    const BLOCKS: usize = 2;
    const HASH_LAG: usize = 1;
    const HASH_OUTPUT_SHIFTED: bool = false;
    const GCM_NARROW_BLOCKS: usize = <Aesni as Tier>::POWERS;
    const SIV_SHORT_CHUNKS: usize = 3;
    const BATCH_GROUP_BLOCKS: usize = 64;
    const UNROLL_ROUNDS: bool = false;

    fn narrow(self) -> Aesni {
        self.0
    }

    fn token(self) -> TierToken {
        TierToken::Pair(self)
    }

    fn single(self) -> Aesni {
        self.0
    }

    fn registers(data: &[u8]) -> (&[[u8; 32]], &[u8]) {
        data.as_chunks()
    }

    fn registers_mut(data: &mut [u8]) -> (&mut [[u8; 32]], &mut [u8]) {
        data.as_chunks_mut()
    }

    fn load(self, bytes: &[u8; 32]) -> [__m128i; 2] {
        let (blocks, _) = bytes.as_chunks::<16>();
        each(|i| self.0.load(&blocks[i]))
    }

    fn store(self, reg: [__m128i; 2]) -> [u8; 32] {
        let mut bytes = [0u8; 32];
        let (blocks, _) = bytes.as_chunks_mut::<16>();
        for (block, value) in blocks.iter_mut().zip(reg) {
            *block = self.0.store(value);
        }
        bytes
    }

    fn load_blocks(self, blocks: &[__m128i], first: usize) -> [__m128i; 2] {
        each(|i| blocks[first + i])
    }

    fn store_blocks(self, reg: [__m128i; 2], blocks: &mut [__m128i], first: usize) {
        blocks[first..first + 2].copy_from_slice(&reg);
    }

    fn gather(self, block: impl Fn(usize) -> __m128i) -> [__m128i; 2] {
        each(block)
    }

    fn block(self, reg: [__m128i; 2], i: usize) -> __m128i {
        reg[i]
    }

    fn sum_blocks(self, reg: [__m128i; 2]) -> __m128i {
        self.0.xor(reg[0], reg[1])
    }

    fn broadcast(self, block: __m128i) -> [__m128i; 2] {
        [block; 2]
    }

    fn zero(self) -> [__m128i; 2] {
        [self.0.zero(); 2]
    }

    fn xor(self, a: [__m128i; 2], b: [__m128i; 2]) -> [__m128i; 2] {
        each(|i| self.0.xor(a[i], b[i]))
    }

    fn or(self, a: [__m128i; 2], b: [__m128i; 2]) -> [__m128i; 2] {
        each(|i| self.0.or(a[i], b[i]))
    }

    fn and_not(self, a: [__m128i; 2], b: [__m128i; 2]) -> [__m128i; 2] {
        each(|i| self.0.and_not(a[i], b[i]))
    }

    fn add32(self, a: [__m128i; 2], b: [__m128i; 2]) -> [__m128i; 2] {
        each(|i| self.0.add32(a[i], b[i]))
    }

    fn shuffle_bytes(self, a: [__m128i; 2], indices: [__m128i; 2]) -> [__m128i; 2] {
        each(|i| self.0.shuffle_bytes(a[i], indices[i]))
    }

    fn swap_halves(self, a: [__m128i; 2]) -> [__m128i; 2] {
        each(|i| self.0.swap_halves(a[i]))
    }

    fn low_halves(self, low: [__m128i; 2], high: [__m128i; 2]) -> [__m128i; 2] {
        each(|i| self.0.low_halves(low[i], high[i]))
    }

    fn shift_bytes_up<const BYTES: i32>(self, a: [__m128i; 2]) -> [__m128i; 2] {
        each(|i| self.0.shift_bytes_up::<BYTES>(a[i]))
    }

    fn broadcast_word_3(self, a: [__m128i; 2]) -> [__m128i; 2] {
        each(|i| self.0.broadcast_word_3(a[i]))
    }

    #[cfg(feature = "alloc")]
    fn transpose_words(self, rows: [[__m128i; 2]; 4]) -> [[__m128i; 2]; 4] {
        let halves = [0, 1].map(|i| self.0.transpose_words(rows.map(|row| row[i])));
        core::array::from_fn(|j| each(|i| halves[i][j]))
    }

    fn aes_round(self, state: [__m128i; 2], key: [__m128i; 2]) -> [__m128i; 2] {
        each(|i| self.0.aes_round(state[i], key[i]))
    }

    fn aes_last_round(self, state: [__m128i; 2], key: [__m128i; 2]) -> [__m128i; 2] {
        each(|i| self.0.aes_last_round(state[i], key[i]))
    }

    fn aes_inverse_round(self, state: [__m128i; 2], key: [__m128i; 2]) -> [__m128i; 2] {
        each(|i| self.0.aes_inverse_round(state[i], key[i]))
    }

    fn aes_inverse_last_round(self, state: [__m128i; 2], key: [__m128i; 2]) -> [__m128i; 2] {
        each(|i| self.0.aes_inverse_last_round(state[i], key[i]))
    }

    fn aes_inverse_mix_columns(self, key: [__m128i; 2]) -> [__m128i; 2] {
        each(|i| self.0.aes_inverse_mix_columns(key[i]))
    }

    fn pin(self, reg: &mut [__m128i; 2]) {
        for block in reg {
            self.0.pin(block);
        }
    }

    fn mul_low_halves(self, a: [__m128i; 2], b: [__m128i; 2]) -> [__m128i; 2] {
        each(|i| self.0.mul_low_halves(a[i], b[i]))
    }

    fn mul_high_halves(self, a: [__m128i; 2], b: [__m128i; 2]) -> [__m128i; 2] {
        each(|i| self.0.mul_high_halves(a[i], b[i]))
    }

    fn mul_high_by_low(self, a: [__m128i; 2], b: [__m128i; 2]) -> [__m128i; 2] {
        each(|i| self.0.mul_high_by_low(a[i], b[i]))
    }

    fn mul_low_by_high(self, a: [__m128i; 2], b: [__m128i; 2]) -> [__m128i; 2] {
        each(|i| self.0.mul_low_by_high(a[i], b[i]))
    }
}

#[cfg(test)]
mod tests {
    use super::Pair;
    use crate::cpu::{Isa, TierToken};
    use crate::{Aes128, Aes256, AesGcm, AesGcmSiv, Backend, KeySize, SivJob};

    /// Every public AEAD path on the test tier equals the portable backend, at lengths around
    /// the strides of one and two blocks per register (8 and 16 blocks), with and without
    /// associated data, single and batched.
    fn agrees_with_portable<K: KeySize>() {
        let key = K::Key::try_from(&[0x3Cu8; 32][..K::KEY_LEN]).ok().unwrap();
        let lengths: &[usize] = if cfg!(miri) {
            &[0, 17, 130, 300]
        } else {
            &[
                0, 1, 15, 16, 17, 100, 127, 128, 129, 255, 256, 257, 300, 511, 600, 1500,
            ]
        };
        let pair = Isa::Vector(TierToken::Pair(Pair::get().unwrap()));
        let siv = AesGcmSiv::<K>::with_isa(&key, pair);
        let siv_reference = AesGcmSiv::<K>::with_backend(&key, Backend::Portable).unwrap();
        let gcm = AesGcm::<K>::with_isa(&key, pair);
        let gcm_reference = AesGcm::<K>::with_backend(&key, Backend::Portable).unwrap();
        let mut messages = std::vec::Vec::new();
        for &len in lengths {
            let plaintext: std::vec::Vec<u8> = (0..len).map(|i| (i * 7 + len) as u8).collect();
            let nonce = [len as u8; 12];
            for aad in [&b""[..], b"associated data"] {
                let sealed = siv.encrypt(&nonce, aad, &plaintext).unwrap();
                assert_eq!(
                    sealed,
                    siv_reference.encrypt(&nonce, aad, &plaintext).unwrap()
                );
                assert_eq!(siv.decrypt(&nonce, aad, &sealed).unwrap(), plaintext);
                let sealed = gcm.encrypt(&nonce, aad, &plaintext).unwrap();
                assert_eq!(
                    sealed,
                    gcm_reference.encrypt(&nonce, aad, &plaintext).unwrap()
                );
                assert_eq!(gcm.decrypt(&nonce, aad, &sealed).unwrap(), plaintext);
            }
            messages.push((nonce, plaintext));
        }
        let mut data: std::vec::Vec<std::vec::Vec<u8>> =
            messages.iter().map(|(_, m)| m.clone()).collect();
        let mut jobs: std::vec::Vec<SivJob<'_>> = messages
            .iter()
            .zip(&mut data)
            .map(|((nonce, _), data)| SivJob {
                nonce: *nonce,
                aad: b"",
                data,
                tag: [0; 16],
                authentic: false,
            })
            .collect();
        siv.seal_batch(&mut jobs).unwrap();
        for (job, (nonce, plaintext)) in jobs.iter().zip(&messages) {
            let expected = siv_reference.encrypt(nonce, b"", plaintext).unwrap();
            assert_eq!([&job.data[..], &job.tag[..]].concat(), expected);
        }
        siv.open_batch(&mut jobs).unwrap();
        for (job, (_, plaintext)) in jobs.iter().zip(&messages) {
            assert_eq!(&job.data[..], &plaintext[..]);
        }
    }

    #[test]
    fn the_test_tier_agrees_with_portable_aes128() {
        if Pair::get().is_some() {
            agrees_with_portable::<Aes128>();
        }
    }

    #[test]
    fn the_test_tier_agrees_with_portable_aes256() {
        if Pair::get().is_some() {
            agrees_with_portable::<Aes256>();
        }
    }
}
