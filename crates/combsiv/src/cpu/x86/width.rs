//! The two x86 tiers as register widths, so that every kernel is written once.
//!
//! An [`Aesni`] register is a 128-bit XMM register holding one AES block. A [`Vaes`] register
//! is a 256-bit YMM register holding two: VAES and VPCLMULQDQ apply AESENC and PCLMULQDQ to
//! each 128-bit half on its own, and the AVX2 shuffles used here (PSHUFB, PSHUFD, the byte
//! shifts) also act within each half. So a kernel generic over [`Width`] computes the same
//! thing at both widths, block by block; at width 2 one register covers two consecutive blocks,
//! and the register count of a loop stays the same while its blocks double. What Miri checks
//! at width 2 is therefore the very code the AES-NI tier runs at width 1.
//!
//! The token is the width: a method takes `self`, the zero-sized proof that the CPU has the
//! instructions, which is what makes the methods safe to call. They are `#[inline(always)]`
//! so that they dissolve into the `#[target_feature]` function that instantiates a kernel
//! ([`per_width!`](crate::cpu::x86::per_width)); called anywhere else they are still correct,
//! only slow.

#![allow(
    unsafe_code,
    reason = "x86 intrinsics; each unsafe block says why it is sound"
)]

use core::arch::x86_64::*;

use zeroize::Zeroize;

use super::{Aesni, Vaes};

/// Registers per loop iteration at either width: eight states plus a round key and a data
/// register fit the sixteen XMM/YMM registers, and eight independent AESENCs cover the
/// latency x throughput of every AES unit we target (Zen 3: latency 4 x 2 per cycle).
pub(crate) const STRIDE: usize = 8;

/// What the shared kernels need from a register width; see the module comment.
pub(crate) trait Width: Copy {
    /// A register of [`BLOCKS`](Self::BLOCKS) AES blocks.
    type Reg: Copy + Zeroize;
    /// The bytes of one register: `[u8; 16]` or `[u8; 32]`.
    type Bytes: Copy + Zeroize;
    /// Blocks per register.
    const BLOCKS: usize;
    /// Hash powers a stride uses: one per block of a stride.
    const POWERS: usize = STRIDE * Self::BLOCKS;
    /// How many strides behind the counter mode a stitched loop hashes its own output: the
    /// output of stride i exists only after its last AES round, so hashing it at once would
    /// stall the multiplies behind that latency.
    const HASH_LAG: usize;

    /// The 128-bit subset every tier includes (key expansion, reduction, the tag block).
    fn aesni(self) -> Aesni;

    /// The tier this token proves, to call a kernel instantiated by [`per_width!`] (the
    /// batch calls the single-message kernels so).
    #[cfg(feature = "alloc")]
    fn tier(self) -> super::Tier;

    /// Splits bytes into whole registers and the rest.
    fn registers(data: &[u8]) -> (&[Self::Bytes], &[u8]);
    /// Splits bytes into whole registers and the rest.
    fn registers_mut(data: &mut [u8]) -> (&mut [Self::Bytes], &mut [u8]);

    fn load(self, bytes: &Self::Bytes) -> Self::Reg;
    fn store(self, reg: Self::Reg) -> Self::Bytes;
    /// `blocks[first..first + BLOCKS]` as one register (panics past the end).
    fn load_blocks(self, blocks: &[__m128i], first: usize) -> Self::Reg;
    /// Writes one register to `blocks[first..first + BLOCKS]` (panics past the end).
    fn store_blocks(self, reg: Self::Reg, blocks: &mut [__m128i], first: usize);
    /// A register whose block i is `block(i)`.
    fn gather(self, block: impl Fn(usize) -> __m128i) -> Self::Reg;
    /// Block `i` of a register.
    fn block(self, reg: Self::Reg, i: usize) -> __m128i;
    /// The XOR of all blocks of a register.
    fn sum_blocks(self, reg: Self::Reg) -> __m128i;
    /// `block` in every block.
    fn broadcast(self, block: __m128i) -> Self::Reg;

