//! `combsiv`: encrypt files and streams with AES-GCM-SIV, generate keys, compute usage
//! bounds. `combsiv --help` is its manual (what it refuses, the exit codes); the format is
//! docs/FORMAT.md.

#![deny(unsafe_code)]

mod bench;
mod bounds;
mod c2sp;
mod crypt;
mod failure;
mod keys;
mod range;

use std::io::Write;
use std::ops::Range;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use combsiv::AesKeySize;
use combsiv::stream::{Algorithm, DEFAULT_CHUNK_SIZE, KdfLimits, MAX_CHUNK_SIZE, MIN_CHUNK_SIZE};

use crate::failure::Failure;
use crate::keys::KeyChoice;

#[derive(Parser, Debug)]
#[command(
    name = "combsiv",
    version,
    about = "Encrypt files and streams with AES-GCM-SIV (RFC 8452)",
    after_help = AFTER_HELP
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

const AFTER_HELP: &str = "\
Files are AES-256-GCM-SIV (--key-size 128 for AES-128) in 256 KiB chunks on every core, in
the format of docs/FORMAT.md: a fresh key per file, every chunk bound to its position, the
end of the stream and the header.

Nothing unverified reaches the output path: the key is checked against the header before
anything is created; output goes to a private temporary file, fsynced and moved into place
only after the last chunk verified, and removed on any failure or SIGINT/SIGTERM/SIGHUP. On
stdout only verified chunks appear.

Refused: ciphertext to a terminal; overwriting (or writing to a block device) without
--force; writing over its own input; a FIFO without a reader; key or passphrase files that
others can read; headers that ask for more than 1 GiB or 10 passes of Argon2id
(--max-argon2-* for files you trust); an input that changes while it is read.

Exit codes: 0 success; 1 not authentic (wrong key, damaged, truncated); 2 usage; 3 I/O.";

#[derive(Subcommand, Debug)]
enum Command {
    /// Write a new random key file (mode 0600; never overwrites)
    Keygen {
        /// Key file to create (default: print to stdout)
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Encrypt a file or stdin
    Encrypt(CryptArgs),
    /// Decrypt a file or stdin; output is written only once verified
    Decrypt(CryptArgs),
    /// AES-GCM-SIV security bound for a usage profile, or the published tables
    Bounds(BoundsArgs),
    /// Quick benchmark of this library on this CPU
    Bench,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum FormatArg {
    Combsiv,
    C2sp,
    C2spGcmSiv,
}

#[derive(Args, Debug)]
struct CryptArgs {
    /// Input file ("-" or absent: stdin)
    #[arg(short, long, value_name = "FILE")]
    input: Option<PathBuf>,
    /// Output file ("-" or absent: stdout)
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Key file made by `combsiv keygen`
    #[arg(short, long, value_name = "FILE", group = "key")]
    key_file: Option<PathBuf>,
    /// Ask for a passphrase (without echo); the key is derived with Argon2id
    #[arg(short, long, group = "key")]
    passphrase: bool,
    /// Read the passphrase from the first line of FILE (for scripts)
    #[arg(long, value_name = "FILE", group = "key")]
    passphrase_file: Option<PathBuf>,
    /// AES key size in bits: 128 or 256 (default 256: AES-256-GCM-SIV)
    #[arg(long, value_name = "BITS", value_parser = parse_key_size)]
    key_size: Option<AesKeySize>,
    /// The same as --key-size 128
    #[arg(long, hide = true, conflicts_with = "key_size")]
    aes128: bool,
    /// Plaintext bytes per chunk, e.g. 65536, 64KiB, 1MiB (16 B ..= 64 MiB; default 256 KiB)
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    chunk_size: Option<u64>,
    /// Replace an existing output file
    #[arg(short, long)]
    force: bool,
    /// No progress bar
    #[arg(short, long)]
    quiet: bool,
    /// Worker threads (default: one per core)
    #[arg(long, value_name = "N", default_value_t = 0, hide_default_value = true)]
    threads: usize,
    /// Use a key or passphrase file that other users can read (refused by default)
    #[arg(long)]
    allow_insecure_key_file: bool,
    /// Accepted for scripts written for earlier versions, which mapped input files into
    /// memory; files are now always read by position into each worker's own buffer
    #[arg(long, hide = true)]
    no_mmap: bool,
    /// combsiv (the default), c2sp (C2SP chunked encryption with AES-GCM: what
    /// `cryptography`'s Cobblestone reads and writes) or c2sp-gcm-siv (the same over
    /// AES-GCM-SIV). C2SP files have no magic bytes: decrypt with the same choice
    #[arg(long, value_enum, default_value_t = FormatArg::Combsiv)]
    format: FormatArg,
    /// C2SP: the context bound into the message's keys (default: empty)
    #[arg(long, value_name = "TEXT")]
    context: Option<String>,
    /// Decrypt: only plaintext bytes START to END (END excluded; either may be left out),
    /// reading only the chunks they lie in; needs an input file
    #[arg(long, value_name = "START:END", value_parser = parse_range)]
    range: Option<Range<u64>>,
    /// Decrypt: the most memory a file's header may ask Argon2id for (default 1GiB)
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    max_argon2_memory: Option<u64>,
    /// Decrypt: the most Argon2id passes a file's header may ask for (default 10)
    #[arg(long, value_name = "N")]
    max_argon2_passes: Option<u32>,
    /// Decrypt: the most Argon2id lanes a file's header may ask for (default 4)
    #[arg(long, value_name = "N")]
    max_argon2_lanes: Option<u32>,
}

#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("profile").args(["nonces", "random_nonces", "table"]).required(true)))]
struct BoundsArgs {
    /// N: distinct nonces (e.g. 2^32 or 4294967296)
    #[arg(long, value_parser = parse_count, requires = "per_nonce")]
    nonces: Option<f64>,
    /// Q: messages per nonce
    #[arg(long, value_parser = parse_count)]
    per_nonce: Option<f64>,
    /// Nonces are random 96-bit values (with --messages)
    #[arg(long, requires = "messages")]
    random_nonces: bool,
    /// Messages in total (with --random-nonces)
    #[arg(long, value_parser = parse_count)]
    messages: Option<f64>,
    /// Longest message, in 16-byte blocks
    #[arg(long, value_parser = parse_count, group = "length")]
    max_blocks: Option<f64>,
    /// Longest message, in bytes (e.g. 1500, 64KiB, 2^20)
    #[arg(long, value_parser = parse_size_f64, group = "length")]
    max_bytes: Option<f64>,
    /// Check the published AES-GCM-SIV usage tables against the full bound
    #[arg(long, conflicts_with_all = ["nonces", "random_nonces"])]
    table: bool,
    /// Advantage limit 2^-K (default 32)
    #[arg(long, value_name = "K", default_value_t = 32.0)]
    limit: f64,
}

/// "2^32", "4294967296" or "1e9".
fn parse_count(text: &str) -> Result<f64, String> {
    let value = match text.trim().split_once('^') {
        Some(("2", exponent)) => exponent
            .parse::<f64>()
            .map(f64::exp2)
            .map_err(|_| format!("bad exponent in {text:?}"))?,
        Some(_) => return Err(format!("{text:?}: only powers of 2 are written with ^")),
        None => text
            .trim()
            .parse::<f64>()
            .map_err(|_| format!("{text:?} is not a number (try 1000, 1e6 or 2^20)"))?,
    };
    if value.is_finite() && value >= 1.0 {
        Ok(value)
    } else {
        Err(format!("{text:?} must be at least 1"))
    }
}

/// A count with an optional KiB/MiB/GiB (or K/M/G) suffix.
fn parse_size_f64(text: &str) -> Result<f64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| c.is_ascii_alphabetic())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kib" => 1024.0,
        "m" | "mib" => 1024.0 * 1024.0,
        "g" | "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(format!("{text:?}: unknown unit (use KiB, MiB or GiB)")),
    };
    Ok(parse_count(number)? * scale)
}

