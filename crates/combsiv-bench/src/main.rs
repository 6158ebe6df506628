//! `combsiv-bench`: combsiv on every backend this CPU has, next to its peers.
//!
//! Method (docs/PERFORMANCE.md): keys are set up once, every message gets a fresh
//! nonce, per-message work is timed; decryption opens valid ciphertexts; each cell is the
//! median of repeated batches with all rows interleaved; units are TSC cycles and GB/s.

mod comb_tables;
mod measure;
mod report;
mod subjects;
mod tsc;
mod workloads;

use std::process::ExitCode;

use combsiv::Backend;

use crate::measure::{Effort, Operation};
use crate::subjects::{Algorithm, Implementation};
use crate::workloads::Workload;

struct Options {
    quick: bool,
    only: Option<String>,
    backends: Vec<Backend>,
    json: Option<String>,
    comb_json: Option<String>,
}

const USAGE: &str = "usage: combsiv-bench [--quick] [--only aead|comb] [--backend portable|aesni|vaes|avx512|armv8] [--json PATH] [--comb-json PATH]";

fn parse_options() -> Result<Options, String> {
    let mut options = Options {
        quick: false,
        only: None,
        backends: Backend::available(),
        json: None,
        comb_json: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quick" => options.quick = true,
            "--backend" => {
                let name = args
                    .next()
                    .ok_or("--backend needs a name: portable, aesni, vaes, avx512 or armv8")?;
                let backend =
                    Backend::from_name(&name).ok_or(format!("unknown backend {name:?}"))?;
                if !backend.is_available() {
                    return Err(format!("backend {name} is not available on this CPU"));
                }
                options.backends = vec![backend];
            }
            "--json" => options.json = Some(args.next().ok_or("--json needs a path")?),
            "--comb-json" => {
                options.comb_json = Some(args.next().ok_or("--comb-json needs a path")?);
            }
            "--only" => {
                let part = args.next().ok_or("--only needs aead or comb")?;
                if part != "aead" && part != "comb" {
                    return Err(format!("--only takes aead or comb, not {part:?}"));
                }
                options.only = Some(part);
            }
            "-h" | "--help" => return Err(USAGE.to_string()),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    Ok(options)
}

/// Before any timing: within each algorithm every implementation seals to identical bytes
/// and opens every other implementation's output.
fn self_check(implementations: &mut [Implementation]) -> Result<(), String> {
    for algorithm in Algorithm::ALL {
        for size in [0, 1, 17, 255, 1500, 8192] {
            let plaintext: Vec<u8> = (0..size).map(|i| (i * 31 + 7) as u8).collect();
            let nonce = [size as u8; 12];
            let mut reference: Option<(String, Vec<u8>, [u8; 16])> = None;
            for implementation in implementations
                .iter_mut()
                .filter(|i| i.algorithm == algorithm)
            {
                let mut buf = plaintext.clone();
                let tag = implementation.subject.seal(&nonce, &mut buf);
                match &reference {
                    None => reference = Some((implementation.name.clone(), buf, tag)),
                    Some((name, ciphertext, expected_tag)) => {
                        if (&buf, &tag) != (ciphertext, expected_tag) {
                            return Err(format!(
                                "{} {} differs from {name} at {size} bytes",
                                implementation.name,
                                algorithm.name()
                            ));
                        }
                    }
                }
                if let Some((_, ciphertext, expected_tag)) = &reference {
                    let mut opened = ciphertext.clone();
                    if !implementation
                        .subject
                        .open(&nonce, &mut opened, expected_tag)
                        || opened != plaintext
                    {
                        return Err(format!(
                            "{} {} cannot open at {size} bytes",
                            implementation.name,
                            algorithm.name()
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let options = match parse_options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("combsiv-bench: {message}");
            return ExitCode::from(2);
        }
    };
    let available: Vec<&str> = Backend::available().iter().map(|b| b.name()).collect();
    let tsc_hz = tsc::ticks_per_second();
    let effort = if options.quick {
        Effort {
            repeats: 5,
            batch_ticks: 1_000_000,
        }
    } else {
        Effort {
            repeats: 9,
            batch_ticks: 8_000_000,
        }
    };
    println!("# combsiv-bench\n");
    println!(
        "backends on this CPU: {} (detected: {})",
        available.join(", "),
        Backend::detected()
    );
    println!(
        "TSC {:.3} GHz (measured against the wall clock); each cell is the median of {} interleaved batches",
        tsc_hz / 1e9,
        effort.repeats
    );
    println!(
        "no AAD; fresh nonce per message; decryption copies the ciphertext into place, then opens it\n"
    );

    if options.only.as_deref() != Some("comb")
        && let Err(code) = aead_tables(&options, tsc_hz, effort)
    {
        return code;
    }
    if options.only.as_deref() != Some("aead") {
        // One column per x86 tier asked for (all that this CPU has by default).
        let x86: Vec<Backend> = options
            .backends
            .iter()
            .copied()
            .filter(|&b| b != Backend::Portable)
            .collect();
        let tiers = if x86.is_empty() {
            options.backends.clone()
        } else {
            x86
        };
        println!("\n## The comb engine\n");
        let max_lanes = if options.quick { 8 } else { 32 };
        let tables = [
            comb_tables::cbc_by_lanes(effort, &tiers, max_lanes),
            comb_tables::modes_table(effort, &tiers),
            comb_tables::siv_batch_table(effort, &tiers),
            comb_tables::back_to_back_table(effort, &tiers),
        ];
        for table in &tables {
            println!("{}", table.markdown);
        }
        if let Some(path) = &options.comb_json {
            let rows: Vec<&serde_json::Value> = tables.iter().flat_map(|t| &t.rows).collect();
            let document =
                serde_json::json!({"tsc_hz": tsc_hz, "repeats": effort.repeats, "rows": rows});
            let text = serde_json::to_string_pretty(&document).unwrap_or_default();
            if let Err(error) = std::fs::write(path, text) {
                eprintln!(
                    "combsiv-bench: cannot write {path}: {error}\ncheck that the directory exists and is writable"
                );
                return ExitCode::from(3);
            }
        }
    }
    ExitCode::SUCCESS
}

/// The AEAD tables: every implementation, every workload, target ratios, JSON.
fn aead_tables(options: &Options, tsc_hz: f64, effort: Effort) -> Result<(), ExitCode> {
    let mut implementations = subjects::all(&options.backends, &[0x42; 32]);
    if let Err(problem) = self_check(&mut implementations) {
        eprintln!(
            "combsiv-bench: self-check failed: {problem}\nfix the implementation before timing it"
        );
        return Err(ExitCode::from(1));
    }
    let workloads = Workload::all();
    let operations = [Operation::Encrypt, Operation::Decrypt];
    let cycles = workloads
        .iter()
        .map(|w| measure::measure(&mut implementations, &operations, w, effort))
        .collect();
    let results = report::Results {
        tsc_hz,
        repeats: effort.repeats,
        implementations: &implementations,
        workloads: &workloads,
        cycles,
    };

    println!("{}", results.cycles_per_byte_table());
    println!("{}", results.gigabytes_table());
    println!("{}", results.per_message_table());
    let ours = format!(
        "combsiv/{}",
        options
            .backends
            .last()
            .copied()
            .unwrap_or(Backend::Portable)
    );
    println!(
        "Targets (ratios of throughput from this run; {ours} is ours)\n\n| target | measured | goal | verdict |\n|---|---:|---:|---|"
    );
    for target in results.targets(&ours) {
        println!("{}", target.line());
    }
    if let Some(path) = &options.json {
        let text = serde_json::to_string_pretty(&results.json(&ours)).unwrap_or_default();
        if let Err(error) = std::fs::write(path, text) {
            eprintln!(
                "combsiv-bench: cannot write {path}: {error}\ncheck that the directory exists and is writable"
            );
            return Err(ExitCode::from(3));
        }
    }
    Ok(())
}