    fn zero(self) -> Self::Reg;
    fn xor(self, a: Self::Reg, b: Self::Reg) -> Self::Reg;
    fn or(self, a: Self::Reg, b: Self::Reg) -> Self::Reg;
    /// `!a & b`.
    fn and_not(self, a: Self::Reg, b: Self::Reg) -> Self::Reg;
    /// Adds 32-bit lanes (counters).
    fn add32(self, a: Self::Reg, b: Self::Reg) -> Self::Reg;
    /// PSHUFB within each block.
    fn shuffle_bytes(self, a: Self::Reg, indices: Self::Reg) -> Self::Reg;
    /// Swaps the 64-bit halves of each block.
    fn swap_halves(self, a: Self::Reg) -> Self::Reg;
    /// Moves the low half of each block to its high half, zeroing the low half.
    fn low_half_up(self, a: Self::Reg) -> Self::Reg;
    /// Moves the high half of each block to its low half, zeroing the high half.
    fn high_half_down(self, a: Self::Reg) -> Self::Reg;
    /// Each block of `low` with its high half replaced by the low half of `high`'s block.
    fn low_halves(self, low: Self::Reg, high: Self::Reg) -> Self::Reg;
    /// Shifts each block left (towards byte 15) by `BYTES` bytes.
    fn shift_bytes_up<const BYTES: i32>(self, a: Self::Reg) -> Self::Reg;
    /// Word 3 of each block in all four of its words.
    fn broadcast_word_3(self, a: Self::Reg) -> Self::Reg;

    fn aesenc(self, state: Self::Reg, key: Self::Reg) -> Self::Reg;
    fn aesenclast(self, state: Self::Reg, key: Self::Reg) -> Self::Reg;
    /// Passes `reg` through an empty `asm!` block: a scheduling barrier that emits nothing.
    /// The compiler must assume the block has side effects (it is not `pure`), so it keeps
    /// all such blocks in program order, and whatever reads `reg` afterwards follows the
    /// block. [`round_boundary`](crate::aes::x86::round_boundary) pins every state after
    /// each AES round. Miri, which runs no assembly, skips it: it changes no value.
    fn pin(self, reg: &mut Self::Reg);
    /// PCLMULQDQ on each block; `SELECT` bit 0 picks the half of `a`, bit 4 that of `b`.
    fn clmul<const SELECT: i32>(self, a: Self::Reg, b: Self::Reg) -> Self::Reg;
}

impl Width for Aesni {
    type Reg = __m128i;
    type Bytes = [u8; 16];
    const BLOCKS: usize = 1;
    const HASH_LAG: usize = 2;

    #[inline(always)]
    fn aesni(self) -> Aesni {
        self
    }

    #[cfg(feature = "alloc")]
    #[inline(always)]
    fn tier(self) -> super::Tier {
        super::Tier::Aesni(self)
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
        super::load128(bytes)
    }

    #[inline(always)]
    fn store(self, reg: __m128i) -> [u8; 16] {
        super::store128(reg)
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
        // SAFETY: the Aesni token proves SSSE3.
        unsafe { _mm_shuffle_epi8(a, indices) }
    }

    #[inline(always)]
    fn swap_halves(self, a: __m128i) -> __m128i {
        // SAFETY: SSE2 is part of the x86-64 baseline.
        unsafe { _mm_shuffle_epi32::<0x4E>(a) }
    }

    #[inline(always)]
    fn low_half_up(self, a: __m128i) -> __m128i {
        // SAFETY: SSE2 is part of the x86-64 baseline.
        unsafe { _mm_slli_si128::<8>(a) }
    }

    #[inline(always)]
    fn high_half_down(self, a: __m128i) -> __m128i {
        // SAFETY: SSE2 is part of the x86-64 baseline.
        unsafe { _mm_srli_si128::<8>(a) }
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

    #[inline(always)]
    fn aesenc(self, state: __m128i, key: __m128i) -> __m128i {
        // SAFETY: the Aesni token proves AES-NI.
        unsafe { _mm_aesenc_si128(state, key) }
    }

    #[inline(always)]
    fn aesenclast(self, state: __m128i, key: __m128i) -> __m128i {
        // SAFETY: the Aesni token proves AES-NI.
        unsafe { _mm_aesenclast_si128(state, key) }
    }

    #[inline(always)]
    fn pin(self, reg: &mut __m128i) {
        empty_asm!(xmm_reg, reg);
    }

    #[inline(always)]
    fn clmul<const SELECT: i32>(self, a: __m128i, b: __m128i) -> __m128i {
        // SAFETY: the Aesni token proves PCLMULQDQ.
        unsafe { _mm_clmulepi64_si128::<SELECT>(a, b) }
    }
}

impl Width for Vaes {
    type Reg = __m256i;
    type Bytes = [u8; 32];
    const BLOCKS: usize = 2;
    const HASH_LAG: usize = 1;

