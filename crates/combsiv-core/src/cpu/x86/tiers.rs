//! The x86 tiers: [`Aesni`] registers are 128-bit XMM registers holding one AES block each;
//! [`Vaes`] registers are 256-bit YMM registers holding two, [`Avx512`] registers 512-bit
//! ZMM registers holding four. VAES and VPCLMULQDQ apply AESENC and PCLMULQDQ to each 128-bit
//! lane on its own, and the AVX2 and AVX-512 shuffles used here (PSHUFB, PSHUFD, the byte
//! shifts) also act within each lane, which is what the [`Tier`] trait asks. One register
//! covers `BLOCKS` consecutive blocks, and the register count of a loop stays the same while
//! its blocks grow with the width.

#![allow(
    unsafe_code,
    reason = "x86 intrinsics; each unsafe block says why it is sound"
)]

use core::arch::x86_64::*;

use super::MAX_BATCH_GROUP_BLOCKS;
use super::{Aesni, Avx512, Vaes, Xmm, Ymm};
#[cfg(feature = "alloc")]
use crate::cpu::TierToken;
use crate::cpu::{Tier, partial};

/// GCM-SIV's short path, both tiers: up to three chunks of eight powers. Each further chunk
/// costs one more multiplication and reduction in the chain; the table path, which longer
/// messages take, waits on 16 powers stored and reloaded. On Zen 3 three chunks sealed 256
/// bytes in 331 cycles against the table path's 404 (VAES, minimum per message); four were
/// not tried, as the short path's counter mode runs one block per register.
const SIV_SHORT_CHUNKS: usize = 3;

const _: () = assert!(<Aesni as Tier>::BATCH_GROUP_BLOCKS <= MAX_BATCH_GROUP_BLOCKS);
const _: () = assert!(<Vaes as Tier>::BATCH_GROUP_BLOCKS <= MAX_BATCH_GROUP_BLOCKS);
const _: () = assert!(<Avx512 as Tier>::BATCH_GROUP_BLOCKS <= MAX_BATCH_GROUP_BLOCKS);

/// [`Tier`]'s four carry-less products through PCLMULQDQ's intrinsic at one width, whose
/// immediate picks the halves (bit 0 that of `a`, bit 4 that of `b`). Expanded in each
/// tier's impl, whose token proves the intrinsic's features.
macro_rules! carryless_products {
    ($reg:ty, $clmul:ident) => {
        #[inline(always)]
        fn mul_low_halves(self, a: $reg, b: $reg) -> $reg {
            // SAFETY: the token of the tier whose impl this is proves (V)PCLMULQDQ.
            unsafe { $clmul::<0x00>(a, b) }
        }

        #[inline(always)]
        fn mul_high_halves(self, a: $reg, b: $reg) -> $reg {
            // SAFETY: as for `mul_low_halves`.
            unsafe { $clmul::<0x11>(a, b) }
        }

        #[inline(always)]
        fn mul_high_by_low(self, a: $reg, b: $reg) -> $reg {
            // SAFETY: as for `mul_low_halves`.
            unsafe { $clmul::<0x01>(a, b) }
        }

        #[inline(always)]
        fn mul_low_by_high(self, a: $reg, b: $reg) -> $reg {
            // SAFETY: as for `mul_low_halves`.
            unsafe { $clmul::<0x10>(a, b) }
        }
    };
}

impl<const MASKED: bool> Tier for Xmm<MASKED> {
    type Reg = __m128i;
    type Bytes = [u8; 16];
    type Single = Self;
    const BLOCKS: usize = 1;
    const HASH_LAG: usize = 2;
    const HASH_OUTPUT_SHIFTED: bool = false;
    const GCM_NARROW_BLOCKS: usize = 0;
    const SIV_SHORT_CHUNKS: usize = SIV_SHORT_CHUNKS;
    /// About 370 bytes of text without AAD: longer messages measured faster pipelined.
    const BATCH_GROUP_BLOCKS: usize = 24;
    const UNROLL_ROUNDS: bool = false;

