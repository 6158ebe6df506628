//! Constant-time validation under valgrind's memcheck, in the manner of BoringSSL's
//! `CONSTTIME_SECRET` / `CONSTTIME_DECLASSIFY` (and Adam Langley's ctgrind).
//!
//! Memcheck reports every conditional branch and every memory address that depends on
//! *undefined* bytes. This program marks the secrets as undefined (keys before their
//! schedules are derived, nonces, plaintexts, received tags and padding) and runs every
//! operation on them: seal and open of AES-GCM-SIV and AES-GCM (96-bit and other IV lengths,
//! authentic and forged), CBC, CFB, OFB, CTR, CMAC and its verification, CCM, PKCS#7 unpadding
//! and the comb engine's batches, on the portable and AES-NI backends, with both key sizes, at
//! lengths around the kernels' block and stride boundaries. The library makes exactly two
//! kinds of secret-derived values public (its `verdict` module, which under
//! `--cfg combsiv_valgrind` calls this program's `combsiv_ct_public`): the verdict of a tag or
//! padding check and the length that unpadding returns. Any other secret-dependent branch or
//! address is a report, and `valgrind --error-exitcode=1` fails the run. (CTR's counter block
//! and CCM's nonce stay public: `ctr_apply` splits its input where the public counter wraps.)
//!
//! `--canary` instead branches on one secret byte on purpose: that run must fail, which shows
//! that the marking reaches memcheck (a harness whose marks were no-ops would pass vacuously).
//!
//! Run (`.ci/ct` does this): build with
//! `RUSTFLAGS='--cfg combsiv_valgrind --cfg aes_backend="soft"'` (the second makes the
//! portable backend use RustCrypto's bitsliced AES rather than AES-NI), then
//! `valgrind --error-exitcode=1 target/.../combsiv-ct`.

#![allow(
    unsafe_code,
    reason = "foreign functions of the memcheck client-request shim"
)]
#![allow(
    clippy::expect_used,
    clippy::panic,
    reason = "a test program: a wrong result must stop it loudly"
)]

use std::process::ExitCode;

use combsiv::comb::{CbcJob, CcmJob, CfbJob, CmacJob, Comb, OfbJob, SivJob};
use combsiv::modes::{self, Ccm};
use combsiv::{Aes, Aes128Gcm, Aes128GcmSiv, Aes256Gcm, Aes256GcmSiv, Backend, Error};

/// Valgrind's memcheck client requests, through the C shim (`src/memcheck.c`).
mod memcheck {
    unsafe extern "C" {
        fn combsiv_ct_available() -> i32;
        fn combsiv_ct_on_valgrind() -> i32;
        fn combsiv_ct_secret(addr: *mut u8, len: usize);
        fn combsiv_ct_public(addr: *mut u8, len: usize);
        fn combsiv_ct_errors() -> u64;
    }

    /// Whether the shim was built with valgrind's headers.
    pub fn available() -> bool {
        // SAFETY: a constant function of the shim; no arguments.
        unsafe { combsiv_ct_available() != 0 }
    }

    /// Whether this process runs under valgrind.
    pub fn on_valgrind() -> bool {
        // SAFETY: a client request with no arguments.
        unsafe { combsiv_ct_on_valgrind() != 0 }
    }

    /// Marks `bytes` undefined: memcheck reports anything that branches or indexes on them.
    /// Taken mutably, so that the compiler reloads them afterwards instead of reusing
    /// register copies that memcheck still considers defined.
    pub fn secret(bytes: &mut [u8]) {
        // SAFETY: the request only changes valgrind's shadow state of this live range.
        unsafe { combsiv_ct_secret(bytes.as_mut_ptr(), bytes.len()) }
    }

    /// Marks `bytes` defined again (an output the caller may now inspect); mutably, as above.
    pub fn public(bytes: &mut [u8]) {
        // SAFETY: the request only changes valgrind's shadow state of this live range.
        unsafe { combsiv_ct_public(bytes.as_mut_ptr(), bytes.len()) }
    }

    /// Errors memcheck has reported so far.
    pub fn errors() -> u64 {
        // SAFETY: a client request with no arguments.
        unsafe { combsiv_ct_errors() }
    }
}

