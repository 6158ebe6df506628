//! `combsiv-bench`: measures combsiv on every backend this CPU has.
//!
//! Method (see README.md): each message gets a fresh nonce; keys are set up once; every
//! measurement is the median of repeated timed batches, interleaved across rows so that noise
//! from the shared machine spreads evenly; units are TSC cycles per byte and GB/s.

mod tsc;

use std::process::ExitCode;

use combsiv::{Aes128Gcm, Aes128GcmSiv, Aes256Gcm, Aes256GcmSiv, Backend};

/// Message sizes of the benchmark table (bytes).
const SIZES: [usize; 5] = [16, 1024, 8192, 16384, 65536];

struct Options {
    quick: bool,
    backends: Vec<Backend>,
}

fn parse_options() -> Result<Options, String> {
    let mut options = Options {
        quick: false,
        backends: Backend::available(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quick" => options.quick = true,
            "--backend" => {
                let name = args
                    .next()
                    .ok_or("--backend needs a name: portable, aesni or vaes")?;
                let backend =
                    Backend::from_name(&name).ok_or(format!("unknown backend {name:?}"))?;
                if !backend.is_available() {
                    return Err(format!("backend {name} is not available on this CPU"));
                }
                options.backends = vec![backend];
            }
            "-h" | "--help" => {
                println!("usage: combsiv-bench [--quick] [--backend portable|aesni|vaes]");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other:?} (try --help)")),
        }
    }
    Ok(options)
}

/// Seals the buffer in place with the nonce numbered by the second argument.
type SealInPlace = Box<dyn FnMut(&mut [u8], u64)>;

/// One row of the table.
struct Row {
    name: String,
    seal: SealInPlace,
}

fn rows(backends: &[Backend]) -> Vec<Row> {
    let mut rows = Vec::new();
    for &backend in backends {
        macro_rules! row {
            ($aead:ident, $key:expr, $label:literal) => {{
                let Ok(cipher) = $aead::with_backend(&$key, backend) else {
                    continue;
                };
                rows.push(Row {
                    name: format!("combsiv/{backend} {} encrypt", $label),
                    seal: Box::new(move |buf: &mut [u8], counter: u64| {
                        let mut nonce = [0u8; 12];
                        nonce[..8].copy_from_slice(&counter.to_le_bytes());
                        let sealed = cipher.encrypt_in_place_detached(&nonce, &[], buf);
                        let _ = std::hint::black_box(sealed);
                    }),
                });
            }};
        }
        row!(Aes128GcmSiv, [7u8; 16], "AES-128-GCM-SIV");
        row!(Aes256GcmSiv, [7u8; 32], "AES-256-GCM-SIV");
        row!(Aes128Gcm, [7u8; 16], "AES-128-GCM");
        row!(Aes256Gcm, [7u8; 32], "AES-256-GCM");
    }
    rows
}

/// TSC cycles per message: the median over `repeats` of batches sized to take about
/// `target_ticks` each.
fn measure(rows: &mut [Row], size: usize, repeats: usize, target_ticks: u64) -> Vec<f64> {
    let mut buf = vec![0u8; size];
    let mut counter = 0u64;
    // Calibrate the batch length once per row, then interleave the rows repeat by repeat.
    let batches: Vec<u64> = rows
        .iter_mut()
        .map(|row| {
            let start = tsc::now();
            for _ in 0..3 {
                (row.seal)(&mut buf, counter);
                counter += 1;
            }
            let per_message = (tsc::now().wrapping_sub(start) / 3).max(1);
            (target_ticks / per_message).clamp(1, 1 << 20)
        })
        .collect();
    let mut samples = vec![Vec::with_capacity(repeats); rows.len()];
    for _ in 0..repeats {
        for ((row, &batch), samples) in rows.iter_mut().zip(&batches).zip(&mut samples) {
            let start = tsc::now();
            for _ in 0..batch {
                (row.seal)(&mut buf, counter);
                counter += 1;
            }
            samples.push(tsc::now().wrapping_sub(start) as f64 / batch as f64);
        }
    }
    samples
        .into_iter()
        .map(|mut s| {
            s.sort_by(f64::total_cmp);
            s[s.len() / 2]
        })
        .collect()
}

fn main() -> ExitCode {
    let options = match parse_options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("combsiv-bench: {message}");
            return ExitCode::from(2);
        }
    };
    let names: Vec<&str> = Backend::available().iter().map(|b| b.name()).collect();
    let hz = tsc::ticks_per_second();
    println!(
        "backends available on this CPU: {} (detected: {})",
        names.join(", "),
        Backend::detected()
    );
    println!("TSC: {:.3} GHz, measured against the wall clock", hz / 1e9);
    let (repeats, target_ticks) = if options.quick {
        (5, 2_000_000)
    } else {
        (11, 20_000_000)
    };
    println!("each cell: median of {repeats} batches; TSC cycles/byte (GB/s)\n");

    let mut rows = rows(&options.backends);
    let columns: Vec<Vec<f64>> = SIZES
        .iter()
        .map(|&size| measure(&mut rows, size, repeats, target_ticks))
        .collect();
    print!("| implementation / algorithm / operation |");
    for size in SIZES {
        print!(" {size} B |");
    }
    println!();
    println!("|---|{}", "---|".repeat(SIZES.len()));
    for (r, row) in rows.iter().enumerate() {
        print!("| {} |", row.name);
        for (column, size) in columns.iter().zip(SIZES) {
            let cycles_per_byte = column[r] / size as f64;
            let gigabytes_per_second = hz / cycles_per_byte / 1e9;
            print!(" {cycles_per_byte:.2} ({gigabytes_per_second:.2}) |");
        }
        println!();
    }
    ExitCode::SUCCESS
}