    #[inline(always)]
    fn narrow(self) -> Aesni {
        Xmm(())
    }

    #[cfg(feature = "alloc")]
    #[inline(always)]
    fn token(self) -> TierToken {
        // The masked instance runs only inside the wider tiers' kernels; the token of its
        // subset, which `self` proves, is the one kernels are instantiated for.
        TierToken::Aesni(self.narrow())
    }

    #[inline(always)]
    fn single(self) -> Self {
        self
    }

    #[inline(always)]
    fn load_last_partial(self, data: &[u8]) -> __m128i {
        match self.avx512() {
            Some(avx512) => super::load_last_partial_masked(avx512, data),
            None => partial::load_last_partial(self.narrow(), data),
        }
    }

    #[inline(always)]
    fn store_last_partial(self, block: __m128i, data: &mut [u8]) {
        match self.avx512() {
            Some(avx512) => super::store_last_partial_masked(avx512, block, data),
            None => partial::store_last_partial(self.narrow(), block, data),
        }
    }

    #[inline(always)]
    fn registers(data: &[u8]) -> (&[[u8; 16]], &[u8]) {
        data.as_chunks()
    }

    #[inline(always)]
    fn registers_mut(data: &mut [u8]) -> (&mut [[u8; 16]], &mut [u8]) {
        data.as_chunks_mut()
    }

    #[inline(always)]
    fn load(self, bytes: &[u8; 16]) -> __m128i {
        super::load_block(bytes)
    }

    #[inline(always)]
    fn store(self, reg: __m128i) -> [u8; 16] {
        super::store_block(reg)
    }

    #[inline(always)]
    fn load_blocks(self, blocks: &[__m128i], first: usize) -> __m128i {
        blocks[first]
    }

    #[inline(always)]
    fn store_blocks(self, reg: __m128i, blocks: &mut [__m128i], first: usize) {
        blocks[first] = reg;
    }

    #[inline(always)]
    fn gather(self, block: impl Fn(usize) -> __m128i) -> __m128i {
        block(0)
    }

    #[inline(always)]
    fn block(self, reg: __m128i, _: usize) -> __m128i {
        reg
    }

    #[inline(always)]
    fn sum_blocks(self, reg: __m128i) -> __m128i {
        reg
    }

    #[inline(always)]
    fn broadcast(self, block: __m128i) -> __m128i {
        block
    }

    #[inline(always)]
    fn zero(self) -> __m128i {
        // SAFETY: SSE2 is part of the x86-64 baseline.
        unsafe { _mm_setzero_si128() }
    }

    #[inline(always)]
    fn xor(self, a: __m128i, b: __m128i) -> __m128i {
        // SAFETY: SSE2 is part of the x86-64 baseline.
        unsafe { _mm_xor_si128(a, b) }
    }

    #[inline(always)]
    fn or(self, a: __m128i, b: __m128i) -> __m128i {
        // SAFETY: SSE2 is part of the x86-64 baseline.
        unsafe { _mm_or_si128(a, b) }
    }

    #[inline(always)]
    fn and_not(self, a: __m128i, b: __m128i) -> __m128i {
        // SAFETY: SSE2 is part of the x86-64 baseline.
        unsafe { _mm_andnot_si128(a, b) }
    }

    #[inline(always)]
    fn add32(self, a: __m128i, b: __m128i) -> __m128i {
        // SAFETY: SSE2 is part of the x86-64 baseline.
        unsafe { _mm_add_epi32(a, b) }
    }

    #[inline(always)]
    fn shuffle_bytes(self, a: __m128i, indices: __m128i) -> __m128i {
        // SAFETY: the Xmm token proves SSSE3.
        unsafe { _mm_shuffle_epi8(a, indices) }
    }

    #[inline(always)]
    fn swap_halves(self, a: __m128i) -> __m128i {
        // SAFETY: SSE2 is part of the x86-64 baseline.
        unsafe { _mm_shuffle_epi32::<0x4E>(a) }
    }

