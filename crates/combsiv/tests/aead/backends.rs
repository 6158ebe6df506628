//! Backend detection, selection, and the type-level promises of the public types.

use super::support::available_backends;
use combsiv::{Aes128Gcm, Aes128GcmSiv, Aes256Gcm, Aes256GcmSiv, Backend, Error};

/// The best backend this CPU has, found without the library's detector: on x86-64 the tiers
/// below; on AArch64 the crypto extensions as the OS reports them; elsewhere only the
/// portable backend exists.
fn best_backend_this_cpu_has() -> Backend {
    #[cfg(target_arch = "x86_64")]
    if cpu_has_vaes_tier() {
        return if cpu_has_avx512_tier() {
            Backend::Avx512
        } else {
            Backend::Vaes
        };
    } else if cpu_has_aesni_tier() {
        return Backend::Aesni;
    }
    #[cfg(target_arch = "aarch64")]
    if std::arch::is_aarch64_feature_detected!("aes") {
        return Backend::Armv8;
    }
    Backend::Portable
}

/// VAES and VPCLMULQDQ read straight from CPUID leaf 7 (ECX bits 9 and 10), so that this
/// test does not inherit any assumption (such as "VAES needs AVX-512 state") from another
/// detector; `avx2` from std covers AVX2 plus the OS having enabled YMM state.
#[cfg(target_arch = "x86_64")]
fn cpu_has_vaes_tier() -> bool {
    let leaf7 = std::arch::x86_64::__cpuid_count(7, 0);
    cpu_has_aesni_tier()
        && std::arch::is_x86_feature_detected!("avx2")
        && leaf7.ecx >> 9 & 1 == 1
        && leaf7.ecx >> 10 & 1 == 1
}

/// std's AVX-512 detection includes the OS having enabled the opmask and ZMM state.
#[cfg(target_arch = "x86_64")]
fn cpu_has_avx512_tier() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vl")
}

/// The backend new keys should get: the best one, except the 256-bit tier on Intel's Ice Lake
/// and Tiger Lake cores (family 6, the models below), which slow down while 512-bit registers
/// are busy.
fn backend_new_keys_get() -> Backend {
    let best = best_backend_this_cpu_has();
    #[cfg(target_arch = "x86_64")]
    if best == Backend::Avx512 {
        let signature = std::arch::x86_64::__cpuid(1).eax;
        let family = signature >> 8 & 0xF;
        let model = (signature >> 12 & 0xF0) | (signature >> 4 & 0xF);
        let slows_down = [0x6A, 0x6C, 0x7D, 0x7E, 0x9D, 0x8C, 0x8D].contains(&model);
        if family == 6 && slows_down {
            return Backend::Vaes;
        }
    }
    best
}

#[cfg(target_arch = "x86_64")]
fn cpu_has_aesni_tier() -> bool {
    std::arch::is_x86_feature_detected!("aes")
        && std::arch::is_x86_feature_detected!("pclmulqdq")
        && std::arch::is_x86_feature_detected!("ssse3")
        && std::arch::is_x86_feature_detected!("sse4.1")
}

/// On a CPU with VAES and VPCLMULQDQ (Zen 3, Ice Lake, Alder Lake...), `Vaes` must be found
/// with or without AVX-512, and `Avx512` where AVX-512 is there too; likewise AES-NI must be
/// found where it exists. New keys get the best, except where 512-bit registers slow the core.
#[test]
#[cfg_attr(miri, ignore = "CPUID is inline assembly, which Miri cannot run")]
fn detection_finds_the_best_backend_this_cpu_has() {
    let expected = best_backend_this_cpu_has();
    let available = Backend::available();
    assert_eq!(
        available.last(),
        Some(&expected),
        "available: {available:?}"
    );
    assert_eq!(available.first(), Some(&Backend::Portable));
    match std::env::var("COMBSIV_BACKEND")
        .ok()
        .as_deref()
        .and_then(Backend::from_name)
    {
        Some(pinned) if pinned.is_available() => assert_eq!(Backend::detected(), pinned),
        _ => assert_eq!(Backend::detected(), backend_new_keys_get()),
    }
    eprintln!("backends available here: {available:?}");
}