/// Lengths around the kernels' boundaries: partial blocks, the 8-block AES-NI stride, the
/// 16-block VAES stride and the GCM-SIV short path's chunks (up to 8, 16 and 24 hashed
/// blocks).
const LENGTHS: [usize; 18] = [
    0, 1, 15, 16, 17, 63, 64, 100, 127, 128, 129, 240, 241, 255, 257, 368, 369, 1000,
];

/// A deterministic byte source (xorshift64), so that a report reproduces.
struct Bytes(u64);

impl Bytes {
    fn fill(&mut self, out: &mut [u8]) {
        for byte in out {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            *byte = self.0 as u8;
        }
    }

    fn array<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0; N];
        self.fill(&mut out);
        out
    }

    fn vec(&mut self, len: usize) -> Vec<u8> {
        let mut out = vec![0; len];
        self.fill(&mut out);
        out
    }
}

/// A copy of `value` marked secret.
fn secret<T: AsMut<[u8]> + Clone>(value: &T) -> T {
    let mut copy = value.clone();
    memcheck::secret(copy.as_mut());
    copy
}

/// Counts operations, and checks outputs only after declassifying them (the harness's own
/// comparisons must not be reports).
struct Run {
    operations: usize,
}

impl Run {
    fn check(&mut self, what: &str, output: &[u8], expected: &[u8]) {
        let mut output = output.to_vec();
        memcheck::public(&mut output);
        assert_eq!(output, expected, "{what}");
        self.operations += 1;
    }

    fn verdict(&mut self, what: &str, result: Result<(), Error>, authentic: bool) {
        assert_eq!(result.is_ok(), authentic, "{what}");
        self.operations += 1;
    }
}

/// Both AEADs through their in-place, detached entry points and `Vec` entry points.
macro_rules! aeads {
    ($run:expr, $bytes:expr, $backend:expr, $siv:ty, $gcm:ty, $key_len:literal) => {{
        let (run, bytes, backend): (&mut Run, &mut Bytes, Backend) = ($run, $bytes, $backend);
        let key: [u8; $key_len] = bytes.array();
        let siv = <$siv>::with_backend(&secret(&key), backend).expect("backend available");
        let gcm = <$gcm>::with_backend(&secret(&key), backend).expect("backend available");
        let reference_siv = <$siv>::with_backend(&key, Backend::Portable).expect("portable");
        let reference_gcm = <$gcm>::with_backend(&key, Backend::Portable).expect("portable");
        for len in LENGTHS {
            let what = format!("{backend} {} bytes of key, {len} bytes", $key_len);
            let (nonce, aad, plaintext) =
                (bytes.array::<12>(), bytes.vec(len % 40), bytes.vec(len));

            // AES-GCM-SIV: seal, open, open forged.
            let mut expected = plaintext.clone();
            let expected_tag = reference_siv
                .encrypt_in_place_detached(&nonce, &aad, &mut expected)
                .expect("seal");
            let mut buf = secret(&plaintext);
            let tag = siv
                .encrypt_in_place_detached(&secret(&nonce), &aad, &mut buf)
                .expect("seal");
            run.check(&what, &tag, &expected_tag);
            run.check(&what, &buf, &expected);
            let result = siv.decrypt_in_place_detached(&nonce, &aad, &mut buf, &secret(&tag));
            run.verdict(&what, result, true);
            run.check(&what, &buf, &plaintext);
            let mut forged = tag;
            forged[len % 16] ^= 1;
            let mut buf = expected.clone();
            let result = siv.decrypt_in_place_detached(&nonce, &aad, &mut buf, &secret(&forged));
            run.verdict(&what, result, false);
            let mut sealed = siv
                .encrypt(&secret(&nonce), &aad, &secret(&plaintext))
                .expect("seal");
            memcheck::public(&mut sealed);
            let opened = siv.decrypt(&nonce, &aad, &secret(&sealed)).expect("open");
            run.check(&what, &opened, &plaintext);

            // AES-GCM with a 96-bit nonce, then with 8- and 60-byte IVs (GHASHed into J0).
            let mut expected = plaintext.clone();
            let expected_tag = reference_gcm
                .encrypt_in_place_detached(&nonce, &aad, &mut expected)
                .expect("seal");
            let mut buf = secret(&plaintext);
            let tag = gcm
                .encrypt_in_place_detached(&secret(&nonce), &aad, &mut buf)
                .expect("seal");
            run.check(&what, &tag, &expected_tag);
            run.check(&what, &buf, &expected);
            let result = gcm.decrypt_in_place_detached(&nonce, &aad, &mut buf, &secret(&tag));
            run.verdict(&what, result, true);
            run.check(&what, &buf, &plaintext);
            let mut forged = tag;
            forged[len % 16] ^= 0x80;
            let mut buf = expected.clone();
            let result = gcm.decrypt_in_place_detached(&nonce, &aad, &mut buf, &secret(&forged));
            run.verdict(&what, result, false);
            for iv_len in [8, 60] {
                let iv = bytes.vec(iv_len);
                let expected = reference_gcm
                    .encrypt_with_iv(&iv, &aad, &plaintext)
                    .expect("seal");
                let sealed = gcm
                    .encrypt_with_iv(&secret(&iv), &aad, &secret(&plaintext))
                    .expect("seal");
                run.check(&what, &sealed, &expected);
                let opened = gcm
                    .decrypt_with_iv(&iv, &aad, &secret(&sealed))
                    .expect("open");
                run.check(&what, &opened, &plaintext);
            }
        }

        // Batched AES-GCM-SIV, one job forged.
        let originals: Vec<Vec<u8>> = LENGTHS.iter().map(|&len| bytes.vec(len)).collect();
        let mut messages: Vec<Vec<u8>> = originals.iter().map(secret).collect();
        let nonces: Vec<[u8; 12]> = LENGTHS.iter().map(|_| bytes.array()).collect();
        let mut jobs: Vec<SivJob<'_>> = messages
            .iter_mut()
            .zip(&nonces)
            .map(|(data, nonce)| SivJob {
                nonce: secret(nonce),
                aad: b"batch",
                data,
                tag: [0; 16],
                authentic: false,
            })
            .collect();
        siv.seal_batch(&mut jobs).expect("seal batch");
        for job in &mut jobs {
            memcheck::public(&mut job.tag);
            memcheck::secret(&mut job.tag);
        }
        jobs[3].tag[0] ^= 1;
        let result = siv.open_batch(&mut jobs);
        run.verdict(&format!("{backend} open_batch"), result, false);
        for (i, (job, original)) in jobs.iter().zip(&originals).enumerate() {
            assert_eq!(job.authentic, i != 3, "{backend} open_batch job {i}");
            if job.authentic {
                run.check(&format!("{backend} open_batch job {i}"), job.data, original);
            }
        }
    }};
}