    #[inline(always)]
    fn low_halves(self, low: __m128i, high: __m128i) -> __m128i {
        // SAFETY: SSE2 is part of the x86-64 baseline.
        unsafe { _mm_unpacklo_epi64(low, high) }
    }

    #[inline(always)]
    fn shift_bytes_up<const BYTES: i32>(self, a: __m128i) -> __m128i {
        // SAFETY: SSE2 is part of the x86-64 baseline.
        unsafe { _mm_slli_si128::<BYTES>(a) }
    }

    #[inline(always)]
    fn broadcast_word_3(self, a: __m128i) -> __m128i {
        // SAFETY: SSE2 is part of the x86-64 baseline.
        unsafe { _mm_shuffle_epi32::<0xff>(a) }
    }

    #[cfg(feature = "alloc")]
    #[inline(always)]
    fn transpose_words(self, [a, b, c, d]: [__m128i; 4]) -> [__m128i; 4] {
        // SAFETY: SSE2 is part of the x86-64 baseline. The unpacks interleave the low (high)
        // words of a and b, and of c and d, then those pairs' quadwords, within each block.
        unsafe {
            let (ab_low, ab_high) = (_mm_unpacklo_epi32(a, b), _mm_unpackhi_epi32(a, b));
            let (cd_low, cd_high) = (_mm_unpacklo_epi32(c, d), _mm_unpackhi_epi32(c, d));
            [
                _mm_unpacklo_epi64(ab_low, cd_low),
                _mm_unpackhi_epi64(ab_low, cd_low),
                _mm_unpacklo_epi64(ab_high, cd_high),
                _mm_unpackhi_epi64(ab_high, cd_high),
            ]
        }
    }

    #[inline(always)]
    fn aes_round(self, state: __m128i, key: __m128i) -> __m128i {
        // SAFETY: the Xmm token proves AES-NI.
        unsafe { _mm_aesenc_si128(state, key) }
    }

    #[inline(always)]
    fn aes_last_round(self, state: __m128i, key: __m128i) -> __m128i {
        // SAFETY: the Xmm token proves AES-NI.
        unsafe { _mm_aesenclast_si128(state, key) }
    }

    #[inline(always)]
    fn aes_inverse_round(self, state: __m128i, key: __m128i) -> __m128i {
        // SAFETY: the Xmm token proves AES-NI.
        unsafe { _mm_aesdec_si128(state, key) }
    }

    #[inline(always)]
    fn aes_inverse_last_round(self, state: __m128i, key: __m128i) -> __m128i {
        // SAFETY: the Xmm token proves AES-NI.
        unsafe { _mm_aesdeclast_si128(state, key) }
    }

    #[inline(always)]
    fn aes_inverse_mix_columns(self, key: __m128i) -> __m128i {
        // SAFETY: the Xmm token proves AES-NI.
        unsafe { _mm_aesimc_si128(key) }
    }

    #[inline(always)]
    fn prefetch(self, at: *const u8) {
        prefetch_line(at);
    }

    #[inline(always)]
    fn pin(self, reg: &mut __m128i) {
        empty_asm!(xmm_reg, reg);
    }

    carryless_products!(__m128i, _mm_clmulepi64_si128);
}

impl<const MASKED: bool> Tier for Ymm<MASKED> {
    type Reg = __m256i;
    type Bytes = [u8; 32];
    type Single = Xmm<MASKED>;
    const BLOCKS: usize = 2;
    const HASH_LAG: usize = 1;
    const HASH_OUTPUT_SHIFTED: bool = false;
    const GCM_NARROW_BLOCKS: usize = <Aesni as Tier>::POWERS;
    const SIV_SHORT_CHUNKS: usize = SIV_SHORT_CHUNKS;
    /// About 1000 bytes of text without AAD.
    const BATCH_GROUP_BLOCKS: usize = 64;
    const UNROLL_ROUNDS: bool = false;

    #[inline(always)]
    fn narrow(self) -> Aesni {
        self.aesni()
    }