    #[inline(always)]
    fn aesni(self) -> Aesni {
        Vaes::aesni(self)
    }

    #[cfg(feature = "alloc")]
    #[inline(always)]
    fn tier(self) -> super::Tier {
        super::Tier::Vaes(self)
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
        // SAFETY: the Vaes token proves AVX; the reference covers 32 readable bytes and
        // VMOVDQU has no alignment requirement.
        unsafe { _mm256_loadu_si256(bytes.as_ptr().cast()) }
    }

    #[inline(always)]
    fn store(self, reg: __m256i) -> [u8; 32] {
        let mut bytes = [0u8; 32];
        // SAFETY: the Vaes token proves AVX; `bytes` covers 32 writable bytes and VMOVDQU
        // has no alignment requirement.
        unsafe { _mm256_storeu_si256(bytes.as_mut_ptr().cast(), reg) };
        bytes
    }

    #[inline(always)]
    fn load_blocks(self, blocks: &[__m128i], first: usize) -> __m256i {
        let pair = &blocks[first..first + 2];
        // SAFETY: the Vaes token proves AVX; `pair` covers 32 readable bytes.
        unsafe { _mm256_loadu_si256(pair.as_ptr().cast()) }
    }

    #[inline(always)]
    fn store_blocks(self, reg: __m256i, blocks: &mut [__m128i], first: usize) {
        let pair = &mut blocks[first..first + 2];
        // SAFETY: the Vaes token proves AVX; `pair` covers 32 writable bytes.
        unsafe { _mm256_storeu_si256(pair.as_mut_ptr().cast(), reg) }
    }

    #[inline(always)]
    fn gather(self, block: impl Fn(usize) -> __m128i) -> __m256i {
        // SAFETY: the Vaes token proves AVX.
        unsafe { _mm256_set_m128i(block(1), block(0)) }
    }

    #[inline(always)]
    fn block(self, reg: __m256i, i: usize) -> __m128i {
        // SAFETY: the Vaes token proves AVX and AVX2.
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
        // SAFETY: the Vaes token proves AVX and AVX2.
        unsafe {
            _mm_xor_si128(
                _mm256_castsi256_si128(reg),
                _mm256_extracti128_si256::<1>(reg),
            )
        }
    }

    #[inline(always)]
    fn broadcast(self, block: __m128i) -> __m256i {
        // SAFETY: the Vaes token proves AVX2.
        unsafe { _mm256_broadcastsi128_si256(block) }
    }

    #[inline(always)]
    fn zero(self) -> __m256i {
        // SAFETY: the Vaes token proves AVX.
        unsafe { _mm256_setzero_si256() }
    }

    #[inline(always)]
    fn xor(self, a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: the Vaes token proves AVX2.
        unsafe { _mm256_xor_si256(a, b) }
    }

    #[inline(always)]
    fn or(self, a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: the Vaes token proves AVX2.
        unsafe { _mm256_or_si256(a, b) }
    }

    #[inline(always)]
    fn and_not(self, a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: the Vaes token proves AVX2.
        unsafe { _mm256_andnot_si256(a, b) }
    }

    #[inline(always)]
    fn add32(self, a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: the Vaes token proves AVX2.
        unsafe { _mm256_add_epi32(a, b) }
    }

    #[inline(always)]
    fn shuffle_bytes(self, a: __m256i, indices: __m256i) -> __m256i {
        // SAFETY: the Vaes token proves AVX2.
        unsafe { _mm256_shuffle_epi8(a, indices) }
    }

    #[inline(always)]
    fn swap_halves(self, a: __m256i) -> __m256i {
        // SAFETY: the Vaes token proves AVX2.
        unsafe { _mm256_shuffle_epi32::<0x4E>(a) }
    }

    #[inline(always)]
    fn low_half_up(self, a: __m256i) -> __m256i {
        // SAFETY: the Vaes token proves AVX2.
        unsafe { _mm256_bslli_epi128::<8>(a) }
    }

    #[inline(always)]
    fn high_half_down(self, a: __m256i) -> __m256i {
        // SAFETY: the Vaes token proves AVX2.
        unsafe { _mm256_bsrli_epi128::<8>(a) }
    }

    #[inline(always)]
    fn low_halves(self, low: __m256i, high: __m256i) -> __m256i {
        // SAFETY: the Vaes token proves AVX2.
        unsafe { _mm256_unpacklo_epi64(low, high) }
    }

