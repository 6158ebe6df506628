//! `combsiv decrypt --range START:END`: the plaintext bytes `START..END` of a file in either
//! format, decrypting only the chunks they lie in. The final chunk is authenticated first,
//! so a truncated file fails before anything is written; the output follows the same policy
//! as a whole decryption (written whole, or not at all).

use std::io::Write;

use combsiv::random_access::{SeekableDecryptor, stream_header};
use combsiv::stream::StreamError;
use zeroize::Zeroizing;

use crate::c2sp::{Opening, open_message};
use crate::crypt::{Format, Job, Target, named, open_input, plan_output, write_output};
use crate::failure::Failure;

/// Plaintext copied per read: a few chunks of either format.
const PIECE: usize = 1 << 20;

pub fn decrypt(job: &Job) -> Result<(), Failure> {
    let input = open_input(named(&job.input))?;
    if input.len.is_none() {
        return Err(Failure::usage(
            format!(
                "--range needs a regular file to read by position, not {}",
                input.name
            ),
            "save the input to a file first",
        ));
    }
    let failed = |e: StreamError| Failure::stream(e, &input.name, true);
    let file = &input.reader;
    let decryptor = match job.format {
        Format::Combsiv => {
            let header = stream_header(&file, &job.kdf_limits).map_err(failed)?;
            let key = job
                .key
                .master_key(&header, false, job.allow_insecure_key_file)?;
            SeekableDecryptor::stream(file, &key).map_err(failed)?
        }
        Format::C2sp { .. } => {
            let aead = job.c2sp_aead();
            let header = combsiv::c2sp::read_header(file).map_err(failed)?;
            let key_len = aead.key_size().key_len();
            let input_key = job.key.c2sp_input_key(
                &header[..combsiv::c2sp::SALT_LEN],
                key_len,
                false,
                job.allow_insecure_key_file,
            )?;
            // The commitment first, for the same errors as a whole decryption.
            open_message(job, aead, &header).map_err(|e| match e {
                Opening::Key(failure) => failure,
                Opening::Stream(e) => failed(e),
            })?;
            SeekableDecryptor::c2sp(file, aead, &input_key, &job.context).map_err(failed)?
        }
    };
    let range = job.range.clone().unwrap_or_default();
    let (start, end) = (range.start, range.end.min(decryptor.len()));
    let target = plan_output(job, &input, false)?;
    let copy = |output: &mut dyn Write, report: &(dyn Fn(u64) + Sync)| {
        let mut piece = Zeroizing::new(vec![0u8; PIECE]);
        let mut at = start;
        while at < end {
            let want = usize::try_from(end - at).map_or(PIECE, |left| left.min(PIECE));
            let n = decryptor.read_at(at, &mut piece[..want])?;
            output.write_all(&piece[..n])?;
            at += n as u64;
            report(at - start);
        }
        output.flush()?;
        Ok(end.saturating_sub(start))
    };
    write_output(job, &input, target, true, |target, report| match target {
        Target::File(planned) => {
            let mut output = planned.create()?;
            copy(&mut output.file(), report)?;
            output.commit()?;
            Ok(end.saturating_sub(start))
        }
        Target::Stream(mut stdout) => copy(&mut stdout, report),
    })
}