    #[cfg(feature = "alloc")]
    #[inline(always)]
    fn token(self) -> TierToken {
        // `self` proves the features of `Ymm<MASKED>`, so the token of the same type holds.
        match MASKED {
            false => TierToken::Vaes(Ymm(())),
            true => TierToken::VaesMasked(Ymm(())),
        }
    }

    #[inline(always)]
    fn single(self) -> Xmm<MASKED> {
        self.xmm()
    }

    #[inline(always)]
    fn registers(data: &[u8]) -> (&[[u8; 32]], &[u8]) {
        data.as_chunks()
    }

    #[inline(always)]
    fn registers_mut(data: &mut [u8]) -> (&mut [[u8; 32]], &mut [u8]) {
        data.as_chunks_mut()
    }

    #[inline(always)]
    fn load(self, bytes: &[u8; 32]) -> __m256i {
        // SAFETY: the Ymm token proves AVX; the reference covers 32 readable bytes and
        // VMOVDQU has no alignment requirement.
        unsafe { _mm256_loadu_si256(bytes.as_ptr().cast()) }
    }

    #[inline(always)]
    fn store(self, reg: __m256i) -> [u8; 32] {
        let mut bytes = [0u8; 32];
        // SAFETY: the Ymm token proves AVX; `bytes` covers 32 writable bytes and VMOVDQU
        // has no alignment requirement.
        unsafe { _mm256_storeu_si256(bytes.as_mut_ptr().cast(), reg) };
        bytes
    }

    #[inline(always)]
    fn load_blocks(self, blocks: &[__m128i], first: usize) -> __m256i {
        let pair = &blocks[first..first + 2];
        // SAFETY: the Ymm token proves AVX; `pair` covers 32 readable bytes.
        unsafe { _mm256_loadu_si256(pair.as_ptr().cast()) }
    }

    #[inline(always)]
    fn store_blocks(self, reg: __m256i, blocks: &mut [__m128i], first: usize) {
        let pair = &mut blocks[first..first + 2];
        // SAFETY: the Ymm token proves AVX; `pair` covers 32 writable bytes.
        unsafe { _mm256_storeu_si256(pair.as_mut_ptr().cast(), reg) }
    }

    #[inline(always)]
    fn gather(self, block: impl Fn(usize) -> __m128i) -> __m256i {
        // SAFETY: the Ymm token proves AVX.
        unsafe { _mm256_set_m128i(block(1), block(0)) }
    }

    #[inline(always)]
    fn block(self, reg: __m256i, i: usize) -> __m128i {
        // SAFETY: the Ymm token proves AVX and AVX2.
        unsafe {
            if i == 0 {
                _mm256_castsi256_si128(reg)
            } else {
                _mm256_extracti128_si256::<1>(reg)
            }
        }
    }

    #[inline(always)]
    fn sum_blocks(self, reg: __m256i) -> __m128i {
        // SAFETY: the Ymm token proves AVX and AVX2.
        unsafe {
            _mm_xor_si128(
                _mm256_castsi256_si128(reg),
                _mm256_extracti128_si256::<1>(reg),
            )
        }
    }

    #[inline(always)]
    fn broadcast(self, block: __m128i) -> __m256i {
        // SAFETY: the Ymm token proves AVX2.
        unsafe { _mm256_broadcastsi128_si256(block) }
    }

    #[inline(always)]
    fn zero(self) -> __m256i {
        // SAFETY: the Ymm token proves AVX.
        unsafe { _mm256_setzero_si256() }
    }

    #[inline(always)]
    fn xor(self, a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: the Ymm token proves AVX2.
        unsafe { _mm256_xor_si256(a, b) }
    }

    #[inline(always)]
    fn or(self, a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: the Ymm token proves AVX2.
        unsafe { _mm256_or_si256(a, b) }
    }

    #[inline(always)]
    fn and_not(self, a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: the Ymm token proves AVX2.
        unsafe { _mm256_andnot_si256(a, b) }
    }

