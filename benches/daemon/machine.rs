//! The machine the bench ran on, for the report.

use std::path::Path;

use serde_json::{Value, json};

pub struct Machine {
    pub cores: usize,
    pub cpu: String,
    pub kernel: String,
    pub memory: String,
    pub filesystem: String,
}

impl Machine {
    pub fn json(&self) -> Value {
        json!({
            "cores": self.cores,
            "cpu": self.cpu,
            "kernel": self.kernel,
            "memory": self.memory,
            "temp_filesystem": self.filesystem,
        })
    }
}

pub fn machine(temp: &Path) -> Machine {
    let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
    let cpuinfo = read("/proc/cpuinfo");
    let field = |text: &str, name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_once(':'))
            .map_or("unknown".to_string(), |(_, v)| v.trim().to_string())
    };
    Machine {
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        cpu: field(&cpuinfo, "model name"),
        kernel: read("/proc/sys/kernel/osrelease").trim().to_string(),
        memory: field(&read("/proc/meminfo"), "MemTotal")
            .trim_end_matches("kB")
            .trim()
            .parse::<u64>()
            .map_or("unknown".to_string(), |kib| {
                format!("{:.1} GiB", kib as f64 / f64::from(1 << 20))
            }),
        filesystem: filesystem(temp),
    }
}

/// The filesystem holding `path`: the longest mount point that contains it.
fn filesystem(path: &Path) -> String {
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    mounts
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (device, point, kind) = (f.next()?, f.next()?, f.next()?);
            path.starts_with(point)
                .then(|| (point.len(), format!("{kind} ({device} on {point})")))
        })
        .max_by_key(|(len, _)| *len)
        .map_or("unknown".to_string(), |(_, fs)| fs)
}