fn parse_key_size(text: &str) -> Result<AesKeySize, String> {
    text.trim()
        .parse()
        .ok()
        .and_then(|bits| AesKeySize::of_bits(bits).ok())
        .ok_or_else(|| format!("{text:?}: the key size is 128 or 256 (bits)"))
}

fn parse_size(text: &str) -> Result<u64, String> {
    let value = parse_size_f64(text)?;
    if value.fract() != 0.0 || value > u64::MAX as f64 {
        return Err(format!("{text:?} is not a whole number of bytes"));
    }
    Ok(value as u64)
}

/// `START:END`, either side optional.
fn parse_range(text: &str) -> Result<Range<u64>, String> {
    let (start, end) = text
        .split_once(':')
        .ok_or_else(|| format!("{text:?}: write START:END, e.g. 4096:8192 or 1000:"))?;
    let bound = |part: &str, empty: u64| match part {
        "" => Ok(empty),
        "0" => Ok(0),
        _ => parse_size(part),
    };
    let (start, end) = (bound(start, 0)?, bound(end, u64::MAX)?);
    if start > end {
        return Err(format!("{text:?}: the range ends before it starts"));
    }
    Ok(start..end)
}

fn crypt_job(args: CryptArgs, encrypting: bool) -> Result<crypt::Job, Failure> {
    let key_size = match (args.key_size, args.aes128) {
        (_, true) => Some(AesKeySize::Aes128),
        (size, false) => size,
    };
    let format = match args.format {
        FormatArg::Combsiv => crypt::Format::Combsiv,
        FormatArg::C2sp => crypt::Format::C2sp { gcm_siv: false },
        FormatArg::C2spGcmSiv => crypt::Format::C2sp { gcm_siv: true },
    };
    let c2sp = format != crypt::Format::Combsiv;
    if c2sp && args.chunk_size.is_some() {
        return Err(Failure::usage(
            "C2SP chunks are always 16 KiB",
            "drop --chunk-size",
        ));
    }
    if !c2sp && args.context.is_some() {
        return Err(Failure::usage(
            "--context is C2SP's; combsiv's format binds its header instead",
            "add --format c2sp, or drop --context",
        ));
    }
    if encrypting && args.range.is_some() {
        return Err(Failure::usage(
            "--range reads part of an encrypted file",
            "use it with decrypt",
        ));
    }
    // A C2SP message does not say its key size: the reader chooses it as the writer did.
    if !encrypting && !c2sp && (key_size.is_some() || args.chunk_size.is_some()) {
        return Err(Failure::usage(
            "--key-size and --chunk-size choose how to encrypt; a file's header says how to decrypt it",
            "drop them from the decrypt command",
        ));
    }
    let raised = [
        args.max_argon2_memory.is_some(),
        args.max_argon2_passes.is_some(),
        args.max_argon2_lanes.is_some(),
    ];
    if encrypting && raised.contains(&true) {
        return Err(Failure::usage(
            "--max-argon2-* limit what a file's header may ask of a reader",
            "use them with decrypt",
        ));
    }
    let defaults = KdfLimits::DEFAULT;
    let kdf_limits = KdfLimits {
        max_memory_kib: match args.max_argon2_memory {
            // Whole KiB, and at most what the format can express.
            Some(bytes) => u32::try_from(bytes / 1024).unwrap_or(u32::MAX),
            None => defaults.max_memory_kib,
        },
        max_iterations: args.max_argon2_passes.unwrap_or(defaults.max_iterations),
        max_parallelism: args.max_argon2_lanes.unwrap_or(defaults.max_parallelism),
    };
    let key = match (args.key_file, args.passphrase_file, args.passphrase) {
        (Some(path), _, _) => KeyChoice::File(path),
        (None, Some(path), _) => KeyChoice::PassphraseFile(path),
        (None, None, true) => KeyChoice::PassphrasePrompt,
        (None, None, false) => {
            return Err(Failure::usage(
                "no key given",
                "pass --key-file FILE (make one with `combsiv keygen -o FILE`), --passphrase or --passphrase-file FILE",
            ));
        }
    };
    let requested = args.chunk_size.unwrap_or(u64::from(DEFAULT_CHUNK_SIZE));
    let chunk_size = u32::try_from(requested)
        .ok()
        .filter(|size| (MIN_CHUNK_SIZE..=MAX_CHUNK_SIZE).contains(size))
        .ok_or_else(|| {
            Failure::usage(
                format!("chunk size {requested} is out of range"),
                "choose a chunk size from 16 bytes to 64 MiB",
            )
        })?;
    Ok(crypt::Job {
        input: args.input,
        output: args.output,
        key,
        algorithm: Algorithm::gcm_siv(key_size.unwrap_or(AesKeySize::Aes256)),
        chunk_size,
        force: args.force,
        quiet: args.quiet,
        threads: args.threads,
        allow_insecure_key_file: args.allow_insecure_key_file,
        kdf_limits,
        format,
        context: args.context.unwrap_or_default().into_bytes(),
        range: args.range,
    })
}

