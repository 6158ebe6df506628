//! `combsiv encrypt --format c2sp` and `combsiv decrypt --format c2sp`: C2SP chunked
//! encryption (docs/C2SP.md) with the same output policy, refusals and exit codes as the
//! stream format. The message's salt is drawn (or read) first, because a passphrase's input
//! key is Argon2id of the passphrase with that salt; the commitment is checked before any
//! output exists.

use combsiv::c2sp::{self, Message, SALT_LEN};
use combsiv::stream::StreamError;

use crate::crypt::{Job, Target, named, open_input, plan_output, write_output};
use crate::failure::Failure;

pub fn encrypt(job: &Job) -> Result<(), Failure> {
    let aead = job.c2sp_aead();
    let input = open_input(named(&job.input))?;
    let target = plan_output(job, &input, true)?;
    let mut salt = [0u8; SALT_LEN];
    getrandom::fill(&mut salt).map_err(|e| {
        Failure::usage(
            format!("no randomness: {e}"),
            "check that the OS random number generator works",
        )
    })?;
    let key_len = aead.key_size().key_len();
    let input_key = job
        .key
        .c2sp_input_key(&salt, key_len, true, job.allow_insecure_key_file)?;
    let message = Message::with_salt_hazmat(aead, &input_key, &job.context, salt)
        .map_err(|e| Failure::stream(e, &input.name, false))?;
    let options = job.options();
    write_output(job, &input, target, false, |target, report| match target {
        Target::File(planned) => message.encrypt_to_file(&input.reader, planned, &options, report),
        Target::Stream(stdout) => message.encrypt_file(&input.reader, &stdout, &options, report),
    })
}

pub fn decrypt(job: &Job) -> Result<(), Failure> {
    let aead = job.c2sp_aead();
    let input = open_input(named(&job.input))?;
    let header =
        c2sp::read_header(&input.reader).map_err(|e| Failure::stream(e, &input.name, true))?;
    let target = plan_output(job, &input, false)?;
    let message = open_message(job, aead, &header).map_err(|e| match e {
        Opening::Key(failure) => failure,
        Opening::Stream(e) => Failure::stream(e, &input.name, true),
    })?;
    let options = job.options();
    write_output(job, &input, target, true, |target, report| match target {
        Target::File(planned) => message.decrypt_to_file(&input.reader, planned, &options, report),
        Target::Stream(stdout) => message.decrypt_file(&input.reader, &stdout, &options, report),
    })
}

/// Why a message's keys could not be had.
pub enum Opening {
    /// Reading the key or passphrase.
    Key(Failure),
    /// The commitment (a wrong key or context).
    Stream(StreamError),
}

/// The message whose header is `header`, under the job's key (a passphrase stretched with
/// the header's salt), once its commitment matches.
pub fn open_message(
    job: &Job,
    aead: c2sp::Aead,
    header: &[u8; c2sp::HEADER_LEN],
) -> Result<Message, Opening> {
    let key_len = aead.key_size().key_len();
    let input_key = job
        .key
        .c2sp_input_key(
            &header[..SALT_LEN],
            key_len,
            false,
            job.allow_insecure_key_file,
        )
        .map_err(Opening::Key)?;
    Message::open(aead, &input_key, &job.context, header).map_err(Opening::Stream)
}
