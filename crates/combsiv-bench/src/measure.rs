//! Timing: interleaved repeats, medians, TSC cycles.

use crate::subjects::Implementation;
use crate::tsc;
use crate::workloads::Workload;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    Encrypt,
    Decrypt,
}

impl Operation {
    pub fn name(self) -> &'static str {
        match self {
            Operation::Encrypt => "encrypt",
            Operation::Decrypt => "decrypt",
        }
    }
}

/// How long and how often to measure.
#[derive(Clone, Copy, Debug)]
pub struct Effort {
    pub repeats: usize,
    pub batch_ticks: u64,
}

/// The messages of one workload as one implementation sealed them, and work buffers.
struct Prepared {
    nonces: Vec<[u8; 12]>,
    sealed: Vec<(Vec<u8>, [u8; 16])>,
    work: Vec<WorkBuffer>,
    next_nonce: u64,
}

/// A message-sized buffer placed half a page away from the ciphertext it receives.
///
/// glibc's memcpy uses REP MOVSB for large copies, which on AMD Zen 3 runs about 30 times
/// slower (1.1 instead of 0.04 cycles per byte, measured) when the destination lies 1 to 63
/// bytes past the source modulo 4 KiB. Two buffers allocated one after the other whose size
/// is a multiple of 4 KiB are exactly 16 bytes apart modulo 4 KiB, so without this every
/// decryption row at 4096 bytes and above would mostly measure that copy.
struct WorkBuffer {
    bytes: Vec<u8>,
    start: usize,
    len: usize,
}

impl WorkBuffer {
    fn new(len: usize, source: &[u8]) -> WorkBuffer {
        const PAGE: usize = 4096;
        let bytes = vec![0u8; len + PAGE];
        let base = bytes.as_ptr() as usize;
        let target = (source.as_ptr() as usize + PAGE / 2) % PAGE;
        let start = (target + PAGE - base % PAGE) % PAGE;
        WorkBuffer { bytes, start, len }
    }

    fn get(&mut self) -> &mut [u8] {
        &mut self.bytes[self.start..self.start + self.len]
    }
}

impl Prepared {
    fn new(implementation: &mut Implementation, workload: &Workload) -> Prepared {
        let nonces: Vec<[u8; 12]> = (0..workload.messages())
            .map(|i| nonce(u64::MAX - i as u64))
            .collect();
        let sealed: Vec<(Vec<u8>, [u8; 16])> = workload
            .sizes
            .iter()
            .zip(&nonces)
            .map(|(&size, nonce)| {
                let mut buf: Vec<u8> = (0..size).map(|i| i as u8).collect();
                let tag = implementation.subject.seal(nonce, &mut buf);
                (buf, tag)
            })
            .collect();
        let work = sealed
            .iter()
            .map(|(ciphertext, _)| WorkBuffer::new(ciphertext.len(), ciphertext))
            .collect();
        Prepared {
            nonces,
            sealed,
            work,
            next_nonce: 0,
        }
    }

    /// One pass over the workload: every message once, each with a fresh nonce when sealing.
    /// Decryption copies the sealed message into the work buffer first (a memcpy that every
    /// row pays alike) and opens it; a failed open is a bug, so it aborts the run.
    fn pass(&mut self, implementation: &mut Implementation, operation: Operation) {
        match operation {
            Operation::Encrypt => {
                for work in &mut self.work {
                    self.next_nonce += 1;
                    let tag = implementation
                        .subject
                        .seal(&nonce(self.next_nonce), work.get());
                    std::hint::black_box(tag);
                }
            }
            Operation::Decrypt => {
                for ((work, (ciphertext, tag)), nonce) in
                    self.work.iter_mut().zip(&self.sealed).zip(&self.nonces)
                {
                    let buf = work.get();
                    buf.copy_from_slice(ciphertext);
                    assert!(
                        implementation.subject.open(nonce, buf, tag),
                        "{} failed to open its own message",
                        implementation.name
                    );
                }
            }
        }
    }
}

fn nonce(counter: u64) -> [u8; 12] {
    let mut nonce = [0u8; 12];
    nonce[..8].copy_from_slice(&counter.to_le_bytes());
    nonce
}

/// Median TSC cycles per pass of `workload`, for every (implementation, operation), with the
/// rows interleaved within each repeat.
pub fn measure(
    implementations: &mut [Implementation],
    operations: &[Operation],
    workload: &Workload,
    effort: Effort,
) -> Vec<[f64; 2]> {
    let mut prepared: Vec<Prepared> = implementations
        .iter_mut()
        .map(|i| Prepared::new(i, workload))
        .collect();
    let rows: Vec<(usize, Operation)> = (0..implementations.len())
        .flat_map(|i| operations.iter().map(move |&op| (i, op)))
        .collect();
    let batches: Vec<u64> = rows
        .iter()
        .map(|&(i, op)| {
            prepared[i].pass(&mut implementations[i], op); // warm-up
            let start = tsc::now();
            prepared[i].pass(&mut implementations[i], op);
            let per_pass = tsc::now().wrapping_sub(start).max(1);
            (effort.batch_ticks / per_pass).clamp(1, 100_000)
        })
        .collect();
    let mut samples = vec![Vec::with_capacity(effort.repeats); rows.len()];
    for _ in 0..effort.repeats {
        for ((&(i, op), &batch), samples) in rows.iter().zip(&batches).zip(&mut samples) {
            let start = tsc::now();
            for _ in 0..batch {
                prepared[i].pass(&mut implementations[i], op);
            }
            samples.push(tsc::now().wrapping_sub(start) as f64 / batch as f64);
        }
    }
    let mut result = vec![[f64::NAN; 2]; implementations.len()];
    for (&(i, op), mut samples) in rows.iter().zip(samples) {
        samples.sort_by(f64::total_cmp);
        result[i][op as usize] = samples[samples.len() / 2];
    }
    result
}