fn print(text: &str) -> Result<(), Failure> {
    std::io::stdout()
        .write_all(text.as_bytes())
        .map_err(|e| Failure::io("cannot write to stdout", &e))
}

fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Keygen { output } => keys::keygen(output.as_deref()),
        Command::Encrypt(args) => {
            crypt::clean_up_on_signals();
            crypt::encrypt(&crypt_job(args, true)?)
        }
        Command::Decrypt(args) => {
            crypt::clean_up_on_signals();
            crypt::decrypt(&crypt_job(args, false)?)
        }
        Command::Bounds(args) => {
            let limit = -args.limit.abs();
            if args.table {
                return print(&bounds::tables(limit));
            }
            let max_blocks = match (args.max_blocks, args.max_bytes) {
                (Some(blocks), _) => blocks,
                (None, Some(bytes)) => (bytes / 16.0).ceil().max(1.0),
                (None, None) => {
                    return Err(Failure::usage(
                        "no message length given",
                        "pass --max-blocks B or --max-bytes N",
                    ));
                }
            };
            let profile = match (args.nonces, args.per_nonce, args.messages) {
                (Some(nonces), Some(per_nonce), _) => bounds::Profile::Nonces { nonces, per_nonce },
                (_, _, Some(messages)) if args.random_nonces => {
                    bounds::Profile::Random { messages }
                }
                _ => {
                    return Err(Failure::usage(
                        "incomplete usage profile",
                        "pass --nonces N --per-nonce Q, or --random-nonces --messages M",
                    ));
                }
            };
            print(&bounds::report(profile, max_blocks, args.max_bytes, limit))
        }
        Command::Bench => print(&bench::run()),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("{failure}");
            ExitCode::from(failure.exit as u8)
        }
    }
}