    #[inline(always)]
    fn shift_bytes_up<const BYTES: i32>(self, a: __m256i) -> __m256i {
        // SAFETY: the Vaes token proves AVX2.
        unsafe { _mm256_bslli_epi128::<BYTES>(a) }
    }

    #[inline(always)]
    fn broadcast_word_3(self, a: __m256i) -> __m256i {
        // SAFETY: the Vaes token proves AVX2.
        unsafe { _mm256_shuffle_epi32::<0xff>(a) }
    }

    #[inline(always)]
    fn aesenc(self, state: __m256i, key: __m256i) -> __m256i {
        // SAFETY: the Vaes token proves VAES and AVX.
        unsafe { _mm256_aesenc_epi128(state, key) }
    }

    #[inline(always)]
    fn aesenclast(self, state: __m256i, key: __m256i) -> __m256i {
        // SAFETY: the Vaes token proves VAES and AVX.
        unsafe { _mm256_aesenclast_epi128(state, key) }
    }

    #[inline(always)]
    fn pin(self, reg: &mut __m256i) {
        // SAFETY: the Vaes token proves AVX.
        unsafe { pin_ymm(reg) }
    }

    #[inline(always)]
    fn clmul<const SELECT: i32>(self, a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: the Vaes token proves VPCLMULQDQ and AVX.
        unsafe { _mm256_clmulepi64_epi128::<SELECT>(a, b) }
    }
}

/// Instantiates a kernel written once over [`Width`] for both tiers and dispatches on the
/// [`Tier`](super::Tier): each instance is a `#[target_feature]` function enabling exactly
/// its token's features, so the generic code (all `#[inline(always)]`) compiles into it with
/// those instructions, and it is called with the token in hand.
///
/// `per_width! { fn name<const C: T>(a: A) -> R = kernel; }` defines
/// `fn name<const C: T>(tier: Tier, a: A) -> R`, which runs `kernel::<W, C>(token, a)`.
///
/// The instances are never inlined: a kernel called from another kernel of the same tier
/// (the batch calls the single-message kernel for long messages) then runs exactly the code
/// it runs when called alone, which is the code that was measured.
macro_rules! per_width {
    (
        $(#[$meta:meta])*
        $vis:vis fn $name:ident $(<$(const $param:ident: $param_ty:ty),+>)?
            ($($arg:ident: $arg_ty:ty),* $(,)?) $(-> $ret:ty)? = $kernel:ident;
    ) => {
        $(#[$meta])*
        $vis fn $name $(<$(const $param: $param_ty),+>)? (
            tier: $crate::cpu::x86::Tier,
            $($arg: $arg_ty),*
        ) $(-> $ret)? {
            #[inline(never)]
            #[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
            fn aesni $(<$(const $param: $param_ty),+>)? (
                width: $crate::cpu::x86::Aesni,
                $($arg: $arg_ty),*
            ) $(-> $ret)? {
                $kernel::<$crate::cpu::x86::Aesni $($(, $param)+)?>(width, $($arg),*)
            }
            #[inline(never)]
            #[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1,avx,avx2,vaes,vpclmulqdq")]
            fn vaes $(<$(const $param: $param_ty),+>)? (
                width: $crate::cpu::x86::Vaes,
                $($arg: $arg_ty),*
            ) $(-> $ret)? {
                $kernel::<$crate::cpu::x86::Vaes $($(, $param)+)?>(width, $($arg),*)
            }
            match tier {
                // SAFETY: the token proves the CPU has the features `aesni` enables.
                $crate::cpu::x86::Tier::Aesni(width) => unsafe {
                    aesni $(::<$($param),+>)? (width, $($arg),*)
                },
                // SAFETY: the token proves the CPU has the features `vaes` enables.
                $crate::cpu::x86::Tier::Vaes(width) => unsafe {
                    vaes $(::<$($param),+>)? (width, $($arg),*)
                },
            }
        }
    };
}
pub(crate) use per_width;

/// [`Width::pin`] for a YMM register: `asm!` takes a YMM operand only where AVX is enabled
/// on the function that holds it; inlined into the VAES kernels, which enable it.
#[target_feature(enable = "avx")]
#[inline]
fn pin_ymm(reg: &mut __m256i) {
    empty_asm!(ymm_reg, reg);
}

/// The empty `asm!` block of [`Width::pin`], with `reg` in a register of class `$class`
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
