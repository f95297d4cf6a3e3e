//! What the kernel's hold costs a run (issue 34, Measure): `true` and `git status` run by
//! run mode's own `exec::run`, unconfined and confined (as harmless, and as workspace:
//! the plan drawn and the ruleset built for each run, as `runs` does), interleaved in
//! one run so that the machine's noise falls on all alike. Target: confinement adds at
//! most 1 ms at the median per run, reported as the difference and the ratio.
//!
//! `cargo bench --bench confine`; the last lines printed are the figures to quote.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use execgate::config::{Config, Overrides};
use execgate::exec::{self, RunSpec};
use execgate::model::{Command, CommandRef, Confine};
use execgate::policy::confinement::Place;
use execgate::policy::{Policy, Subject};
use execgate::workdir::WorkDir;

const PATH: &str = "/usr/local/bin:/usr/bin:/bin";
const ROUNDS: usize = 300;

fn rounds() -> usize {
    std::env::var("CONFINE_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(ROUNDS)
}

/// One run of `line` in `project`, timed from drawing its plan to its exit.
async fn once(
    policy: &Policy,
    project: &Path,
    tmp: &Path,
    line: &str,
    confine: Confine,
) -> Duration {
    let start = Instant::now();
    let prepared = if confine == Confine::None {
        None
    } else {
        let subject = Subject {
            agent: "bench",
            session: None,
            command: CommandRef::Line(line),
            cwd: Some(project),
            run: true,
            shell: None,
            uid: None,
        };
        let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
        let place = Place {
            path: PATH,
            tmp: (confine != Confine::Harmless).then_some(tmp),
            home: Some(Path::new(&home)),
        };
        let plan = policy
            .confinement_plan(&policy.settings(), subject, confine, &place)
            .expect("a plan")
            .expect("confined");
        let drawn = start.elapsed();
        // As run mode does: a plan with a private temporary directory is built each run.
        let prepared = if confine == Confine::Harmless {
            plan.prepare_cached()
        } else {
            plan.prepare()
        }
        .expect("the kernel takes the plan");
        if std::env::var_os("CONFINE_BENCH_DEBUG").is_some() {
            eprintln!(
                "{confine}: drawn {drawn:?}, prepared {:?}",
                start.elapsed() - drawn
            );
        }
        Some((confine, prepared))
    };
    let spec = RunSpec {
        command: Command::Line(line.into()),
        cwd: WorkDir::open(project).unwrap(),
        input: None,
        timeout: Duration::from_secs(30),
        max_output_bytes: 1 << 20,
        env: vec![
            ("PATH".into(), PATH.into()),
            ("HOME".into(), std::env::var("HOME").unwrap_or_default()),
            ("TMPDIR".into(), tmp.display().to_string()),
        ],
        confine: prepared,
    };
    let result = exec::run(spec).await;
    assert_eq!(
        result.exit_code,
        Some(0),
        "{line} under {confine}: {result:?}"
    );
    start.elapsed()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let Some(abi) = execgate::confine::abi() else {
        eprintln!("confine: this kernel has no Landlock; nothing to measure");
        std::process::exit(1);
    };
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    for i in 0..50 {
        std::fs::write(project.join(format!("src/f{i}.txt")), format!("{i}\n")).unwrap();
    }
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(&project)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&[
        "-c",
        "user.name=b",
        "-c",
        "user.email=b@b",
        "commit",
        "-qm",
        "x",
    ]);
    let env = vec![(
        "EXECGATE_DATABASE".to_string(),
        dir.path().join("state/execgate.db").display().to_string(),
    )];
    let config = Config::load_from(&Overrides::default(), &env).expect("valid config");
    let policy = Policy::new(Arc::new(config)).expect("policy compiles");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    println!(
        "confine: Landlock ABI {abi}, {} rounds per command, interleaved",
        rounds()
    );
    let mut report = Vec::new();
    for line in ["true", "git status"] {
        let kinds = [Confine::None, Confine::Harmless, Confine::Workspace];
        let mut times: Vec<Vec<Duration>> = vec![Vec::new(); kinds.len()];
        runtime.block_on(async {
            // Warm the caches once.
            for kind in kinds {
                once(&policy, &project, &tmp, line, kind).await;
            }
            for round in 0..rounds() {
                // Rotate the order so that no kind always runs first.
                for k in 0..kinds.len() {
                    let i = (k + round) % kinds.len();
                    times[i].push(once(&policy, &project, &tmp, line, kinds[i]).await);
                }
            }
        });
        let medians: Vec<Duration> = times.into_iter().map(median).collect();
        let base = medians[0];
        for (kind, m) in kinds.iter().zip(&medians).skip(1) {
            let diff = m.as_secs_f64() * 1e3 - base.as_secs_f64() * 1e3;
            report.push(format!(
                "confine: `{line}` {kind}: p50 {:.3} ms vs unconfined {:.3} ms: +{diff:.3} ms, ratio {:.2} (target: ≤ +1 ms)",
                m.as_secs_f64() * 1e3,
                base.as_secs_f64() * 1e3,
                m.as_secs_f64() / base.as_secs_f64(),
            ));
        }
    }
    for line in report {
        println!("{line}");
    }
}
