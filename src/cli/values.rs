//! The library's enums as the command line spells them: each value's name and its line of
//! `--help`. The library knows nothing of clap; this is where its types meet it.

use clap::builder::PossibleValue;
use clap::ValueEnum;

use crate::capacity::settings::Fresh;
use crate::client::native::Sender;
use crate::cluster::GcKind;
use crate::compare::cost::SizeFor;
use crate::engine::ArrivalKind;
use crate::fleet::settings::LauncherKind;
use crate::results::config::RunPhase;
use crate::workload::common::generators::PartitionGenerator;

/// `impl ValueEnum` for a library enum: each variant, its name on the command line, and its
/// help.
macro_rules! value_enum {
    ($ty:ident { $($variant:ident => $name:literal: $help:literal,)* }) => {
        impl ValueEnum for $ty {
            fn value_variants<'a>() -> &'a [Self] {
                &[$($ty::$variant),*]
            }

            fn to_possible_value(&self) -> Option<PossibleValue> {
                Some(match self {
                    $($ty::$variant => PossibleValue::new($name).help($help),)*
                })
            }
        }
    };
}

value_enum!(ArrivalKind {
    Fixed => "fixed": "Evenly: request i at i / rate",
    Poisson => "poisson": "A Poisson process of the same mean rate: exponential gaps, seeded",
});

value_enum!(GcKind {
    G1 => "g1": "Garbage-First, the JVM's and Cassandra 5.0's default",
    Zgc => "zgc": "Z Garbage Collector: concurrent, pauses under a millisecond",
    Shenandoah => "shenandoah": "Shenandoah: concurrent compaction, short pauses",
    Parallel => "parallel": "The parallel (throughput) collector: stop-the-world young and old collections",
});

value_enum!(PartitionGenerator {
    Random => "random": "Uniformly at random",
    Normal => "normal": "Normally distributed around the middle (σ = partitions / 6): hot partitions in the middle",
    Sequence => "sequence": "In order, 0, 1, 2, ..., wrapping around after the last",
});

value_enum!(Sender {
    Auto => "auto": "The native sender; the driver when the native sender cannot connect (said in the output)",
    Native => "native": "headroom's own connections; an error for other workloads",
    Driver => "driver": "The scylla driver's `execute_unpaged`",
});

value_enum!(RunPhase {
    Load => "load": "The populate (load) alone",
    Run => "run": "The measured run alone",
    Both => "both": "The populate, then the measured run",
});

value_enum!(Fresh {
    Restart => "restart": "Restart the local cluster headroom started, with its data deleted",
    Truncate => "truncate": "Truncate the workload's tables",
    None => "none": "Keep the data of earlier trials",
});

value_enum!(SizeFor {
    Healthy => "healthy": "Each configuration's own capacity, every node up",
    Degraded => "degraded": "The capacity of each configuration's twin searched with a node down",
});

#[cfg(test)]
mod tests {
    use super::*;

    /// The names on the command line are the ones the files store (serde's), so that what
    /// a user types and what config.json says agree.
    #[test]
    fn command_line_names_are_the_stored_names() {
        fn check<T: ValueEnum + serde::Serialize>() {
            for value in T::value_variants() {
                let name = value.to_possible_value().unwrap().get_name().to_string();
                assert_eq!(serde_json::to_value(value).unwrap(), name.as_str());
            }
        }
        check::<ArrivalKind>();
        check::<GcKind>();
        check::<PartitionGenerator>();
        check::<Sender>();
        check::<RunPhase>();
        check::<Fresh>();
        check::<SizeFor>();
    }
}

value_enum!(LauncherKind {
    Local => "local": "Processes of this machine",
    Kubernetes => "kubernetes": "Pods of one Indexed Job per trial on the Kubernetes cluster of KUBECONFIG (or the one this runs in)",
});