    #[inline(always)]
    fn add32(self, a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: the Ymm token proves AVX2.
        unsafe { _mm256_add_epi32(a, b) }
    }

    #[inline(always)]
    fn shuffle_bytes(self, a: __m256i, indices: __m256i) -> __m256i {
        // SAFETY: the Ymm token proves AVX2.
        unsafe { _mm256_shuffle_epi8(a, indices) }
    }

    #[inline(always)]
    fn swap_halves(self, a: __m256i) -> __m256i {
        // SAFETY: the Ymm token proves AVX2.
        unsafe { _mm256_shuffle_epi32::<0x4E>(a) }
    }

    #[inline(always)]
    fn low_halves(self, low: __m256i, high: __m256i) -> __m256i {
        // SAFETY: the Ymm token proves AVX2.
        unsafe { _mm256_unpacklo_epi64(low, high) }
    }

    #[inline(always)]
    fn shift_bytes_up<const BYTES: i32>(self, a: __m256i) -> __m256i {
        // SAFETY: the Ymm token proves AVX2.
        unsafe { _mm256_bslli_epi128::<BYTES>(a) }
    }

    #[inline(always)]
    fn broadcast_word_3(self, a: __m256i) -> __m256i {
        // SAFETY: the Ymm token proves AVX2.
        unsafe { _mm256_shuffle_epi32::<0xff>(a) }
    }

    #[cfg(feature = "alloc")]
    #[inline(always)]
    fn transpose_words(self, [a, b, c, d]: [__m256i; 4]) -> [__m256i; 4] {
        // SAFETY: the Ymm token proves AVX2. The unpacks interleave the low (high) words of
        // a and b, and of c and d, then those pairs' quadwords, within each block.
        unsafe {
            let (ab_low, ab_high) = (_mm256_unpacklo_epi32(a, b), _mm256_unpackhi_epi32(a, b));
            let (cd_low, cd_high) = (_mm256_unpacklo_epi32(c, d), _mm256_unpackhi_epi32(c, d));
            [
                _mm256_unpacklo_epi64(ab_low, cd_low),
                _mm256_unpackhi_epi64(ab_low, cd_low),
                _mm256_unpacklo_epi64(ab_high, cd_high),
                _mm256_unpackhi_epi64(ab_high, cd_high),
            ]
        }
    }

    #[inline(always)]
    fn aes_round(self, state: __m256i, key: __m256i) -> __m256i {
        // SAFETY: the Ymm token proves VAES and AVX.
        unsafe { _mm256_aesenc_epi128(state, key) }
    }

    #[inline(always)]
    fn aes_last_round(self, state: __m256i, key: __m256i) -> __m256i {
        // SAFETY: the Ymm token proves VAES and AVX.
        unsafe { _mm256_aesenclast_epi128(state, key) }
    }

    #[inline(always)]
    fn aes_inverse_round(self, state: __m256i, key: __m256i) -> __m256i {
        // SAFETY: the Ymm token proves VAES and AVX.
        unsafe { _mm256_aesdec_epi128(state, key) }
    }

    #[inline(always)]
    fn aes_inverse_last_round(self, state: __m256i, key: __m256i) -> __m256i {
        // SAFETY: the Ymm token proves VAES and AVX.
        unsafe { _mm256_aesdeclast_epi128(state, key) }
    }

    #[inline(always)]
    fn aes_inverse_mix_columns(self, key: __m256i) -> __m256i {
        // AESIMC has no 256-bit form: each half on its own.
        let narrow = self.aesni();
        self.gather(|i| narrow.aes_inverse_mix_columns(self.block(key, i)))
    }

    #[inline(always)]
    fn prefetch(self, at: *const u8) {
        prefetch_line(at);
    }

    #[inline(always)]
    fn pin(self, reg: &mut __m256i) {
        // SAFETY: the Ymm token proves AVX.
        unsafe { pin_ymm(reg) }
    }

    carryless_products!(__m256i, _mm256_clmulepi64_epi128);
}

