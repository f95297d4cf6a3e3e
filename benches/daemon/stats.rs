//! Statistics and formatting: percentiles, ratios, and how durations, counts and sizes
//! are shown.

use std::time::Duration;

use anyhow::{Result, ensure};
use serde_json::{Value, json};

#[derive(Clone, Copy)]
pub struct Stats {
    pub n: usize,
    pub p50: Duration,
    pub p99: Duration,
    mean: Duration,
    max: Duration,
}

impl Stats {
    pub const HEADER: &str = "         n        p50        p99       mean";

    pub fn of(mut samples: Vec<Duration>) -> Result<Stats> {
        ensure!(!samples.is_empty(), "no samples");
        samples.sort_unstable();
        let n = samples.len();
        // Nearest rank.
        let at = |q: f64| samples[((q * n as f64).ceil() as usize).clamp(1, n) - 1];
        Ok(Stats {
            n,
            p50: at(0.50),
            p99: at(0.99),
            mean: samples.iter().sum::<Duration>() / n as u32,
            max: samples[n - 1],
        })
    }

    pub fn row(&self) -> String {
        format!(
            "{:>10}{:>11}{:>11}{:>11}",
            self.n,
            show(self.p50),
            show(self.p99),
            show(self.mean)
        )
    }

    pub fn brief(&self) -> String {
        format!("p50 {}, p99 {}", show(self.p50), show(self.p99))
    }

    pub fn json(&self) -> Value {
        json!({
            "n": self.n,
            "p50_us": us(self.p50),
            "p99_us": us(self.p99),
            "mean_us": us(self.mean),
            "max_us": us(self.max),
        })
    }
}

pub fn median(v: &[Duration]) -> Duration {
    let mut v = v.to_vec();
    v.sort_unstable();
    v[v.len() / 2]
}

pub fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}

pub fn times(x: f64) -> String {
    format!("{x:.2}×")
}

pub fn show(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 1e-3 {
        format!("{:.1} µs", s * 1e6)
    } else if s < 1.0 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{s:.2} s")
    }
}

pub fn us(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e7).round() / 10.0
}

pub fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e5).round() / 100.0
}

/// `1234567` as `1,234,567`.
pub fn count(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
}