/// Miri has no CPUID; the backends it sees are those the build enables statically. Its run
/// exists to execute every backend, so one that is missing fails it instead of being
/// skipped (README.md gives the RUSTFLAGS).
#[test]
#[cfg(miri)]
fn miri_runs_every_backend() {
    // Every backend of the target architecture: x86-64's tiers, or AArch64's.
    let on_this_arch = |backend: Backend| match backend {
        Backend::Portable => true,
        Backend::Armv8 => cfg!(target_arch = "aarch64"),
        _ => cfg!(target_arch = "x86_64"),
    };
    let expected: Vec<Backend> = Backend::ALL
        .into_iter()
        .filter(|&b| on_this_arch(b))
        .collect();
    assert_eq!(
        available_backends(),
        expected,
        "build with -C target-feature=+aes,+pclmulqdq,+ssse3,+sse4.1,+avx,+avx2,+vaes,+vpclmulqdq,\
         +avx512f,+avx512bw,+avx512vl \
         (x86-64) or +aes,+sha3 (aarch64)"
    );
}

#[test]
fn unavailable_backends_are_refused_not_emulated() {
    for backend in Backend::ALL {
        let result = Aes128GcmSiv::with_backend(&[0; 16], backend);
        if backend.is_available() {
            assert_eq!(result.unwrap().backend(), backend);
        } else {
            assert_eq!(result.err(), Some(Error::BackendUnavailable));
            assert_eq!(
                Aes256Gcm::with_backend(&[0; 32], backend).err(),
                Some(Error::BackendUnavailable)
            );
        }
    }
}

#[test]
fn names_round_trip() {
    for backend in Backend::ALL {
        assert_eq!(Backend::from_name(backend.name()), Some(backend));
        assert_eq!(backend.to_string(), backend.name());
    }
    assert_eq!(Backend::from_name(" AESNI "), Some(Backend::Aesni));
    assert_eq!(Backend::from_name("AVX512"), Some(Backend::Avx512));
    assert_eq!(Backend::from_name("avx-512"), None);
}

#[test]
fn ciphers_are_clone_send_sync_and_debug_shows_no_key() {
    fn assert_traits<T: Clone + Send + Sync + std::fmt::Debug>() {}
    assert_traits::<Aes128GcmSiv>();
    assert_traits::<Aes256GcmSiv>();
    assert_traits::<Aes128Gcm>();
    assert_traits::<Aes256Gcm>();
    let key = [0xAB; 32];
    let printed = [
        format!("{:?}", Aes256GcmSiv::new(&key)),
        format!("{:?}", Aes256Gcm::new(&key)),
        format!("{:#?}", Aes128GcmSiv::new(&[0xAB; 16])),
    ];
    for text in printed {
        assert!(
            !text.contains("171") && !text.to_lowercase().contains("ab,"),
            "{text}"
        );
        assert!(text.contains("backend"), "{text}");
    }
}

#[test]
fn clones_encrypt_identically() {
    for backend in available_backends() {
        let cipher = Aes128GcmSiv::with_backend(&[3; 16], backend).unwrap();
        let copy = cipher.clone();
        drop(cipher);
        let fresh = Aes128GcmSiv::with_backend(&[3; 16], backend).unwrap();
        assert_eq!(
            copy.encrypt(&[1; 12], b"a", b"b").unwrap(),
            fresh.encrypt(&[1; 12], b"a", b"b").unwrap()
        );
    }
}

#[test]
fn empty_aad_and_empty_plaintext_are_valid() {
    for backend in available_backends() {
        let cipher = Aes256GcmSiv::with_backend(&[9; 32], backend).unwrap();
        let sealed = cipher.encrypt(&[0; 12], b"", b"").unwrap();
        assert_eq!(sealed.len(), 16);
        assert_eq!(cipher.decrypt(&[0; 12], b"", &sealed).unwrap(), b"");
        let mut empty = [];
        let tag = cipher
            .encrypt_in_place_detached(&[0; 12], b"", &mut empty)
            .unwrap();
        assert_eq!(tag[..], sealed[..]);
    }
}