impl Tier for Avx512 {
    type Reg = __m512i;
    type Bytes = [u8; 64];
    type Single = Xmm<true>;
    const BLOCKS: usize = 4;
    const HASH_LAG: usize = 1;
    const HASH_OUTPUT_SHIFTED: bool = false;
    const GCM_NARROW_BLOCKS: usize = <Aesni as Tier>::POWERS;
    const SIV_SHORT_CHUNKS: usize = SIV_SHORT_CHUNKS;
    /// VAES's limit, the most the groups' arrays allow: groups of 16 messages of 576 bytes
    /// sealed 1.79x one message at a time on Zen 5 (VAES's groups of 8: 1.50x), and 1500-byte
    /// messages, past the limit, 1.33x pipelined.
    const BATCH_GROUP_BLOCKS: usize = MAX_BATCH_GROUP_BLOCKS;
    const UNROLL_ROUNDS: bool = false;

    #[inline(always)]
    fn narrow(self) -> Aesni {
        Avx512::aesni(self)
    }

    #[cfg(feature = "alloc")]
    #[inline(always)]
    fn token(self) -> TierToken {
        TierToken::Avx512(self)
    }

    #[inline(always)]
    fn single(self) -> Xmm<true> {
        self.xmm()
    }

    #[inline(always)]
    fn registers(data: &[u8]) -> (&[[u8; 64]], &[u8]) {
        data.as_chunks()
    }

    #[inline(always)]
    fn registers_mut(data: &mut [u8]) -> (&mut [[u8; 64]], &mut [u8]) {
        data.as_chunks_mut()
    }

    #[inline(always)]
    fn load(self, bytes: &[u8; 64]) -> __m512i {
        // SAFETY: the Avx512 token proves AVX512F; the reference covers 64 readable bytes
        // and VMOVDQU64 has no alignment requirement.
        unsafe { _mm512_loadu_si512(bytes.as_ptr().cast()) }
    }

    #[inline(always)]
    fn store(self, reg: __m512i) -> [u8; 64] {
        let mut bytes = [0u8; 64];
        // SAFETY: the Avx512 token proves AVX512F; `bytes` covers 64 writable bytes and
        // VMOVDQU64 has no alignment requirement.
        unsafe { _mm512_storeu_si512(bytes.as_mut_ptr().cast(), reg) };
        bytes
    }

    #[inline(always)]
    fn load_blocks(self, blocks: &[__m128i], first: usize) -> __m512i {
        let four = &blocks[first..first + 4];
        // SAFETY: the Avx512 token proves AVX512F; `four` covers 64 readable bytes.
        unsafe { _mm512_loadu_si512(four.as_ptr().cast()) }
    }

    #[inline(always)]
    fn store_blocks(self, reg: __m512i, blocks: &mut [__m128i], first: usize) {
        let four = &mut blocks[first..first + 4];
        // SAFETY: the Avx512 token proves AVX512F; `four` covers 64 writable bytes.
        unsafe { _mm512_storeu_si512(four.as_mut_ptr().cast(), reg) }
    }

    #[inline(always)]
    fn gather(self, block: impl Fn(usize) -> __m128i) -> __m512i {
        // SAFETY: the Avx512 token proves AVX and AVX512F.
        unsafe {
            let low = _mm256_set_m128i(block(1), block(0));
            let high = _mm256_set_m128i(block(3), block(2));
            _mm512_inserti64x4::<1>(_mm512_castsi256_si512(low), high)
        }
    }

    #[inline(always)]
    fn block(self, reg: __m512i, i: usize) -> __m128i {
        // SAFETY: the Avx512 token proves AVX512F.
        unsafe {
            match i {
                0 => _mm512_castsi512_si128(reg),
                1 => _mm512_extracti32x4_epi32::<1>(reg),
                2 => _mm512_extracti32x4_epi32::<2>(reg),
                _ => _mm512_extracti32x4_epi32::<3>(reg),
            }
        }
    }

