//! How a stream's master key is obtained ([`KeySource`], recorded in the header) and how
//! much of that work a reader allows before the header is authenticated ([`KdfLimits`]).

/// How the 32-byte master key was obtained; recorded so that a reader can do the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeySource {
    /// A random key kept in a key file.
    KeyFile,
    /// Argon2id (RFC 9106, version 0x13) of a passphrase, with the header's salt.
    Argon2id {
        /// Memory, in KiB.
        memory_kib: u32,
        /// Passes over the memory.
        iterations: u32,
        /// Lanes.
        parallelism: u32,
    },
}

/// The most Argon2id work a reader does for a header before it can check the header's tag.
///
/// The parameters come from the header, which nobody has authenticated yet: without caps a
/// crafted file could make a reader allocate gigabytes and spin for minutes before it learns
/// that the file is not genuine. The defaults ([`KdfLimits::DEFAULT`]) allow 16 times the
/// memory and 3 times the passes combsiv itself writes (64 MiB, 3 passes, 1 lane); raise
/// them only for files you expect to have been made with more.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KdfLimits {
    /// The most memory, in KiB.
    pub max_memory_kib: u32,
    /// The most passes over the memory.
    pub max_iterations: u32,
    /// The most lanes.
    pub max_parallelism: u32,
}

impl KdfLimits {
    /// 1 GiB, 10 passes, 4 lanes.
    pub const DEFAULT: KdfLimits = KdfLimits {
        max_memory_kib: 1024 * 1024,
        max_iterations: 10,
        max_parallelism: 4,
    };
}

impl Default for KdfLimits {
    fn default() -> Self {
        KdfLimits::DEFAULT
    }
}
