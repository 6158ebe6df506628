//! Time in TSC cycles, the unit the AES-GCM-SIV papers and the peers quote, with its rate
//! measured against the wall clock (the TSC ticks at a constant rate on every CPU this
//! targets, whatever the core clock does).

#[cfg(target_arch = "x86_64")]
mod x86;

use std::time::{Duration, Instant};

/// The time-stamp counter, or nanoseconds on CPUs without one.
pub fn now() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        x86::rdtsc()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        use std::sync::OnceLock;
        static START: OnceLock<Instant> = OnceLock::new();
        START.get_or_init(Instant::now).elapsed().as_nanos() as u64
    }
}

/// TSC ticks per second: the median of a few 20 ms comparisons with the monotonic clock.
pub fn ticks_per_second() -> f64 {
    let mut rates: Vec<f64> = (0..5)
        .map(|_| {
            let (start_ticks, start) = (now(), Instant::now());
            while start.elapsed() < Duration::from_millis(20) {}
            let ticks = now().wrapping_sub(start_ticks);
            ticks as f64 / start.elapsed().as_secs_f64()
        })
        .collect();
    rates.sort_by(f64::total_cmp);
    rates[rates.len() / 2]
}