/// The single-message modes and the comb engine.
fn modes_and_comb(run: &mut Run, bytes: &mut Bytes, backend: Backend, key_len: usize) {
    let key_bytes = bytes.vec(key_len);
    let key = Aes::with_backend(&secret(&key_bytes), backend).expect("backend available");
    let reference = Aes::with_backend(&key_bytes, Backend::Portable).expect("portable");
    let ccm = Ccm::with_backend(&secret(&key_bytes), 13, 16, backend).expect("ccm");
    let short_ccm = Ccm::with_backend(&secret(&key_bytes), 7, 4, backend).expect("ccm");
    for len in LENGTHS {
        let what = format!("{backend} {key_len}-byte key, {len} bytes");
        let iv: [u8; 16] = bytes.array();
        let plaintext = bytes.vec(len);
        let whole = &plaintext[..len - len % 16];
        type Mode = fn(&Aes, &[u8; 16], &mut [u8]) -> Result<(), Error>;
        // The IVs of CBC, CFB and OFB are marked secret too (stricter than needed). CTR's
        // counter block stays public: `ctr_apply` splits the data where the counter's low 32
        // bits wrap, a branch on the (public) counter.
        let modes: [(Mode, Mode, &[u8], bool); 4] = [
            (modes::cbc_encrypt, modes::cbc_decrypt, whole, true),
            (
                |k, iv, b| {
                    modes::cfb_encrypt(k, iv, b);
                    Ok(())
                },
                modes::cfb_decrypt,
                &plaintext,
                true,
            ),
            (
                |k, iv, b| {
                    modes::ofb_apply(k, iv, b);
                    Ok(())
                },
                |k, iv, b| {
                    modes::ofb_apply(k, iv, b);
                    Ok(())
                },
                &plaintext,
                true,
            ),
            (
                |k, iv, b| {
                    modes::ctr_apply(k, iv, b);
                    Ok(())
                },
                |k, iv, b| {
                    modes::ctr_apply(k, iv, b);
                    Ok(())
                },
                &plaintext,
                false,
            ),
        ];
        for (encrypt, decrypt, input, secret_iv) in modes {
            let mut expected = input.to_vec();
            encrypt(&reference, &iv, &mut expected).expect("encrypt");
            let mut buf = secret(&input.to_vec());
            let used_iv = if secret_iv { secret(&iv) } else { iv };
            encrypt(&key, &used_iv, &mut buf).expect("encrypt");
            run.check(&what, &buf, &expected);
            memcheck::secret(&mut buf);
            decrypt(&key, &iv, &mut buf).expect("decrypt");
            run.check(&what, &buf, input);
        }

        // CMAC and its verification.
        let tag = modes::cmac(&key, &secret(&plaintext));
        run.check(&what, &tag, &modes::cmac(&reference, &plaintext));
        let result = modes::cmac_verify(&key, &plaintext, &secret(&tag));
        run.verdict(&what, result, true);
        let mut forged = tag;
        forged[15] ^= 1;
        run.verdict(
            &what,
            modes::cmac_verify(&key, &plaintext, &secret(&forged)),
            false,
        );

        // CCM with the longest and the shortest nonce and tag; the nonce is public, as CTR's
        // counter is (it is part of the counter blocks).
        for (ccm, nonce_len) in [(&ccm, 13), (&short_ccm, 7)] {
            let nonce = bytes.vec(nonce_len);
            let mut buf = secret(&plaintext);
            let tag = ccm
                .encrypt_in_place_detached(&nonce, b"aad", &mut buf)
                .expect("seal");
            let mut tag = tag[..ccm.tag_len()].to_vec();
            memcheck::public(&mut tag);
            memcheck::secret(&mut buf);
            let result = ccm.decrypt_in_place_detached(&nonce, b"aad", &mut buf, &secret(&tag));
            run.verdict(&what, result, true);
            run.check(&what, &buf, &plaintext);
            let mut forged = tag;
            forged[0] ^= 1;
            let result = ccm.decrypt_in_place_detached(&nonce, b"aad", &mut buf, &secret(&forged));
            run.verdict(&what, result, false);
        }

        // PKCS#7: valid padding of secret data, then a secret invalid last byte.
        let padded = modes::pkcs7_pad(&plaintext);
        let unpadded = modes::pkcs7_unpad(&secret(&padded)).map(<[u8]>::to_vec);
        match unpadded {
            Ok(data) => run.check(&what, &data, &plaintext),
            Err(error) => panic!("{what}: valid padding refused: {error}"),
        }
        let mut invalid = padded.clone();
        if let Some(last) = invalid.last_mut() {
            *last = 17 + (len as u8 % 200);
        }
        let result = modes::pkcs7_unpad(&secret(&invalid)).map(|_| ());
        assert_eq!(result, Err(Error::InvalidPadding), "{what}");
        run.operations += 1;
    }

    // The comb engine: every chained mode over a batch of every length at once.
    let mut comb = Comb::with_lanes(4);
    let originals: Vec<Vec<u8>> = LENGTHS.iter().map(|&len| bytes.vec(len)).collect();
    let ivs: Vec<[u8; 16]> = LENGTHS.iter().map(|_| bytes.array()).collect();
    type Single<'a> = &'a dyn Fn(&Aes, &[u8; 16], &mut Vec<u8>);
    let expect = |mode: Single<'_>| -> Vec<Vec<u8>> {
        originals
            .iter()
            .zip(&ivs)
            .map(|(m, iv)| {
                let mut m = m.clone();
                mode(&reference, iv, &mut m);
                m
            })
            .collect()
    };
    let secret_batch = || -> Vec<Vec<u8>> { originals.iter().map(secret).collect() };
    let whole_batch = || -> Vec<Vec<u8>> {
        originals
            .iter()
            .map(|m| secret(&m[..m.len() - m.len() % 16].to_vec()))
            .collect()
    };

    let mut data = whole_batch();
    let mut jobs: Vec<CbcJob<'_>> = data
        .iter_mut()
        .zip(&ivs)
        .map(|(data, iv)| CbcJob {
            key: &key,
            iv: secret(iv),
            data,
        })
        .collect();
    comb.cbc_encrypt(&mut jobs).expect("whole blocks");
    let expected = expect(&|k, iv, m| {
        let whole = m.len() - m.len() % 16;
        m.truncate(whole);
        modes::cbc_encrypt(k, iv, m).expect("whole blocks");
    });
    for (out, expected) in data.iter().zip(&expected) {
        run.check(&format!("{backend} comb cbc"), out, expected);
    }
    let mut data = secret_batch();
    let mut jobs: Vec<CfbJob<'_>> = data
        .iter_mut()
        .zip(&ivs)
        .map(|(data, iv)| CfbJob {
            key: &key,
            iv: secret(iv),
            data,
        })
        .collect();
    comb.cfb_encrypt(&mut jobs);
    for (out, expected) in data
        .iter()
        .zip(&expect(&|k, iv, m| modes::cfb_encrypt(k, iv, m)))
    {
        run.check(&format!("{backend} comb cfb"), out, expected);
    }
    let mut data = secret_batch();
    let mut jobs: Vec<OfbJob<'_>> = data
        .iter_mut()
        .zip(&ivs)
        .map(|(data, iv)| OfbJob {
            key: &key,
            iv: secret(iv),
            data,
        })
        .collect();
    comb.ofb(&mut jobs);
    for (out, expected) in data
        .iter()
        .zip(&expect(&|k, iv, m| modes::ofb_apply(k, iv, m)))
    {
        run.check(&format!("{backend} comb ofb"), out, expected);
    }
    let data = secret_batch();
    let mut jobs: Vec<CmacJob<'_>> = data
        .iter()
        .map(|message| CmacJob {
            key: &key,
            message,
            tag: [0; 16],
        })
        .collect();
    comb.cmac(&mut jobs);
    for (job, message) in jobs.iter().zip(&originals) {
        run.check(
            &format!("{backend} comb cmac"),
            &job.tag,
            &modes::cmac(&reference, message),
        );
    }
    let nonces: Vec<Vec<u8>> = LENGTHS.iter().map(|_| bytes.vec(13)).collect();
    let mut data = secret_batch();
    let mut jobs: Vec<CcmJob<'_>> = data
        .iter_mut()
        .zip(&nonces)
        .map(|(data, nonce)| CcmJob {
            ccm: &ccm,
            nonce,
            aad: b"aad",
            data,
            tag: [0; 16],
            authentic: false,
        })
        .collect();
    comb.ccm_seal(&mut jobs).expect("ccm seal");
    for job in &mut jobs {
        memcheck::public(&mut job.tag);
        memcheck::secret(&mut job.tag);
    }
    jobs[5].tag[3] ^= 1;
    run.verdict(
        &format!("{backend} comb ccm_open"),
        comb.ccm_open(&mut jobs),
        false,
    );
    for (i, (job, original)) in jobs.iter().zip(&originals).enumerate() {
        assert_eq!(job.authentic, i != 5, "{backend} comb ccm_open job {i}");
        if job.authentic {
            run.check(
                &format!("{backend} comb ccm_open job {i}"),
                job.data,
                original,
            );
        }
    }
}

