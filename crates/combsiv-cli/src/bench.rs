//! `combsiv bench`: the library's own quick benchmark on the detected backend (no peers; the
//! full comparison is `cargo run --release -p combsiv-bench`).

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Instant;

use combsiv::stream::{self, Algorithm, Decryptor, Encryptor, KeySource, MasterKey, Options};
use combsiv::{Aes128GcmSiv, Aes256GcmSiv, AesKeySize, Backend};

/// The median of `runs` timings of `f`, in seconds.
fn median_seconds(runs: usize, mut f: impl FnMut()) -> f64 {
    f();
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn gbps(bytes: usize, seconds: f64) -> f64 {
    bytes as f64 / seconds / 1e9
}

/// Single-message AES-GCM-SIV, one core.
fn messages(out: &mut String) {
    let _ = writeln!(
        out,
        "| algorithm | op | 64 B | 1 KiB | 8 KiB | 256 KiB |\n|---|---|---:|---:|---:|---:|"
    );
    let a128 = Aes128GcmSiv::new(&[1; 16]);
    let a256 = Aes256GcmSiv::new(&[2; 32]);
    for (key_size, encrypt) in [
        (AesKeySize::Aes128, true),
        (AesKeySize::Aes128, false),
        (AesKeySize::Aes256, true),
        (AesKeySize::Aes256, false),
    ] {
        let mut row = format!(
            "| {}-GCM-SIV | {} |",
            key_size.name(),
            if encrypt { "encrypt" } else { "decrypt" }
        );
        for size in [64usize, 1024, 8192, 256 * 1024] {
            let count = (4 << 20) / size;
            let mut buf = vec![0u8; size];
            let nonce = [0u8; 12];
            let seal = |buf: &mut [u8]| match key_size {
                AesKeySize::Aes128 => a128.encrypt_in_place_detached(&nonce, b"", buf),
                AesKeySize::Aes256 => a256.encrypt_in_place_detached(&nonce, b"", buf),
            };
            let tag = seal(&mut buf).unwrap_or_default();
            let sealed = buf.clone();
            let seconds = median_seconds(5, || {
                for _ in 0..count {
                    let _ = if encrypt {
                        seal(black_box(&mut buf)).map(|_| ())
                    } else {
                        buf.copy_from_slice(&sealed);
                        match key_size {
                            AesKeySize::Aes128 => a128.decrypt_in_place_detached(
                                &nonce,
                                b"",
                                black_box(&mut buf),
                                &tag,
                            ),
                            AesKeySize::Aes256 => a256.decrypt_in_place_detached(
                                &nonce,
                                b"",
                                black_box(&mut buf),
                                &tag,
                            ),
                        }
                    };
                }
            });
            let _ = write!(row, " {:.2} |", gbps(size * count, seconds));
        }
        let _ = writeln!(out, "{row}");
    }
}

/// The stream format in memory: one thread against all cores.
fn streams(out: &mut String) {
    let data = vec![0x5au8; 256 << 20];
    let key = MasterKey::new([3; 32]);
    let mut sealed = Vec::with_capacity(data.len() + (1 << 20));
    let mut opened = Vec::with_capacity(data.len());
    let cores = combsiv::parallel::available_cores();
    let mut exact =
        vec![0u8; stream::sealed_len(data.len() as u64, stream::DEFAULT_CHUNK_SIZE) as usize];
    let mut plain = vec![0u8; data.len()];
    let _ = writeln!(
        out,
        "\nStream format (AES-256-GCM-SIV, 256 KiB chunks, 256 MiB in memory), GB/s\n\n\
         | how | encrypt | decrypt |\n|---|---:|---:|"
    );
    // The library on the same 256 MiB as one message, one core: the single-core rate on
    // data that streams from memory, as a file does.
    let cipher = Aes256GcmSiv::new(&[3; 32]);
    let mut whole = data.clone();
    let mut tag = [0u8; 16];
    let encrypt = median_seconds(3, || {
        whole.copy_from_slice(&data);
        tag = cipher
            .encrypt_in_place_detached(&[0; 12], b"", &mut whole)
            .unwrap_or_default();
    });
    let ciphertext = whole.clone();
    let decrypt = median_seconds(3, || {
        whole.copy_from_slice(&ciphertext);
        let _ = cipher.decrypt_in_place_detached(&[0; 12], b"", &mut whole, &tag);
    });
    let _ = writeln!(
        out,
        "| library, one 256 MiB message (incl. a copy in) | {:.2} | {:.2} |",
        gbps(data.len(), encrypt),
        gbps(data.len(), decrypt)
    );
    for threads in [1, cores] {
        let options = Options {
            threads,
            backend: None,
        };
        let encryptor = || {
            Encryptor::new(
                Algorithm::Aes256GcmSiv,
                stream::DEFAULT_CHUNK_SIZE,
                KeySource::KeyFile,
            )
        };
        // Through `Read` (each chunk copied into its buffer, as from a pipe) ...
        let encrypt = median_seconds(3, || {
            sealed.clear();
            let _ =
                encryptor().and_then(|e| e.encrypt(&key, &data[..], &mut sealed, &options, |_| {}));
        });
        let decrypt = median_seconds(3, || {
            opened.clear();
            let _ = Decryptor::new(&sealed[..])
                .and_then(|d| d.decrypt(&key, &mut opened, &options, |_| {}));
        });
        let _ = writeln!(
            out,
            "| stream from a reader, {threads} thread(s) | {:.2} | {:.2} |",
            gbps(data.len(), encrypt),
            gbps(data.len(), decrypt)
        );
        // ... and from memory (each chunk sealed straight from the input, as from a mapped
        // file).
        let encrypt = median_seconds(3, || {
            sealed.clear();
            let _ = encryptor()
                .and_then(|e| e.encrypt_slice(&key, &data, &mut sealed, &options, |_| {}));
        });
        let decrypt = median_seconds(3, || {
            opened.clear();
            let _ = Decryptor::new(&sealed[..])
                .and_then(|d| d.decrypt_slice(&key, &mut opened, &options, |_| {}));
        });
        let _ = writeln!(
            out,
            "| stream from memory, {threads} thread(s) | {:.2} | {:.2} |",
            gbps(data.len(), encrypt),
            gbps(data.len(), decrypt)
        );
        // ... and into an output of the stream's exact size, every chunk at its place.
        let encrypt = median_seconds(3, || {
            let _ = encryptor().and_then(|e| e.encrypt_into(&key, &data, &mut exact, &options));
        });
        let decrypt = median_seconds(3, || {
            let _ =
                Decryptor::new(&exact[..]).and_then(|d| d.decrypt_into(&key, &mut plain, &options));
        });
        let _ = writeln!(
            out,
            "| stream from memory into its exact size, {threads} thread(s) | {:.2} | {:.2} |",
            gbps(data.len(), encrypt),
            gbps(data.len(), decrypt)
        );
        if opened != data || plain != data {
            let _ = writeln!(out, "(round trip FAILED)");
        }
    }
}

/// `seal_batch`/`open_batch` of 64Ki messages of the Internet mix (7:4:1 of 40, 576 and 1500
/// bytes), one thread against all cores.
fn batches(out: &mut String) {
    let cipher = Aes256GcmSiv::new(&[4; 32]);
    let sizes = [40usize, 40, 40, 40, 40, 40, 40, 576, 576, 576, 576, 1500];
    let mut messages: Vec<Vec<u8>> = (0..1 << 16).map(|i| vec![7u8; sizes[i * 5 % 12]]).collect();
    let bytes: usize = messages.iter().map(Vec::len).sum();
    let _ = writeln!(
        out,
        "\nBatches (AES-256-GCM-SIV, 64Ki messages of the Internet mix, {} KiB), GB/s\n\n\
         | threads | seal_batch | open_batch |\n|---|---:|---:|",
        bytes >> 10
    );
    let mut run = |threads: usize, open: bool| {
        let mut jobs: Vec<combsiv::comb::SivJob> = messages
            .iter_mut()
            .map(|data| combsiv::comb::SivJob {
                nonce: [1; 12],
                aad: b"",
                data,
                tag: [0; 16],
                authentic: false,
            })
            .collect();
        let _ = cipher.seal_batch_with_threads(&mut jobs, threads);
        if open {
            let _ = cipher.open_batch_with_threads(&mut jobs, threads);
        }
    };
    for threads in [1, combsiv::parallel::available_cores()] {
        // Opening needs what sealing made: time both, and sealing alone.
        let seal = median_seconds(5, || run(threads, false));
        let both = median_seconds(5, || run(threads, true));
        let _ = writeln!(
            out,
            "| {threads} | {:.2} | {:.2} |",
            gbps(bytes, seal),
            gbps(bytes, (both - seal).max(1e-9))
        );
    }
}

pub fn run() -> String {
    let mut out = format!(
        "combsiv bench: backend {} (available: {}), median of repeats, GB/s\n\n",
        Backend::detected().name(),
        Backend::available()
            .iter()
            .map(|b| b.name())
            .collect::<Vec<_>>()
            .join(", ")
    );
    messages(&mut out);
    streams(&mut out);
    batches(&mut out);
    out
}
