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
    work: Vec<Vec<u8>>,
    next_nonce: u64,
}

impl Prepared {
    fn new(implementation: &mut Implementation, workload: &Workload) -> Prepared {
        let nonces: Vec<[u8; 12]> = (0..workload.messages())
            .map(|i| nonce(u64::MAX - i as u64))
            .collect();
        let sealed = workload
            .sizes
            .iter()
            .zip(&nonces)
            .map(|(&size, nonce)| {
                let mut buf: Vec<u8> = (0..size).map(|i| i as u8).collect();
                let tag = implementation.subject.seal(nonce, &mut buf);
                (buf, tag)
            })
            .collect();
        let work = workload.sizes.iter().map(|&size| vec![0u8; size]).collect();
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
                for buf in &mut self.work {
                    self.next_nonce += 1;
                    let tag = implementation.subject.seal(&nonce(self.next_nonce), buf);
                    std::hint::black_box(tag);
                }
            }
            Operation::Decrypt => {
                for ((buf, (ciphertext, tag)), nonce) in
                    self.work.iter_mut().zip(&self.sealed).zip(&self.nonces)
                {
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