    #[inline(always)]
    fn sum_blocks(self, reg: __m512i) -> __m128i {
        // SAFETY: the Avx512 token proves AVX, AVX2 and AVX512F.
        unsafe {
            let halves = _mm256_xor_si256(
                _mm512_castsi512_si256(reg),
                _mm512_extracti64x4_epi64::<1>(reg),
            );
            _mm_xor_si128(
                _mm256_castsi256_si128(halves),
                _mm256_extracti128_si256::<1>(halves),
            )
        }
    }

    #[inline(always)]
    fn broadcast(self, block: __m128i) -> __m512i {
        // SAFETY: the Avx512 token proves AVX512F.
        unsafe { _mm512_broadcast_i32x4(block) }
    }

    #[inline(always)]
    fn zero(self) -> __m512i {
        // SAFETY: the Avx512 token proves AVX512F.
        unsafe { _mm512_setzero_si512() }
    }

    #[inline(always)]
    fn xor(self, a: __m512i, b: __m512i) -> __m512i {
        // SAFETY: the Avx512 token proves AVX512F.
        unsafe { _mm512_xor_si512(a, b) }
    }

    #[inline(always)]
    fn xor3(self, a: __m512i, b: __m512i, c: __m512i) -> __m512i {
        // 0x96 is the truth table of a ^ b ^ c. The 32-bit form: Miri implements it, not
        // the 64-bit one.
        // SAFETY: the Avx512 token proves AVX512F.
        unsafe { _mm512_ternarylogic_epi32::<0x96>(a, b, c) }
    }

    #[inline(always)]
    fn or(self, a: __m512i, b: __m512i) -> __m512i {
        // SAFETY: the Avx512 token proves AVX512F.
        unsafe { _mm512_or_si512(a, b) }
    }

    #[inline(always)]
    fn and_not(self, a: __m512i, b: __m512i) -> __m512i {
        // SAFETY: the Avx512 token proves AVX512F.
        unsafe { _mm512_andnot_si512(a, b) }
    }

    #[inline(always)]
    fn add32(self, a: __m512i, b: __m512i) -> __m512i {
        // SAFETY: the Avx512 token proves AVX512F.
        unsafe { _mm512_add_epi32(a, b) }
    }

    #[inline(always)]
    fn shuffle_bytes(self, a: __m512i, indices: __m512i) -> __m512i {
        // SAFETY: the Avx512 token proves AVX512BW.
        unsafe { _mm512_shuffle_epi8(a, indices) }
    }

    #[inline(always)]
    fn swap_halves(self, a: __m512i) -> __m512i {
        // SAFETY: the Avx512 token proves AVX512F.
        unsafe { _mm512_shuffle_epi32::<0x4E>(a) }
    }

    #[inline(always)]
    fn low_halves(self, low: __m512i, high: __m512i) -> __m512i {
        // SAFETY: the Avx512 token proves AVX512F.
        unsafe { _mm512_unpacklo_epi64(low, high) }
    }

    #[inline(always)]
    fn shift_bytes_up<const BYTES: i32>(self, a: __m512i) -> __m512i {
        // SAFETY: the Avx512 token proves AVX512BW.
        unsafe { _mm512_bslli_epi128::<BYTES>(a) }
    }

    #[inline(always)]
    fn broadcast_word_3(self, a: __m512i) -> __m512i {
        // SAFETY: the Avx512 token proves AVX512F.
        unsafe { _mm512_shuffle_epi32::<0xff>(a) }
    }

    #[cfg(feature = "alloc")]
    #[inline(always)]
    fn transpose_words(self, [a, b, c, d]: [__m512i; 4]) -> [__m512i; 4] {
        // SAFETY: the Avx512 token proves AVX512F. The unpacks interleave the low (high) words of
        // a and b, and of c and d, then those pairs' quadwords, within each block.
        unsafe {
            let (ab_low, ab_high) = (_mm512_unpacklo_epi32(a, b), _mm512_unpackhi_epi32(a, b));
            let (cd_low, cd_high) = (_mm512_unpacklo_epi32(c, d), _mm512_unpackhi_epi32(c, d));
            [
                _mm512_unpacklo_epi64(ab_low, cd_low),
                _mm512_unpackhi_epi64(ab_low, cd_low),
                _mm512_unpacklo_epi64(ab_high, cd_high),
                _mm512_unpackhi_epi64(ab_high, cd_high),
            ]
        }
    }