fn main() -> ExitCode {
    if !memcheck::available() {
        eprintln!("combsiv-ct: built without valgrind's memcheck.h; install valgrind and rebuild");
        return ExitCode::from(2);
    }
    if !memcheck::on_valgrind() {
        eprintln!("combsiv-ct: run under valgrind: valgrind --error-exitcode=1 combsiv-ct");
        return ExitCode::from(2);
    }
    if std::env::args().any(|arg| arg == "--canary") {
        let byte = secret(&[std::hint::black_box(7u8)]);
        if byte[0] == 7 {
            println!("combsiv-ct: canary: branched on a secret byte, memcheck must report it");
        }
        return ExitCode::SUCCESS;
    }
    let mut run = Run { operations: 0 };
    let mut bytes = Bytes(0x9E37_79B9_7F4A_7C15);
    let backends = [Backend::Portable, Backend::Aesni];
    for backend in backends {
        if !Backend::available().contains(&backend) {
            eprintln!("combsiv-ct: backend {backend} is not available under valgrind here");
            return ExitCode::from(2);
        }
        aeads!(&mut run, &mut bytes, backend, Aes128GcmSiv, Aes128Gcm, 16);
        aeads!(&mut run, &mut bytes, backend, Aes256GcmSiv, Aes256Gcm, 32);
        for key_len in [16, 32] {
            modes_and_comb(&mut run, &mut bytes, backend, key_len);
        }
    }
    println!(
        "combsiv-ct: {} checked operations on {backends:?}; memcheck errors: {}",
        run.operations,
        memcheck::errors()
    );
    ExitCode::SUCCESS
}
