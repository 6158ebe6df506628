//! Tables (markdown), target ratios and JSON.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::measure::Operation;
use crate::subjects::{Algorithm, Implementation};
use crate::workloads::{PER_MESSAGE_SIZES, Workload};

/// Everything measured in one run.
pub struct Results<'a> {
    pub tsc_hz: f64,
    pub repeats: usize,
    pub implementations: &'a [Implementation],
    pub workloads: &'a [Workload],
    /// `cycles[workload][implementation][operation]`: median TSC cycles per pass.
    pub cycles: Vec<Vec<[f64; 2]>>,
}

impl Results<'_> {
    fn cycles_per_pass(&self, w: usize, i: usize, op: Operation) -> f64 {
        self.cycles[w][i][op as usize]
    }

    fn cycles_per_byte(&self, w: usize, i: usize, op: Operation) -> f64 {
        self.cycles_per_pass(w, i, op) / self.workloads[w].bytes() as f64
    }

    fn gigabytes_per_second(&self, w: usize, i: usize, op: Operation) -> f64 {
        self.tsc_hz / self.cycles_per_byte(w, i, op) / 1e9
    }

    fn find(&self, name: &str, algorithm: Algorithm) -> Option<usize> {
        self.implementations
            .iter()
            .position(|i| i.name == name && i.algorithm == algorithm)
    }

    fn workload(&self, label: &str) -> Option<usize> {
        self.workloads.iter().position(|w| w.label == label)
    }

    fn row_label(&self, i: usize, op: Operation) -> String {
        let implementation = &self.implementations[i];
        format!(
            "{} | {} | {}",
            implementation.name,
            implementation.algorithm.name(),
            op.name()
        )
    }

    /// The main table: one row per implementation, algorithm and operation.
    pub fn throughput_table(
        &self,
        unit: &str,
        value: impl Fn(&Self, usize, usize, Operation) -> f64,
    ) -> String {
        let mut out = String::new();
        let header: Vec<String> = self.workloads.iter().map(|w| w.label.clone()).collect();
        let _ = writeln!(
            out,
            "{unit}\n\n| implementation | algorithm | op | {} |",
            header.join(" | ")
        );
        let _ = writeln!(out, "|---|---|---|{}", "---:|".repeat(header.len()));
        for op in [Operation::Encrypt, Operation::Decrypt] {
            for i in 0..self.implementations.len() {
                let cells: Vec<String> = (0..self.workloads.len())
                    .map(|w| format!("{:.2}", value(self, w, i, op)))
                    .collect();
                let _ = writeln!(out, "| {} | {} |", self.row_label(i, op), cells.join(" | "));
            }
        }
        out
    }

    pub fn cycles_per_byte_table(&self) -> String {
        self.throughput_table(
            "TSC cycles per byte (lower is better)",
            Self::cycles_per_byte,
        )
    }

    pub fn gigabytes_table(&self) -> String {
        self.throughput_table("GB/s (higher is better)", Self::gigabytes_per_second)
    }

    /// The seeds' table: cycles per message, GCM-SIV next to GCM.
    pub fn per_message_table(&self) -> String {
        let mut out = String::new();
        let columns: Vec<usize> = PER_MESSAGE_SIZES
            .iter()
            .filter_map(|s| self.workload(&s.to_string()))
            .collect();
        let header: Vec<&str> = columns
            .iter()
            .map(|&w| self.workloads[w].label.as_str())
            .collect();
        let _ = writeln!(
            out,
            "TSC cycles per message (seeds' style)\n\n| implementation | algorithm | op | {} |",
            header.join(" | ")
        );
        let _ = writeln!(out, "|---|---|---|{}", "---:|".repeat(columns.len()));
        for algorithm in Algorithm::ALL {
            for op in [Operation::Encrypt, Operation::Decrypt] {
                for (i, implementation) in self.implementations.iter().enumerate() {
                    if implementation.algorithm != algorithm {
                        continue;
                    }
                    let cells: Vec<String> = columns
                        .iter()
                        .map(|&w| format!("{:.0}", self.cycles_per_pass(w, i, op)))
                        .collect();
                    let _ = writeln!(out, "| {} | {} |", self.row_label(i, op), cells.join(" | "));
                }
            }
        }
        out
    }

    /// The targets, each as a measured ratio (or value) and met / not met.
    pub fn targets(&self, ours: &str) -> Vec<Target> {
        use Algorithm::*;
        use Operation::*;
        let mut targets = Vec::new();
        let mut ratio = |what: String,
                         (a_name, a_alg, a_op): (&str, Algorithm, Operation),
                         (b_name, b_alg, b_op): (&str, Algorithm, Operation),
                         label: &str,
                         goal: f64| {
            if let (Some(a), Some(b), Some(w)) = (
                self.find(a_name, a_alg),
                self.find(b_name, b_alg),
                self.workload(label),
            ) {
                let value = self.cycles_per_pass(w, b, b_op) / self.cycles_per_pass(w, a, a_op);
                targets.push(Target {
                    what,
                    value,
                    goal,
                    higher_is_better: true,
                });
            }
        };
        for (siv, gcm) in [(Aes128GcmSiv, Aes128Gcm), (Aes256GcmSiv, Aes256Gcm)] {
            for label in ["8192", "65536"] {
                ratio(
                    format!(
                        "{ours} {} encrypt / ring {} encrypt @ {label}",
                        siv.name(),
                        gcm.name()
                    ),
                    (ours, siv, Encrypt),
                    ("ring", gcm, Encrypt),
                    label,
                    0.95,
                );
                ratio(
                    format!("{ours} {} encrypt / aws-lc-rs same @ {label}", siv.name()),
                    (ours, siv, Encrypt),
                    ("aws-lc-rs", siv, Encrypt),
                    label,
                    2.2,
                );
                ratio(
                    format!(
                        "{ours} {} decrypt / ring {} decrypt @ {label}",
                        siv.name(),
                        gcm.name()
                    ),
                    (ours, siv, Decrypt),
                    ("ring", gcm, Decrypt),
                    label,
                    1.0,
                );
            }
        }
        for label in ["1024", "1500", "2048", "4096", "8192", "65536"] {
            ratio(
                format!("{ours} AES-128-GCM encrypt / ring @ {label}"),
                (ours, Aes128Gcm, Encrypt),
                ("ring", Aes128Gcm, Encrypt),
                label,
                1.0,
            );
        }
        ratio(
            "combsiv/aesni AES-128-GCM-SIV encrypt / aws-lc-rs same @ 8192".to_string(),
            ("combsiv/aesni", Aes128GcmSiv, Encrypt),
            ("aws-lc-rs", Aes128GcmSiv, Encrypt),
            "8192",
            1.2,
        );
        if let (Some(i), Some(w)) = (self.find(ours, Aes128GcmSiv), self.workload("16")) {
            let value = self.cycles_per_pass(w, i, Encrypt);
            targets.push(Target {
                what: format!("{ours} AES-128-GCM-SIV 16-byte seal, TSC cycles"),
                value,
                goal: 190.0,
                higher_is_better: false,
            });
        }
        if let (Some(i), Some(peer), Some(w)) = (
            self.find("combsiv/aesni", Aes128GcmSiv),
            self.find("aws-lc-rs", Aes128GcmSiv),
            self.workload("16"),
        ) {
            let value =
                self.cycles_per_pass(w, i, Encrypt) / self.cycles_per_pass(w, peer, Encrypt);
            targets.push(Target {
                what: "combsiv/aesni AES-128-GCM-SIV 16-byte seal / aws-lc-rs, cycles".to_string(),
                value,
                goal: 1.0,
                higher_is_better: false,
            });
        }
        if let (Some(i), Some(w)) = (self.find(ours, Aes128GcmSiv), self.workload("mix")) {
            let value = self.cycles_per_byte(w, i, Encrypt);
            targets.push(Target {
                what: format!("{ours} AES-128-GCM-SIV encrypt, Internet mix, TSC c/B"),
                value,
                goal: 0.72,
                higher_is_better: false,
            });
        }
        targets
    }

    pub fn json(&self, ours: &str) -> Value {
        let rows: Vec<Value> = self
            .implementations
            .iter()
            .enumerate()
            .flat_map(|(i, implementation)| {
                [Operation::Encrypt, Operation::Decrypt].map(|op| {
                    let cells: Vec<Value> = self
                        .workloads
                        .iter()
                        .enumerate()
                        .map(|(w, workload)| {
                            json!({
                                "workload": workload.label,
                                "bytes_per_pass": workload.bytes(),
                                "messages_per_pass": workload.messages(),
                                "tsc_cycles_per_pass": self.cycles_per_pass(w, i, op),
                                "tsc_cycles_per_byte": self.cycles_per_byte(w, i, op),
                                "gigabytes_per_second": self.gigabytes_per_second(w, i, op),
                            })
                        })
                        .collect();
                    json!({
                        "implementation": implementation.name,
                        "backend": implementation.backend.map(|b| b.name()),
                        "algorithm": implementation.algorithm.name(),
                        "operation": op.name(),
                        "results": cells,
                    })
                })
            })
            .collect();
        let targets: Vec<Value> = self
            .targets(ours)
            .iter()
            .map(|t| json!({"what": t.what, "value": t.value, "goal": t.goal, "met": t.met()}))
            .collect();
        json!({"tsc_hz": self.tsc_hz, "repeats": self.repeats, "rows": rows, "targets": targets})
    }
}

pub struct Target {
    pub what: String,
    pub value: f64,
    pub goal: f64,
    pub higher_is_better: bool,
}

impl Target {
    pub fn met(&self) -> bool {
        if self.higher_is_better {
            self.value >= self.goal
        } else {
            self.value <= self.goal
        }
    }

    pub fn line(&self) -> String {
        let relation = if self.higher_is_better { ">=" } else { "<=" };
        let verdict = if self.met() { "met" } else { "NOT met" };
        format!(
            "| {} | {:.2} | {relation} {:.2} | {verdict} |",
            self.what, self.value, self.goal
        )
    }
}