    #[inline(always)]
    fn aes_round(self, state: __m512i, key: __m512i) -> __m512i {
        // SAFETY: the Avx512 token proves VAES and AVX512F.
        unsafe { _mm512_aesenc_epi128(state, key) }
    }

    #[inline(always)]
    fn aes_last_round(self, state: __m512i, key: __m512i) -> __m512i {
        // SAFETY: the Avx512 token proves VAES and AVX512F.
        unsafe { _mm512_aesenclast_epi128(state, key) }
    }

    #[inline(always)]
    fn aes_inverse_round(self, state: __m512i, key: __m512i) -> __m512i {
        // SAFETY: the Avx512 token proves VAES and AVX512F.
        unsafe { _mm512_aesdec_epi128(state, key) }
    }

    #[inline(always)]
    fn aes_inverse_last_round(self, state: __m512i, key: __m512i) -> __m512i {
        // SAFETY: the Avx512 token proves VAES and AVX512F.
        unsafe { _mm512_aesdeclast_epi128(state, key) }
    }

    #[inline(always)]
    fn aes_inverse_mix_columns(self, key: __m512i) -> __m512i {
        // AESIMC has no 512-bit form: each block on its own.
        let narrow = Avx512::aesni(self);
        self.gather(|i| narrow.aes_inverse_mix_columns(self.block(key, i)))
    }

    #[inline(always)]
    fn prefetch(self, at: *const u8) {
        prefetch_line(at);
    }

    #[inline(always)]
    fn pin(self, reg: &mut __m512i) {
        // SAFETY: the Avx512 token proves AVX512F.
        unsafe { pin_zmm(reg) }
    }

    carryless_products!(__m512i, _mm512_clmulepi64_epi128);
}

/// [`Tier::pin`] for a YMM register: `asm!` takes a YMM operand only where AVX is enabled
/// on the function that holds it; inlined into the VAES kernels, which enable it.
#[target_feature(enable = "avx")]
#[inline]
fn pin_ymm(reg: &mut __m256i) {
    empty_asm!(ymm_reg, reg);
}

/// [`Tier::prefetch`] on x86: PREFETCHT0 (SSE, in every x86-64 CPU). Nothing under Miri.
#[inline(always)]
fn prefetch_line(at: *const u8) {
    #[cfg(miri)]
    let _ = at;
    // SAFETY: a prefetch is a hint: it reads nothing architecturally and cannot fault, so
    // any address is allowed; SSE is part of x86-64.
    #[cfg(not(miri))]
    unsafe {
        _mm_prefetch::<_MM_HINT_T0>(at.cast::<i8>());
    }
}

/// [`Tier::pin`] for a ZMM register: `asm!` takes a ZMM operand only where AVX512F is
/// enabled on the function that holds it; inlined into the AVX-512 kernels, which enable it.
#[target_feature(enable = "avx512f")]
#[inline]
fn pin_zmm(reg: &mut __m512i) {
    empty_asm!(zmm_reg, reg);
}

/// The empty `asm!` block of [`Tier::pin`], with `reg` in a register of class `$class`
/// (nothing under Miri, which runs no assembly).
macro_rules! empty_asm {
    ($class:ident, $reg:ident) => {
        #[cfg(miri)]
        let _ = $reg;
        // SAFETY: the block is empty: it reads and writes only the register it is given.
        #[cfg(not(miri))]
        unsafe {
            core::arch::asm!(
                "/* {0} */",
                inout($class) * $reg,
                options(nomem, nostack, preserves_flags)
            );
        }
    };
}
use empty_asm;
