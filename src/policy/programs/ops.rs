//! The operations tools: docker (and `docker compose`), kubectl and systemctl. Each
//! talks to a daemon or a cluster, so what matters is which of its verbs only look
//! (harmless, or the network for a cluster), which change things (configuration), which
//! run code (a container, a pod, an editor) and which destroy (remove, prune, stop,
//! delete, drain).
//!
//! docker 28 (cobra and pflag, read on the installed client): long options exact (no
//! abbreviations), short options clustered, `-o=v` read as `v`. Its global options (`-H`,
//! `--context`, `--config`, `--tls*`) are valid only before the subcommand (`docker ps
//! --context x` is refused), so subcommands do not inherit them. `run`, `create` and
//! `exec` stop reading options at the image or container (the rest is the container's
//! command): read in order. `docker compose` (Compose v2, from its source) has its project
//! options before the subcommand too, and only `--dry-run` after it; `run` and `exec`
//! read in order.
//!
//! kubectl 1.32 (cobra and pflag): exact long options, clustered shorts, its global options
//! valid anywhere (subcommands inherit them); `--dry-run` takes its value only attached.
//! Reading the cluster is the network; what prints secrets is the environment (`get
//! secret -o yaml`, `describe secret`, `config view --raw`, `create token`).
//!
//! systemctl (systemd 252, `getopt_long`: abbreviations, options anywhere): its verb is
//! the first operand; options are valid on either side of it.

use super::profile::Role::{Passthrough, Text};
use super::profile::{
    BASE, Config, ConfigFile, Effect, Finding, Judge, Place, Profile, Reading, Role, Span, Syntax,
    concat,
};
use super::spec::Does;

pub const PROFILES: &[&Profile] = &[&DOCKER, &DOCKER_COMPOSE, &KUBECTL, &SYSTEMCTL];

// ---------------------------------------------------------------------------------------
// docker
// ---------------------------------------------------------------------------------------

const DOCKER: Profile = Profile {
    names: &["docker"],
    syntax: Syntax::Clap,
    options: &[
        "--config=DIR  config: uses another client configuration (and the credentials in it)",
        "-c, --context=NAME  config: talks to another Docker daemon",
        "-D, --debug",
        "-H, --host=HOST  config: talks to another Docker daemon",
        "-l, --log-level=LEVEL",
        "--tls  config: changes how the client reaches the daemon",
        "--tlscacert=FILE  config: changes how the client reaches the daemon",
        "--tlscert=FILE  config: changes how the client reaches the daemon",
        "--tlskey=FILE  config: changes how the client reaches the daemon",
        "--tlsverify  config: changes how the client reaches the daemon",
        "-v, --version",
    ],
    subcommands: &[
        &RUN, &CREATE, &EXEC, &PS, &IMAGES, &LOGS, &INSPECT, &VERSION, &INFO, &STATS, &TOP, &PORT,
        &DIFF, &HISTORY, &SEARCH, &BUILD, &PULL, &PUSH, &LOGIN, &LOGOUT, &RM, &RMI, &KILL, &STOP,
        &START, &RESTART, &CP, &TAG, &PAUSE, &UNPAUSE, &ATTACH, &WAIT, &EVENTS, &SAVE, &LOAD,
        &EXPORT, &IMPORT, &COMMIT, &RENAME, &UPDATE, &CONTAINER, &IMAGE, &VOLUME, &NETWORK,
        &SYSTEM, &CONTEXT, &BUILDER, &COMPOSE,
    ],
    config: Some(&DOCKER_CONFIG),
    // The daemon's socket, as the client finds it without `-H` or a context.
    sockets: &["/var/run/docker.sock", "/run/docker.sock"],
    check: Some(docker_daemon),
    ..BASE
};

/// Every docker subcommand asks the Docker daemon: the machine's
/// (its containers, images and logs lie outside the project, and the daemon acts as
/// root), or another machine's where a context or `DOCKER_HOST` points. Unless a finding
/// says so already (`docker pull` reaches a registry), a human is told; a glob the owner
/// writes (`docker *`) may cover it, as it covers the network.
fn docker_daemon(r: &mut Reading<'_>) {
    // With no subcommand it prints its version or its help.
    let no_subcommand = r.path.is_empty();
    if no_subcommand
        || r.findings
            .iter()
            .any(|f| matches!(f.effect, Effect::Net(_)))
    {
        return;
    }
    r.add(
        Effect::Net(
            "asks the Docker daemon: the machine's containers, outside the project (a context or DOCKER_HOST may put it on another machine)"
                .into(),
        ),
        Span::one(0),
    );
}

/// The client configuration every docker command reads (`$DOCKER_CONFIG/config.json`,
/// by default `~/.docker/config.json`): only keys that change what is printed, and the
/// stored logins, pass. Not `credsStore` and `credHelpers` (programs it runs,
/// `docker-credential-NAME`), `cliPluginsExtraDirs` (where plugins, `docker compose`
/// among them, are found), `aliases`, `features` (hooks), `currentContext` (another
/// daemon), `proxies` (passed into containers).
const DOCKER_CONFIG_JSON: ConfigFile = ConfigFile {
    name: ".docker/config.json",
    place: Place::Home,
    judge: Judge::JsonTop(&[
        "auths",
        "*Format",
        "detachKeys",
        "HttpHeaders",
        "experimental",
    ]),
    why: "the docker client's configuration names programs it runs (credential helpers, plugins) and the daemon it talks to",
    neutralised: false,
};

const DOCKER_CONFIG: Config = Config {
    files: &[DOCKER_CONFIG_JSON],
    env: "`DOCKER_HOST`, `DOCKER_CONTEXT` (another daemon), `DOCKER_CONFIG` (another client configuration), `DOCKER_CERT_PATH`, `DOCKER_TLS_VERIFY`",
    run_env: &[],
};

/// A subcommand of docker, read as docker reads them.
const fn sub(
    names: &'static [&'static str],
    options: &'static [&'static str],
    does: Does,
) -> Profile {
    Profile {
        names,
        syntax: Syntax::Clap,
        options,
        rest: Text,
        does,
        ..BASE
    }
}

/// A group of subcommands (`docker container`, `docker image`).
const fn group(
    names: &'static [&'static str],
    subcommands: &'static [&'static Profile],
) -> Profile {
    Profile {
        names,
        syntax: Syntax::Clap,
        subcommands,
        ..BASE
    }
}

const NONE: &[&str] = &[];

const RUNS: Does = Does::Code("runs a container: the image's code, or the command given");
const REMOVES_CONTAINERS: Does = Does::Danger("removes containers, and what they hold");
const REMOVES_IMAGES: Does = Does::Danger("removes images");

/// `run` and `create` take the image, then the container's command and its arguments.
const RUN: Profile = Profile {
    names: &["run"],
    syntax: Syntax::GnuInOrder,
    options: D_RUN,
    operands: &[Text],
    rest: Passthrough,
    does: RUNS,
    check: Some(container_check),
    ..BASE
};

const CREATE: Profile = Profile {
    names: &["create"],
    options: D_CREATE,
    does: Does::Code("creates a container that runs the image's code when started"),
    ..RUN
};

const EXEC: Profile = Profile {
    names: &["exec"],
    syntax: Syntax::GnuInOrder,
    options: D_EXEC,
    operands: &[Text],
    rest: Passthrough,
    does: Does::Code("runs a command in a running container"),
    check: Some(container_check),
    ..BASE
};

const PS: Profile = sub(&["ps"], D_PS, Does::Nothing);
const CONTAINER_LS: Profile = sub(&["ls", "list", "ps"], D_PS, Does::Nothing);
const IMAGES: Profile = sub(&["images"], D_IMAGES, Does::Nothing);
const IMAGE_LS: Profile = sub(&["ls", "list"], D_IMAGES, Does::Nothing);
const LOGS: Profile = sub(&["logs"], D_LOGS, Does::Nothing);
const INSPECT: Profile = Profile {
    check: Some(inspect_check),
    ..sub(&["inspect"], D_INSPECT, Does::Nothing)
};
const CONTAINER_INSPECT: Profile = Profile {
    check: Some(inspect_check),
    ..sub(&["inspect"], D_CONTAINER_INSPECT, Does::Nothing)
};
const VERSION: Profile = sub(&["version"], D_FORMAT, Does::Nothing);
const INFO: Profile = sub(&["info"], D_FORMAT, Does::Nothing);
const STATS: Profile = sub(&["stats"], D_STATS, Does::Nothing);
/// `docker top CONTAINER [ps OPTIONS]`: the rest is for `ps`.
const TOP: Profile = Profile {
    syntax: Syntax::GnuInOrder,
    check: Some(no_abbreviations),
    ..sub(&["top"], NONE, Does::Nothing)
};
const PORT: Profile = sub(&["port"], NONE, Does::Nothing);
const DIFF: Profile = sub(&["diff"], NONE, Does::Nothing);
const HISTORY: Profile = sub(&["history"], D_HISTORY, Does::Nothing);
const SEARCH: Profile = sub(&["search"], D_SEARCH, Does::Net("searches Docker Hub"));
const BUILD: Profile = Profile {
    check: Some(build_check),
    ..sub(
        &["build"],
        D_BUILD,
        Does::Code("builds an image, running the Dockerfile's instructions"),
    )
};
const PULL: Profile = sub(
    &["pull"],
    D_PULL,
    Does::Net("downloads an image from a registry"),
);
const PUSH: Profile = sub(
    &["push"],
    D_PUSH,
    Does::Net("uploads an image to a registry"),
);
const LOGIN: Profile = sub(
    &["login"],
    D_LOGIN,
    Does::Config("stores registry credentials in Docker's configuration"),
);
const LOGOUT: Profile = sub(
    &["logout"],
    NONE,
    Does::Config("removes stored registry credentials"),
);
const RM: Profile = sub(&["rm"], D_RM, REMOVES_CONTAINERS);
const CONTAINER_RM: Profile = sub(&["rm", "remove"], D_RM, REMOVES_CONTAINERS);
const RMI: Profile = sub(&["rmi"], D_RMI, REMOVES_IMAGES);
const IMAGE_RM: Profile = sub(&["rm", "remove"], D_RMI, REMOVES_IMAGES);
const KILL: Profile = sub(&["kill"], D_KILL, Does::Danger("kills containers"));
const STOP: Profile = sub(&["stop"], D_STOP, Does::Danger("stops containers"));
const START: Profile = sub(
    &["start"],
    D_START,
    Does::Code("starts containers, which run their code"),
);
const RESTART: Profile = sub(
    &["restart"],
    D_STOP,
    Does::Danger("stops containers and starts them again"),
);
const CP: Profile = Profile {
    check: Some(cp_check),
    ..sub(&["cp"], D_CP, Does::Nothing)
};
const TAG: Profile = sub(&["tag"], NONE, Does::Config("tags an image"));
const PAUSE: Profile = sub(
    &["pause"],
    NONE,
    Does::Config("freezes containers' processes"),
);
const UNPAUSE: Profile = sub(
    &["unpause"],
    NONE,
    Does::Config("resumes containers' processes"),
);
const ATTACH: Profile = sub(
    &["attach"],
    D_ATTACH,
    Does::Code("attaches this terminal's input to a running container"),
);
const WAIT: Profile = sub(&["wait"], NONE, Does::Nothing);
const EVENTS: Profile = sub(&["events"], D_EVENTS, Does::Nothing);
const SAVE: Profile = sub(&["save"], D_SAVE, Does::Nothing);
const LOAD: Profile = sub(&["load"], D_LOAD, Does::Config("loads images into Docker"));
const EXPORT: Profile = sub(&["export"], D_EXPORT, Does::Nothing);
const IMPORT: Profile = Profile {
    check: Some(import_check),
    ..sub(&["import"], D_IMPORT, Does::Config("creates an image"))
};
const COMMIT: Profile = sub(
    &["commit"],
    D_COMMIT,
    Does::Config("creates an image from a container"),
);
const RENAME: Profile = sub(&["rename"], NONE, Does::Config("renames a container"));
const UPDATE: Profile = sub(
    &["update"],
    D_UPDATE,
    Does::Config("changes containers' resource limits and restart policy"),
);

const CONTAINER: Profile = group(
    &["container"],
    &[
        &RUN,
        &CREATE,
        &EXEC,
        &CONTAINER_LS,
        &CONTAINER_INSPECT,
        &LOGS,
        &STATS,
        &TOP,
        &PORT,
        &DIFF,
        &CONTAINER_RM,
        &KILL,
        &STOP,
        &START,
        &RESTART,
        &CP,
        &PAUSE,
        &UNPAUSE,
        &ATTACH,
        &WAIT,
        &EXPORT,
        &COMMIT,
        &RENAME,
        &UPDATE,
        &sub(
            &["prune"],
            D_CONTAINER_PRUNE,
            Does::Danger("removes every stopped container"),
        ),
    ],
);

const IMAGE: Profile = group(
    &["image"],
    &[
        &IMAGE_LS,
        &sub(&["inspect"], D_IMAGE_INSPECT, Does::Nothing),
        &HISTORY,
        &IMAGE_RM,
        &sub(
            &["prune"],
            D_IMAGE_PRUNE,
            Does::Danger("removes unused images"),
        ),
        &PULL,
        &PUSH,
        &BUILD,
        &TAG,
        &SAVE,
        &LOAD,
        &IMPORT,
    ],
);

const VOLUME: Profile = group(
    &["volume"],
    &[
        &sub(&["ls", "list"], D_VOLUME_LS, Does::Nothing),
        &sub(&["inspect"], D_FORMAT, Does::Nothing),
        &sub(
            &["create"],
            D_VOLUME_CREATE,
            Does::Config("creates a volume"),
        ),
        &sub(
            &["rm", "remove"],
            D_FORCE,
            Does::Danger("removes volumes, and the data in them"),
        ),
        &sub(
            &["prune"],
            D_VOLUME_PRUNE,
            Does::Danger("removes unused volumes, and the data in them"),
        ),
    ],
);

const NETWORK: Profile = group(
    &["network"],
    &[
        &sub(&["ls", "list"], D_NETWORK_LS, Does::Nothing),
        &sub(&["inspect"], D_NETWORK_INSPECT, Does::Nothing),
        &sub(
            &["create"],
            D_NETWORK_CREATE,
            Does::Config("creates a network"),
        ),
        &sub(&["rm", "remove"], D_FORCE, Does::Danger("removes networks")),
        &sub(
            &["prune"],
            D_NETWORK_PRUNE,
            Does::Danger("removes unused networks"),
        ),
        &sub(
            &["connect"],
            D_NETWORK_CONNECT,
            Does::Config("connects a container to a network"),
        ),
        &sub(
            &["disconnect"],
            D_FORCE,
            Does::Config("disconnects a container from a network"),
        ),
    ],
);

const SYSTEM: Profile = group(
    &["system"],
    &[
        &sub(&["df"], D_SYSTEM_DF, Does::Nothing),
        &INFO,
        &EVENTS,
        &sub(
            &["prune"],
            D_SYSTEM_PRUNE,
            Does::Danger("removes stopped containers, unused networks, images and build cache"),
        ),
    ],
);

const CONTEXT: Profile = group(
    &["context"],
    &[
        &sub(&["ls", "list"], D_CONTEXT_LS, Does::Nothing),
        &sub(&["show"], NONE, Does::Nothing),
        &sub(&["inspect"], D_FORMAT, Does::Nothing),
        &sub(
            &["use"],
            NONE,
            Does::Config("switches the Docker daemon every later command talks to"),
        ),
        &sub(
            &["create"],
            D_CONTEXT_CREATE,
            Does::Config("creates a context"),
        ),
        &sub(&["rm", "remove"], D_FORCE, Does::Config("removes contexts")),
    ],
);

const BUILDER: Profile = group(
    &["builder"],
    &[
        &sub(
            &["prune"],
            D_BUILDER_PRUNE,
            Does::Danger("removes the build cache"),
        ),
        &BUILD,
    ],
);

/// Host paths a container must not be given: the root, the Docker socket and the
/// directories that hold the host's own configuration, devices and processes.
fn host_critical(path: &str) -> bool {
    let p = path.trim_end_matches('/');
    p.is_empty()
        || p.contains("docker.sock")
        || [
            "/etc",
            "/root",
            "/run",
            "/var/run",
            "/proc",
            "/sys",
            "/dev",
            "/boot",
            "/home",
            "/var/lib/docker",
            "/usr",
            "/bin",
            "/sbin",
            "/lib",
        ]
        .contains(&p)
}

/// A bind mount of `host` into a container: critical host paths are danger; any other
/// is read, or written unless mounted read-only.
fn bind_effect(host: &str, read_only: bool, shown: &str) -> Effect {
    if host_critical(host) {
        Effect::Danger(format!("`{shown}` gives the container the host's `{host}`"))
    } else if read_only {
        Effect::Reads(host.to_string())
    } else {
        Effect::Writes(host.to_string())
    }
}

/// A host path as a mount names it: anything but a volume's name
/// (`[A-Za-z0-9][A-Za-z0-9_.-]*`), which docker reads as a path to bind.
fn host_path(source: &str) -> bool {
    let mut bytes = source.bytes();
    !(bytes.next().is_some_and(|b| b.is_ascii_alphanumeric())
        && bytes.all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b)))
}

/// `-v HOST:CONTAINER[:OPTIONS]`: a bind mount when the first part is a path.
fn volume_effect(v: &str) -> Option<Effect> {
    let parts: Vec<&str> = v.split(':').collect();
    if parts.len() < 2 || !host_path(parts[0]) {
        return None;
    }
    let read_only = parts
        .get(2)
        .is_some_and(|o| o.split(',').any(|o| o == "ro" || o == "readonly"));
    Some(bind_effect(parts[0], read_only, &format!("-v {v}")))
}

/// `--mount type=bind,source=HOST,target=…[,readonly]`.
fn mount_effect(v: &str) -> Option<Effect> {
    let mut kind = "volume";
    let mut source = None;
    let mut read_only = false;
    for field in v.split(',') {
        let (k, val) = field.split_once('=').unwrap_or((field, ""));
        match k.trim() {
            "type" => kind = val,
            "source" | "src" => source = Some(val),
            "readonly" | "ro" => read_only = !matches!(val, "false" | "0"),
            _ => {}
        }
    }
    match (kind, source) {
        ("bind", Some(s)) => Some(bind_effect(s, read_only, &format!("--mount {v}"))),
        ("bind", None) => Some(Effect::Unknown(format!(
            "`--mount {v}`: a bind mount execgate cannot read the source of"
        ))),
        _ => None,
    }
}

/// `run`, `create`, `exec` and `top` are read in order, by the reader that also knows
/// abbreviations; docker takes none: it refuses the word, and so the command.
fn no_abbreviations(r: &mut Reading<'_>) {
    let Some(at) = r
        .findings
        .iter()
        .find(|f| matches!(&f.effect, Effect::Unknown(s) if s.contains("accepts abbreviations")))
        .map(|f| f.at)
    else {
        return;
    };
    r.findings.retain(|f| f.at != at);
    let word = r.words[at.first].clone();
    r.add(
        Effect::Unknown(format!(
            "`{word}` is not a docker option (docker takes no abbreviations, and refuses the command)"
        )),
        at,
    );
}

/// What a container is given of the host: its namespaces, its files, its security.
fn container_check(r: &mut Reading<'_>) {
    no_abbreviations(r);
    let mut found: Vec<(Effect, Span)> = Vec::new();
    for g in &r.given {
        let Some(v) = g.value else { continue };
        let key = g.opt.key();
        let effect = match key {
            "pid" | "ipc" | "uts" | "userns" | "cgroupns" | "network" | "net" if v == "host" => {
                Some(Effect::Danger(format!(
                    "`--{key}=host` shares the host's {} with the container",
                    match key {
                        "pid" => "processes",
                        "ipc" => "shared memory",
                        "uts" => "host name",
                        "userns" => "user namespace (its root is the host's root)",
                        "cgroupns" => "control groups",
                        _ => "network, and every service listening on it",
                    }
                )))
            }
            "security-opt" if v.contains("unconfined") || v.contains("disable") => {
                Some(Effect::Danger(format!(
                    "`--security-opt {v}` turns off the container's confinement"
                )))
            }
            "volume" => volume_effect(v),
            "mount" => mount_effect(v),
            _ => None,
        };
        if let Some(e) = effect {
            found.push((e, g.at));
        }
    }
    for (e, at) in found {
        r.add(e, at);
    }
}

/// A Go template that prints only fields known to hold no environment and no secret:
/// `{{.State.Status}}`, `{{json .NetworkSettings}}`. A field is vouched for by name, not
/// refused by name: a service's `{{json .Spec}}` holds its containers' environment, and a
/// name execgate does not know may too.
fn narrow_template(format: &str) -> bool {
    let mut rest = format;
    let mut any = false;
    while let Some(i) = rest.find("{{") {
        let after = &rest[i + 2..];
        let Some(j) = after.find("}}") else {
            return false;
        };
        let action = after[..j].trim().trim_matches('-').trim();
        let field = action.strip_prefix("json ").unwrap_or(action).trim();
        let plain = field.len() > 1
            && field.starts_with('.')
            && field
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_')
            && harmless_field(&field[1..]);
        if !plain {
            return false;
        }
        any = true;
        rest = &after[j + 2..];
    }
    any
}

/// Whether an inspected object's field (`State.Status`), and everything under it, holds
/// neither environment variables nor secrets: its state, identity, network and storage,
/// and the few parts of its configuration that are names and numbers.
fn harmless_field(field: &str) -> bool {
    const WHOLE: &[&str] = &[
        "State",
        "Id",
        "ID",
        "Name",
        "Created",
        "Image",
        "RestartCount",
        "Platform",
        "Driver",
        "NetworkSettings",
        "Mounts",
        "SizeRw",
        "SizeRootFs",
        "Status",
        "Endpoint",
        "UpdatedAt",
        "CreatedAt",
        "Version",
    ];
    const PARTS: &[&str] = &[
        "Config.Image",
        "Config.Hostname",
        "Config.WorkingDir",
        "Config.User",
        "Config.ExposedPorts",
        "HostConfig.RestartPolicy",
        "HostConfig.NetworkMode",
        "HostConfig.PortBindings",
        "HostConfig.Memory",
        "HostConfig.NanoCpus",
        "Spec.Name",
        "Spec.Mode",
    ];
    let under = |known: &str| {
        field == known
            || field
                .strip_prefix(known)
                .is_some_and(|rest| rest.starts_with('.'))
    };
    WHOLE.iter().any(|k| under(k)) || PARTS.iter().any(|k| under(k))
}

/// `docker inspect` prints a container's whole configuration, its environment variables
/// (and the secrets often passed in them) included, unless a narrow `--format` picks
/// other fields or the objects are of a kind without an environment.
fn inspect_check(r: &mut Reading<'_>) {
    if r.value("type")
        .is_some_and(|t| matches!(t, "image" | "network" | "volume" | "node" | "secret"))
    {
        return;
    }
    if r.value("format").is_some_and(narrow_template) {
        return;
    }
    let at = r.to_end(0);
    r.add(
        Effect::Env(
            "`inspect` prints containers' configuration, their environment variables (often secrets) included"
                .into(),
        ),
        at,
    );
}

/// `docker build PATH|URL|-`: the context is read as a whole tree and sent to the
/// daemon; BuildKit's `--secret`, `--ssh`, `--output` and `--allow` reach further.
fn build_check(r: &mut Reading<'_>) {
    r.set_roles(&[], Text);
    let mut found: Vec<(Effect, Span)> = Vec::new();
    for &(i, w) in &r.operands {
        if w == "-" {
            continue;
        }
        let effect = if w.contains("://") || w.starts_with("git@") || w.starts_with("github.com/") {
            Effect::Net(format!("`build` fetches its context from `{w}`"))
        } else {
            Effect::ReadsTree(w.to_string())
        };
        found.push((effect, Span::one(i)));
    }
    for g in &r.given {
        let Some(v) = g.value else { continue };
        let fields = || {
            v.split(',')
                .filter_map(|f| f.split_once('='))
                .collect::<Vec<_>>()
        };
        let field = |names: &[&str]| {
            fields()
                .into_iter()
                .find(|(k, _)| names.contains(k))
                .map(|(_, v)| v.to_string())
        };
        let effect = match g.opt.key() {
            "secret" => match (field(&["src", "source"]), field(&["env"])) {
                (Some(src), _) => Some(Effect::Reads(src)),
                (None, Some(var)) => Some(Effect::Env(format!(
                    "`--secret` gives the build the environment variable `{var}`"
                ))),
                _ => Some(Effect::Env(format!(
                    "`--secret {v}` gives the build a secret from the environment or a file"
                ))),
            },
            "output" => match field(&["dest"]) {
                Some(dest) => Some(Effect::Writes(dest)),
                None if !v.contains('=') && v != "-" => Some(Effect::Writes(v.to_string())),
                None => None,
            },
            "cache-to" => field(&["dest"]).map(Effect::Writes),
            "build-context" => v
                .split_once('=')
                .map(|(_, p)| p)
                .filter(|p| host_path(p))
                .map(|p| Effect::ReadsTree(p.to_string())),
            "allow" => Some(Effect::Danger(format!(
                "`--allow {v}` lets the build reach the host (host network, privileged steps)"
            ))),
            "network" if v == "host" => Some(Effect::Danger(
                "`--network=host` gives the build's steps the host's network".into(),
            )),
            _ => None,
        };
        if let Some(e) = effect {
            found.push((e, g.at));
        }
    }
    for (e, at) in found {
        r.add(e, at);
    }
}

/// docker's `splitCpArg`: `CONTAINER:PATH`, unless the word is absolute or what comes
/// before the colon starts with `.`.
fn container_side(arg: &str) -> Option<(&str, &str)> {
    if arg.starts_with('/') {
        return None;
    }
    let (ctr, path) = arg.split_once(':')?;
    (!ctr.starts_with('.')).then_some((ctr, path))
}

/// `cp SRC DEST`: one side is a container. Copying out writes the local destination
/// (`-` is a tar stream on standard output); copying in reads the local tree (`-` is
/// standard input) and writes into the container.
fn cp_check(r: &mut Reading<'_>) {
    r.set_roles(&[], Text);
    let ops: Vec<(usize, &str)> = r.operands.clone();
    let [(si, src), (di, dst)] = ops.as_slice() else {
        let at = r.to_end(0);
        r.add(
            Effect::Unknown("`cp` takes a source and a destination".into()),
            at,
        );
        return;
    };
    let (si, di) = (*si, *di);
    match (container_side(src), container_side(dst)) {
        (Some(_), None) => {
            if *dst != "-" {
                r.add(Effect::Writes(dst.to_string()), Span::one(di));
            }
        }
        (None, Some(_)) => {
            if *src != "-" {
                r.add(Effect::ReadsTree(src.to_string()), Span::one(si));
            }
            r.add(Effect::Writes(dst.to_string()), Span::one(di));
        }
        _ => r.add(
            Effect::Unknown(format!(
                "`cp {src} {dst}`: exactly one side must be a container"
            )),
            Span {
                first: si,
                last: di,
            },
        ),
    }
}

/// `import file|URL|- [REPOSITORY[:TAG]]`.
fn import_check(r: &mut Reading<'_>) {
    r.set_roles(&[], Text);
    if let Some(&(i, source)) = r.operands.first() {
        let effect = if source == "-" {
            None
        } else if source.contains("://") {
            Some(Effect::Net(format!("`import` downloads `{source}`")))
        } else {
            Some(Effect::Reads(source.to_string()))
        };
        if let Some(e) = effect {
            r.add(e, Span::one(i));
        }
    }
}

// ---------------------------------------------------------------------------------------
// docker compose
// ---------------------------------------------------------------------------------------

/// Compose's project options, valid before the subcommand only.
const COMPOSE_OPTIONS: &[&str] = &[
    "--all-resources",
    "--ansi=WHEN",
    "--compatibility",
    "--dry-run",
    "--env-file=FILE  reads",
    "-f, --file=FILE  reads",
    "--parallel=N",
    "--profile=PROFILE",
    "--progress=TYPE",
    "--project-directory=DIR  config: uses the Compose project of another directory",
    "-p, --project-name=NAME",
    "--insecure-registry=REGISTRY  config: pulls Compose artifacts from a registry without TLS",
    "--workdir=DIR  config: uses the Compose project of another directory",
    "-v, --version",
    "--no-ansi",
    "--verbose",
];

const COMPOSE_SUBCOMMANDS: &[&Profile] = &[
    &compose(
        &["up"],
        C_UP,
        Does::Code("starts the project's services: builds and runs their containers"),
    ),
    &compose(
        &["down"],
        C_DOWN,
        Does::Danger("stops and removes the project's containers and networks"),
    ),
    &Profile {
        syntax: Syntax::GnuInOrder,
        operands: &[Text],
        rest: Passthrough,
        check: Some(container_check),
        ..compose(
            &["run"],
            C_RUN,
            Does::Code("runs a one-off container of a service"),
        )
    },
    &Profile {
        syntax: Syntax::GnuInOrder,
        operands: &[Text],
        rest: Passthrough,
        check: Some(container_check),
        ..compose(
            &["exec"],
            C_EXEC,
            Does::Code("runs a command in a service's container"),
        )
    },
    &compose(
        &["build"],
        C_BUILD,
        Does::Code("builds the services' images, running their Dockerfiles"),
    ),
    &compose(
        &["create"],
        C_CREATE,
        Does::Code("creates the services' containers (building images)"),
    ),
    &compose(
        &["start"],
        C_START,
        Does::Code("starts the services' containers"),
    ),
    &compose(
        &["restart"],
        C_RESTART,
        Does::Danger("stops the services' containers and starts them again"),
    ),
    &compose(
        &["stop"],
        C_STOP,
        Does::Danger("stops the services' containers"),
    ),
    &compose(
        &["kill"],
        C_KILL,
        Does::Danger("kills the services' containers"),
    ),
    &compose(
        &["rm"],
        C_RM,
        Does::Danger("removes the services' stopped containers"),
    ),
    &compose(
        &["pause"],
        C_PAUSE,
        Does::Config("freezes the services' containers"),
    ),
    &compose(
        &["unpause"],
        C_UNPAUSE,
        Does::Config("resumes the services' containers"),
    ),
    &compose(
        &["scale"],
        C_SCALE,
        Does::Code("starts or stops containers to scale services"),
    ),
    &compose(
        &["watch"],
        C_WATCH,
        Does::Code("rebuilds and restarts services as files change"),
    ),
    &compose(
        &["attach"],
        C_ATTACH,
        Does::Code("attaches this terminal's input to a service's container"),
    ),
    &compose(
        &["commit"],
        C_COMMIT,
        Does::Config("creates an image from a service's container"),
    ),
    &Profile {
        check: Some(cp_check),
        ..compose(&["cp"], C_CP, Does::Nothing)
    },
    &compose(&["export"], C_EXPORT, Does::Nothing),
    &compose(
        &["pull"],
        C_PULL,
        Does::Net("downloads the services' images"),
    ),
    &compose(&["push"], C_PUSH, Does::Net("uploads the services' images")),
    &Profile {
        check: Some(compose_config_check),
        ..compose(&["config"], C_CONFIG, Does::Nothing)
    },
    &compose(&["ps"], C_PS, Does::Nothing),
    &compose(&["ls"], C_LS, Does::Nothing),
    &compose(&["logs"], C_LOGS, Does::Nothing),
    &compose(&["images"], C_IMAGES, Does::Nothing),
    &compose(&["top"], C_TOP, Does::Nothing),
    &compose(&["port"], C_PORT, Does::Nothing),
    &compose(&["events"], C_EVENTS, Does::Nothing),
    &compose(&["stats"], C_STATS, Does::Nothing),
    &compose(&["version"], C_VERSION, Does::Nothing),
    &compose(&["volumes"], C_VOLUMES, Does::Nothing),
    &compose(&["wait"], C_WAIT, Does::Nothing),
];

const COMPOSE: Profile = Profile {
    names: &["compose"],
    syntax: Syntax::Clap,
    options: COMPOSE_OPTIONS,
    subcommands: COMPOSE_SUBCOMMANDS,
    config: Some(&COMPOSE_CONFIG),
    ..BASE
};

/// The standalone `docker-compose` is the same program, found on `PATH` rather than as
/// a plugin; it reads the docker client's configuration too.
const DOCKER_COMPOSE: Profile = Profile {
    names: &["docker-compose"],
    config: Some(&DOCKER_COMPOSE_CONFIG),
    check: Some(docker_daemon),
    ..COMPOSE
};

const COMPOSE_FILE_WHY: &str = "a compose file reads other files into the project (`env_file`, `include`, `extends`, a secret's `file`), which `docker compose config` prints";

/// A compose file compose finds from the working directory up (the first of these
/// names, and its override file beside it).
const fn compose_file(name: &'static str) -> ConfigFile {
    ConfigFile {
        name,
        place: Place::Up,
        judge: Judge::YamlRefuses(&["env_file", "include", "extends", "file", "label_file"]),
        why: COMPOSE_FILE_WHY,
        neutralised: false,
    }
}

/// The project's files: the compose files and, beside them, `.env`, whose `COMPOSE_*`
/// and `DOCKER_*` variables compose takes as its own settings (`COMPOSE_FILE`: other
/// compose files; `DOCKER_HOST`: another daemon). Other variables only fill in the
/// compose file's `${…}`, whose keys are judged.
const COMPOSE_PROJECT: [ConfigFile; 9] = [
    compose_file("compose.yaml"),
    compose_file("compose.yml"),
    compose_file("docker-compose.yaml"),
    compose_file("docker-compose.yml"),
    compose_file("compose.override.yaml"),
    compose_file("compose.override.yml"),
    compose_file("docker-compose.override.yaml"),
    compose_file("docker-compose.override.yml"),
    ConfigFile {
        name: ".env",
        place: Place::Up,
        judge: Judge::DotenvRefuses(&["COMPOSE_*", "DOCKER_*", "BUILDKIT_*", "BUILDX_*"]),
        why: "compose takes `COMPOSE_*` and `DOCKER_*` in the project's `.env` as its own settings (other compose files, another daemon)",
        neutralised: false,
    },
];

const COMPOSE_ENV: &str = "`COMPOSE_FILE`, `COMPOSE_PROJECT_NAME`, `COMPOSE_PROFILES`, `COMPOSE_ENV_FILES`, `DOCKER_HOST`, and every variable a compose file's `${…}` names";

/// `docker compose` is a plugin of the docker client, found first in
/// `~/.docker/cli-plugins/`: one there is the program that runs.
const COMPOSE_CONFIG: Config = Config {
    files: &concat_files::<10>(
        &COMPOSE_PROJECT,
        &[ConfigFile {
            name: ".docker/cli-plugins/docker-compose",
            place: Place::Home,
            judge: Judge::Exists,
            why: "the docker client runs `docker compose` from the home directory's plugins first",
            neutralised: false,
        }],
    ),
    env: COMPOSE_ENV,
    run_env: &[],
};

const DOCKER_COMPOSE_CONFIG: Config = Config {
    files: &concat_files::<10>(&COMPOSE_PROJECT, &[DOCKER_CONFIG_JSON]),
    env: COMPOSE_ENV,
    run_env: &[],
};

/// `a` then `b`, at compile time.
const fn concat_files<const N: usize>(a: &[ConfigFile], b: &[ConfigFile]) -> [ConfigFile; N] {
    let mut out = [DOCKER_CONFIG_JSON; N];
    let mut i = 0;
    while i < N {
        out[i] = if i < a.len() { a[i] } else { b[i - a.len()] };
        i += 1;
    }
    out
}

const fn compose(
    names: &'static [&'static str],
    options: &'static [&'static str],
    does: Does,
) -> Profile {
    sub(names, options, does)
}

/// `compose config` prints the project with the environment (`.env`, the shell's)
/// interpolated into it, unless it prints only names or validates.
fn compose_config_check(r: &mut Reading<'_>) {
    let names_only = [
        "quiet", "services", "volumes", "images", "profiles", "networks", "hash", "models",
    ]
    .iter()
    .any(|k| r.has(k));
    let prints_env = r.has("environment") || r.has("variables");
    if names_only && !prints_env {
        return;
    }
    let at = r.to_end(0);
    r.add(
        Effect::Env(
            "`config` prints the project with environment variables (often secrets) filled in"
                .into(),
        ),
        at,
    );
}

// The option lists, as each subcommand's `--help` (docker 28.2) shows them.

/// `docker run`.
/// `docker run`: `docker create`'s options and the three about detaching.
const D_RUN: &[&str] = &concat::<{ D_CREATE.len() + 3 }>(
    D_CREATE,
    &["-d, --detach", "--detach-keys=V", "--sig-proxy"],
);

/// `docker create`.
const D_CREATE: &[&str] = &[
    "--add-host=V",
    "--annotation=V",
    "-a, --attach=V",
    "--blkio-weight=V",
    "--blkio-weight-device=V",
    "--cap-add=V  danger: gives the container extra kernel capabilities",
    "--cap-drop=V",
    "--cgroup-parent=V",
    "--cgroupns=V",
    "--cidfile=V  writes",
    "--cpu-count=V",
    "--cpu-percent=V",
    "--cpu-period=V",
    "--cpu-quota=V",
    "--cpu-rt-period=V",
    "--cpu-rt-runtime=V",
    "-c, --cpu-shares=V",
    "--cpus=V",
    "--cpuset-cpus=V",
    "--cpuset-mems=V",
    "--device=V  danger: gives the container a device of the host",
    "--device-cgroup-rule=V",
    "--device-read-bps=V",
    "--device-read-iops=V",
    "--device-write-bps=V",
    "--device-write-iops=V",
    "--disable-content-trust",
    "--dns=V",
    "--dns-option=V",
    "--dns-search=V",
    "--domainname=V",
    "--entrypoint=V",
    "-e, --env=V",
    "--env-file=V  reads",
    "--expose=V",
    "--gpus=V",
    "--group-add=V",
    "--health-cmd=V",
    "--health-interval=V",
    "--health-retries=V",
    "--health-start-interval=V",
    "--health-start-period=V",
    "--health-timeout=V",
    "-h, --hostname=V",
    "--init",
    "-i, --interactive",
    "--io-maxbandwidth=V",
    "--io-maxiops=V",
    "--ip=V",
    "--ip6=V",
    "--ipc=V",
    "--isolation=V",
    "--kernel-memory=V",
    "-l, --label=V",
    "--label-file=V  reads",
    "--link=V",
    "--link-local-ip=V",
    "--log-driver=V",
    "--log-opt=V",
    "--mac-address=V",
    "-m, --memory=V",
    "--memory-reservation=V",
    "--memory-swap=V",
    "--memory-swappiness=V",
    "--mount=V",
    "--name=V",
    "--network=V",
    "--network-alias=V",
    "--net=V",
    "--net-alias=V",
    "--no-healthcheck",
    "--oom-kill-disable",
    "--oom-score-adj=V",
    "--pid=V",
    "--pids-limit=V",
    "--platform=V",
    "--privileged  danger: gives the container full access to the host",
    "-p, --publish=V",
    "-P, --publish-all",
    "--pull=V",
    "-q, --quiet",
    "--read-only",
    "--restart=V",
    "--rm",
    "--runtime=V",
    "--security-opt=V",
    "--shm-size=V",
    "--stop-signal=V",
    "--stop-timeout=V",
    "--storage-opt=V",
    "--sysctl=V",
    "--tmpfs=V",
    "-t, --tty",
    "--ulimit=V",
    "--use-api-socket  danger: gives the container Docker's API socket, and with it the host",
    "-u, --user=V",
    "--userns=V",
    "--uts=V",
    "-v, --volume=V",
    "--volume-driver=V",
    "--volumes-from=V",
    "-w, --workdir=V",
];

/// `docker exec`.
const D_EXEC: &[&str] = &[
    "-d, --detach",
    "--detach-keys=V",
    "-e, --env=V",
    "--env-file=V  reads",
    "-i, --interactive",
    "--privileged  danger: gives the container full access to the host",
    "-t, --tty",
    "-u, --user=V",
    "-w, --workdir=V",
];

/// `docker ps`.
const D_PS: &[&str] = &[
    "-a, --all",
    "-f, --filter=V",
    "--format=V",
    "-n, --last=V",
    "-l, --latest",
    "--no-trunc",
    "-q, --quiet",
    "-s, --size",
];

/// `docker images`.
const D_IMAGES: &[&str] = &[
    "-a, --all",
    "--digests",
    "-f, --filter=V",
    "--format=V",
    "--no-trunc",
    "-q, --quiet",
    "--tree",
];

/// `docker logs`.
const D_LOGS: &[&str] = &[
    "--details",
    "-f, --follow  follows",
    "--since=V",
    "-n, --tail=V",
    "-t, --timestamps",
    "--until=V",
];

/// `docker inspect`.
const D_INSPECT: &[&str] = &["-f, --format=V", "-s, --size", "--type=V"];

/// `docker version`.
const D_FORMAT: &[&str] = &["-f, --format=V"];

/// `docker stats`.
const D_STATS: &[&str] = &["-a, --all", "--format=V", "--no-stream", "--no-trunc"];

/// `docker history`.
const D_HISTORY: &[&str] = &[
    "--format=V",
    "-H, --human",
    "--no-trunc",
    "--platform=V",
    "-q, --quiet",
];

/// `docker search`.
const D_SEARCH: &[&str] = &["-f, --filter=V", "--format=V", "--limit=V", "--no-trunc"];

/// `docker build`.
const D_BUILD: &[&str] = &[
    "--add-host=V",
    "--build-arg=V",
    "--cache-from=V",
    "--cgroup-parent=V",
    "--compress",
    "--cpu-period=V",
    "--cpu-quota=V",
    "-c, --cpu-shares=V",
    "--cpuset-cpus=V",
    "--cpuset-mems=V",
    "--disable-content-trust",
    "-f, --file=V  reads",
    "--force-rm",
    "--iidfile=V  writes",
    "--isolation=V",
    "--label=V",
    "-m, --memory=V",
    "--memory-swap=V",
    "--network=V",
    "--no-cache",
    "--platform=V",
    "--pull",
    "-q, --quiet",
    "--rm",
    "--security-opt=V",
    "--shm-size=V",
    "--squash",
    "-t, --tag=V",
    "--target=V",
    "--ulimit=V",
    // BuildKit (`docker buildx build`, which `docker build` is when buildx is installed).
    "--allow=V",
    "--annotation=V",
    "--attest=V",
    "--build-context=V",
    "--builder=V",
    "--cache-to=V",
    "--call=V",
    "--check",
    "-D, --debug",
    "--load",
    "--metadata-file=V  writes",
    "--no-cache-filter=V",
    "-o, --output=V",
    "--policy=V",
    "--progress=V",
    "--provenance=V",
    "--push  net: pushes the image it builds",
    "--resource=V",
    "--sbom=V",
    "--secret=V",
    "--ssh=V  env: gives the build your SSH agent or keys",
];

/// `docker pull`.
const D_PULL: &[&str] = &[
    "-a, --all-tags",
    "--disable-content-trust",
    "--platform=V",
    "-q, --quiet",
];

/// `docker push`.
const D_PUSH: &[&str] = &[
    "-a, --all-tags",
    "--disable-content-trust",
    "--platform=V",
    "-q, --quiet",
];

/// `docker login`.
const D_LOGIN: &[&str] = &["-p, --password=V", "--password-stdin", "-u, --username=V"];

/// `docker rm`.
const D_RM: &[&str] = &["-f, --force", "-l, --link", "-v, --volumes"];

/// `docker rmi`.
const D_RMI: &[&str] = &["-f, --force", "--no-prune", "--platform=V"];

/// `docker kill`.
const D_KILL: &[&str] = &["-s, --signal=V"];

/// `docker stop`.
const D_STOP: &[&str] = &["-s, --signal=V", "-t, --timeout=V"];

/// `docker start`.
const D_START: &[&str] = &[
    "-a, --attach",
    "--checkpoint=V",
    "--checkpoint-dir=V",
    "--detach-keys=V",
    "-i, --interactive",
];

/// `docker cp`.
const D_CP: &[&str] = &["-a, --archive", "-L, --follow-link", "-q, --quiet"];

/// `docker attach`.
const D_ATTACH: &[&str] = &["--detach-keys=V", "--no-stdin", "--sig-proxy"];

/// `docker events`.
const D_EVENTS: &[&str] = &["-f, --filter=V", "--format=V", "--since=V", "--until=V"];

/// `docker save`.
const D_SAVE: &[&str] = &["-o, --output=V  writes", "--platform=V"];

/// `docker load`.
const D_LOAD: &[&str] = &["-i, --input=V  reads", "--platform=V", "-q, --quiet"];

/// `docker export`.
const D_EXPORT: &[&str] = &["-o, --output=V  writes"];

/// `docker import`.
const D_IMPORT: &[&str] = &["-c, --change=V", "-m, --message=V", "--platform=V"];

/// `docker commit`.
const D_COMMIT: &[&str] = &[
    "-a, --author=V",
    "-c, --change=V",
    "-m, --message=V",
    "-p, --pause",
];

/// `docker update`.
const D_UPDATE: &[&str] = &[
    "--blkio-weight=V",
    "--cpu-period=V",
    "--cpu-quota=V",
    "--cpu-rt-period=V",
    "--cpu-rt-runtime=V",
    "-c, --cpu-shares=V",
    "--cpus=V",
    "--cpuset-cpus=V",
    "--cpuset-mems=V",
    "-m, --memory=V",
    "--memory-reservation=V",
    "--memory-swap=V",
    "--pids-limit=V",
    "--restart=V",
];

/// `docker container prune`.
const D_CONTAINER_PRUNE: &[&str] = &["--filter=V", "-f, --force"];

/// `docker container inspect`.
const D_CONTAINER_INSPECT: &[&str] = &["-f, --format=V", "-s, --size"];

/// `docker image prune`.
const D_IMAGE_PRUNE: &[&str] = &["-a, --all", "--filter=V", "-f, --force"];

/// `docker image inspect`.
const D_IMAGE_INSPECT: &[&str] = &["-f, --format=V", "--platform=V"];

/// `docker volume ls`.
const D_VOLUME_LS: &[&str] = &["--cluster", "-f, --filter=V", "--format=V", "-q, --quiet"];

/// `docker volume create`.
const D_VOLUME_CREATE: &[&str] = &[
    "--availability=V",
    "-d, --driver=V",
    "--group=V",
    "--label=V",
    "--limit-bytes=V",
    "-o, --opt=V",
    "--required-bytes=V",
    "--scope=V",
    "--secret=V",
    "--sharing=V",
    "--topology-preferred=V",
    "--topology-required=V",
    "--type=V",
];

/// `docker volume rm`.
const D_FORCE: &[&str] = &["-f, --force"];

/// `docker volume prune`.
const D_VOLUME_PRUNE: &[&str] = &["-a, --all", "--filter=V", "-f, --force"];

/// `docker network ls`.
const D_NETWORK_LS: &[&str] = &["-f, --filter=V", "--format=V", "--no-trunc", "-q, --quiet"];

/// `docker network inspect`.
const D_NETWORK_INSPECT: &[&str] = &["-f, --format=V", "-v, --verbose"];

/// `docker network create`.
const D_NETWORK_CREATE: &[&str] = &[
    "--attachable",
    "--aux-address=V",
    "--config-from=V",
    "--config-only",
    "-d, --driver=V",
    "--gateway=V",
    "--ingress",
    "--internal",
    "--ip-range=V",
    "--ipam-driver=V",
    "--ipam-opt=V",
    "--ipv4",
    "--ipv6",
    "--label=V",
    "-o, --opt=V",
    "--scope=V",
    "--subnet=V",
];

/// `docker network prune`.
const D_NETWORK_PRUNE: &[&str] = &["--filter=V", "-f, --force"];

/// `docker network connect`.
const D_NETWORK_CONNECT: &[&str] = &[
    "--alias=V",
    "--driver-opt=V",
    "--gw-priority=V",
    "--ip=V",
    "--ip6=V",
    "--link=V",
    "--link-local-ip=V",
];

/// `docker system df`.
const D_SYSTEM_DF: &[&str] = &["--format=V", "-v, --verbose"];

/// `docker system prune`.
const D_SYSTEM_PRUNE: &[&str] = &["-a, --all", "--filter=V", "-f, --force", "--volumes"];

/// `docker context ls`.
const D_CONTEXT_LS: &[&str] = &["--format=V", "-q, --quiet"];

/// `docker context create`.
const D_CONTEXT_CREATE: &[&str] = &[
    "--description=V",
    "--docker=V  config: points the context at a Docker daemon",
    "--from=V",
];

/// `docker builder prune`.
const D_BUILDER_PRUNE: &[&str] = &["-a, --all", "--filter=V", "-f, --force", "--keep-storage=V"];

// The option lists of Compose v2 (its reference documentation, from its source).

/// `docker compose attach`.
const C_ATTACH: &[&str] = &[
    "--dry-run",
    "--detach-keys=V",
    "--index=V",
    "--no-stdin",
    "--sig-proxy",
];

/// `docker compose build`.
const C_BUILD: &[&str] = &[
    "--dry-run",
    "--build-arg=V",
    "--builder=V",
    "--check",
    "-m, --memory=V",
    "--no-cache",
    "--print",
    "--provenance=V",
    "--pull",
    "--push  net: pushes the images it builds",
    "-q, --quiet",
    "--sbom=V",
    "--ssh=V  env: gives the build your SSH agent or keys",
    "--with-dependencies",
    "--parallel",
    "--compress",
    "--force-rm",
    "--no-rm",
    "--progress=V",
];

/// `docker compose config`.
const C_CONFIG: &[&str] = &[
    "--dry-run",
    "--environment",
    "--format=V",
    "--hash=V",
    "--images",
    "--lock-image-digests",
    "--models",
    "--networks",
    "--no-consistency",
    "--no-env-resolution",
    "--no-interpolate",
    "--no-normalize",
    "--no-path-resolution",
    "-o, --output=V  writes",
    "--profiles",
    "-q, --quiet",
    "--resolve-image-digests",
    "--services",
    "--variables",
    "--volumes",
];

/// `docker compose cp`.
const C_CP: &[&str] = &[
    "--dry-run",
    "--all",
    "-a, --archive",
    "-L, --follow-link",
    "--index=V",
];

/// `docker compose create`.
const C_CREATE: &[&str] = &[
    "--dry-run",
    "--build",
    "--force-recreate",
    "--no-build",
    "--no-recreate",
    "--pull=V",
    "--quiet-pull",
    "--remove-orphans",
    "--scale=V",
    "-y, --yes",
];

/// `docker compose down`.
const C_DOWN: &[&str] = &[
    "--dry-run",
    "--remove-orphans",
    "--rmi=V  danger: deletes the images the services use",
    "-t, --timeout=V",
    "-v, --volumes  danger: deletes the project's named volumes, and the data in them",
];

/// `docker compose events`.
const C_EVENTS: &[&str] = &["--dry-run", "--json", "--since=V", "--until=V"];

/// `docker compose exec`.
const C_EXEC: &[&str] = &[
    "--dry-run",
    "-d, --detach",
    "-e, --env=V",
    "--index=V",
    "-T, --no-tty",
    "--privileged  danger: gives the process full access to the host",
    "-u, --user=V",
    "-w, --workdir=V",
    "-i, --interactive",
    "-t, --tty",
];

/// `docker compose images`.
const C_IMAGES: &[&str] = &["--dry-run", "--format=V", "-q, --quiet"];

/// `docker compose kill`.
const C_KILL: &[&str] = &["--dry-run", "--remove-orphans", "-s, --signal=V"];

/// `docker compose logs`.
const C_LOGS: &[&str] = &[
    "--dry-run",
    "-f, --follow  follows",
    "--index=V",
    "--no-color",
    "--no-log-prefix",
    "--since=V",
    "-n, --tail=V",
    "-t, --timestamps",
    "--until=V",
];

/// `docker compose ls`.
const C_LS: &[&str] = &[
    "--dry-run",
    "-a, --all",
    "--filter=V",
    "--format=V",
    "-q, --quiet",
];

/// `docker compose pause`.
const C_PAUSE: &[&str] = &["--dry-run"];

/// `docker compose port`.
const C_PORT: &[&str] = &["--dry-run", "--index=V", "--protocol=V"];

/// `docker compose ps`.
const C_PS: &[&str] = &[
    "--dry-run",
    "-a, --all",
    "--filter=V",
    "--format=V",
    "--no-trunc",
    "--orphans",
    "-q, --quiet",
    "--services",
    "--status=V",
];

/// `docker compose pull`.
const C_PULL: &[&str] = &[
    "--dry-run",
    "--ignore-buildable",
    "--ignore-pull-failures",
    "--include-deps",
    "--policy=V",
    "-q, --quiet",
    "--parallel",
    "--no-parallel",
];

/// `docker compose push`.
const C_PUSH: &[&str] = &[
    "--dry-run",
    "--ignore-push-failures",
    "--include-deps",
    "-q, --quiet",
];

/// `docker compose restart`.
const C_RESTART: &[&str] = &["--dry-run", "--no-deps", "-t, --timeout=V"];

/// `docker compose rm`.
const C_RM: &[&str] = &[
    "--dry-run",
    "-f, --force",
    "-s, --stop",
    "-v, --volumes  danger: deletes the containers' anonymous volumes",
];

/// `docker compose run`.
const C_RUN: &[&str] = &[
    "--dry-run",
    "--build",
    "--cap-add=V  danger: gives the container extra kernel capabilities",
    "--cap-drop=V",
    "-d, --detach",
    "--entrypoint=V",
    "-e, --env=V",
    "--env-from-file=V  reads",
    "-i, --interactive",
    "-l, --label=V",
    "--name=V",
    "--no-deps",
    "-T, --no-tty",
    "-p, --publish=V",
    "--pull=V",
    "-q, --quiet",
    "--quiet-build",
    "--quiet-pull",
    "--remove-orphans",
    "--rm",
    "-P, --service-ports",
    "--use-aliases",
    "-u, --user=V",
    "-v, --volume=V",
    "-w, --workdir=V",
    "-t, --tty",
];

/// `docker compose scale`.
const C_SCALE: &[&str] = &["--dry-run", "--no-deps"];

/// `docker compose start`.
const C_START: &[&str] = &["--dry-run", "--wait", "--wait-timeout=V"];

/// `docker compose stats`.
const C_STATS: &[&str] = &[
    "--dry-run",
    "-a, --all",
    "--format=V",
    "--no-stream",
    "--no-trunc",
];

/// `docker compose stop`.
const C_STOP: &[&str] = &["--dry-run", "-t, --timeout=V"];

/// `docker compose top`.
const C_TOP: &[&str] = &["--dry-run"];

/// `docker compose unpause`.
const C_UNPAUSE: &[&str] = &["--dry-run"];

/// `docker compose up`.
const C_UP: &[&str] = &[
    "--dry-run",
    "--abort-on-container-exit",
    "--abort-on-container-failure",
    "--always-recreate-deps",
    "--attach=V",
    "--attach-dependencies",
    "--build",
    "-d, --detach",
    "--exit-code-from=V",
    "--force-recreate",
    "--menu",
    "--no-attach=V",
    "--no-build",
    "--no-color",
    "--no-deps",
    "--no-log-prefix",
    "--no-recreate",
    "--no-start",
    "--pull=V",
    "--quiet-build",
    "--quiet-pull",
    "--remove-orphans",
    "-V, --renew-anon-volumes  danger: discards the data in the containers' anonymous volumes",
    "--scale=V",
    "-t, --timeout=V",
    "--timestamps",
    "--wait",
    "--wait-timeout=V",
    "-w, --watch",
    "-y, --yes",
];

/// `docker compose version`.
const C_VERSION: &[&str] = &["--dry-run", "-f, --format=V", "--short"];

/// `docker compose volumes`.
const C_VOLUMES: &[&str] = &["--dry-run", "--format=V", "-q, --quiet"];

/// `docker compose wait`.
const C_WAIT: &[&str] = &[
    "--dry-run",
    "--down-project  danger: takes the whole project down when the first container stops",
];

/// `docker compose watch`.
const C_WATCH: &[&str] = &["--dry-run", "--no-up", "--prune", "--quiet"];

/// `docker compose commit`.
const C_COMMIT: &[&str] = &[
    "--dry-run",
    "-a, --author=V",
    "-c, --change=V",
    "--index=V",
    "-m, --message=V",
    "-p, --pause",
];

/// `docker compose export`.
const C_EXPORT: &[&str] = &["--dry-run", "--index=V", "-o, --output=V  writes"];

// ---------------------------------------------------------------------------------------
// kubectl
// ---------------------------------------------------------------------------------------

/// kubectl's global options, valid before or after the subcommand.
const K_GLOBAL: &[&str] = &[
    "--as=USER  config: acts as another user (impersonation)",
    "--as-group=GROUP  config: acts as another group (impersonation)",
    "--as-uid=UID  config: acts as another user (impersonation)",
    "--cache-dir=DIR  writes",
    "--certificate-authority=FILE  config: trusts another certificate authority for the cluster",
    "--client-certificate=FILE  config: authenticates with another client certificate",
    "--client-key=FILE  config: authenticates with another client key",
    "--cluster=NAME  config: talks to another cluster",
    "--context=NAME  config: uses another kubeconfig context",
    "--disable-compression",
    "--insecure-skip-tls-verify  config: does not verify the cluster's certificate",
    "--kubeconfig=FILE  config: uses another kubeconfig",
    "--log-flush-frequency=DURATION",
    "--match-server-version",
    "-n, --namespace=NAMESPACE",
    "--password=PASSWORD  config: authenticates with another password",
    "--profile=NAME",
    "--profile-output=FILE",
    "--request-timeout=DURATION",
    "-s, --server=URL  config: talks to another API server",
    "--tls-server-name=NAME",
    "--token=TOKEN  config: authenticates with another token",
    "--user=NAME  config: uses another kubeconfig user",
    "--username=NAME  config: authenticates as another user",
    "-v, --v=LEVEL",
    "--vmodule=PATTERN",
    "--warnings-as-errors",
];

const KUBECTL: Profile = Profile {
    names: &["kubectl"],
    syntax: Syntax::Clap,
    options: K_GLOBAL,
    // With no subcommand it prints its help, but first asks the API server (the oracle
    // saw `kubectl -n x` connect to 127.0.0.1:8080). A subcommand's own says otherwise.
    does: Does::Net("asks the cluster's API server, even with no subcommand"),
    subcommands: &[
        &k(&["get"], K_GET, READS_CLUSTER, Some(k_get_check)),
        &k(
            &["describe"],
            K_DESCRIBE,
            READS_CLUSTER,
            Some(k_describe_check),
        ),
        &k(&["logs"], K_LOGS, READS_CLUSTER, None),
        &k(&["explain"], K_EXPLAIN, READS_CLUSTER, None),
        &k(&["api-resources"], K_API_RESOURCES, READS_CLUSTER, None),
        &k(&["api-versions"], NONE, READS_CLUSTER, None),
        &k(&["version"], K_VERSION, READS_CLUSTER, None),
        &k_group(
            &["top"],
            &[
                &k(&["node", "nodes", "no"], K_TOP_NODE, READS_CLUSTER, None),
                &k(&["pod", "pods", "po"], K_TOP_POD, READS_CLUSTER, None),
            ],
        ),
        &Profile {
            subcommands: &[&k(&["dump"], K_CLUSTER_INFO_DUMP, READS_CLUSTER, None)],
            rest: Role::Nothing,
            ..k(&["cluster-info"], NONE, READS_CLUSTER, None)
        },
        &k(&["events"], K_EVENTS, READS_CLUSTER, None),
        &k_group(
            &["auth"],
            &[
                &k(&["can-i"], K_AUTH_CAN_I, READS_CLUSTER, None),
                &k(&["whoami"], K_AUTH_WHOAMI, READS_CLUSTER, None),
                &k(&["reconcile"], K_AUTH_RECONCILE, CHANGES_CLUSTER, None),
            ],
        ),
        &k(
            &["diff"],
            K_DIFF,
            Does::Net("compares manifests with the cluster (running `diff`)"),
            None,
        ),
        &k(&["wait"], K_WAIT, READS_CLUSTER, None),
        &k(
            &["kustomize"],
            K_KUSTOMIZE,
            Does::Nothing,
            Some(k_kustomize_check),
        ),
        &k(&["completion"], NONE, Does::Nothing, None),
        &k_group(
            &["plugin"],
            &[&k(&["list"], K_PLUGIN_LIST, Does::Nothing, None)],
        ),
        &k_group(
            &["config"],
            &[
                &k(
                    &["view"],
                    K_CONFIG_VIEW,
                    Does::Net("prints the kubeconfig (its credentials redacted)"),
                    None,
                ),
                &k(
                    &["get-contexts"],
                    K_CONFIG_GET_CONTEXTS,
                    Does::Nothing,
                    None,
                ),
                &k(&["current-context"], NONE, Does::Nothing, None),
                &k(&["get-clusters"], NONE, Does::Nothing, None),
                &k(&["get-users"], NONE, Does::Nothing, None),
                &k(&["use-context", "use"], NONE, CHANGES_KUBECONFIG, None),
                &k(
                    &["set-context"],
                    K_CONFIG_SET_CONTEXT,
                    CHANGES_KUBECONFIG,
                    None,
                ),
                &k(
                    &["set-cluster"],
                    K_CONFIG_SET_CLUSTER,
                    CHANGES_KUBECONFIG,
                    None,
                ),
                &k(
                    &["set-credentials"],
                    K_CONFIG_SET_CREDENTIALS,
                    CHANGES_KUBECONFIG,
                    None,
                ),
                &k(
                    &["set"],
                    K_CONFIG_SET,
                    CHANGES_KUBECONFIG,
                    Some(k_config_set_check),
                ),
                &k(&["unset"], NONE, CHANGES_KUBECONFIG, None),
                &k(&["delete-context"], NONE, CHANGES_KUBECONFIG, None),
                &k(&["delete-cluster"], NONE, CHANGES_KUBECONFIG, None),
                &k(&["delete-user"], NONE, CHANGES_KUBECONFIG, None),
                &k(&["rename-context"], NONE, CHANGES_KUBECONFIG, None),
            ],
        ),
        &Profile {
            subcommands: &[
                &k(
                    &["view-last-applied"],
                    K_APPLY_VIEW,
                    READS_CLUSTER,
                    Some(k_view_last_applied_check),
                ),
                &k(&["set-last-applied"], K_APPLY_SET, CHANGES_CLUSTER, None),
                &k(
                    &["edit-last-applied"],
                    K_APPLY_EDIT,
                    Does::Code("opens the resources in an editor, then applies the changes"),
                    None,
                ),
            ],
            ..k(&["apply"], K_APPLY, CHANGES_CLUSTER, None)
        },
        &Profile {
            subcommands: &[
                &k(
                    &["namespace", "ns"],
                    K_CREATE_NAMESPACE,
                    CHANGES_CLUSTER,
                    None,
                ),
                &k_group(
                    &["secret"],
                    &[
                        &k(
                            &["generic"],
                            K_CREATE_SECRET_GENERIC,
                            CHANGES_CLUSTER,
                            Some(k_from_file_check),
                        ),
                        &k(&["tls"], K_CREATE_SECRET_TLS, CHANGES_CLUSTER, None),
                        &k(
                            &["docker-registry"],
                            K_CREATE_SECRET_DOCKER,
                            CHANGES_CLUSTER,
                            Some(k_from_file_check),
                        ),
                    ],
                ),
                &k(
                    &["configmap", "cm"],
                    K_CREATE_CONFIGMAP,
                    CHANGES_CLUSTER,
                    Some(k_from_file_check),
                ),
                &k(
                    &["deployment", "deploy"],
                    K_CREATE_DEPLOYMENT,
                    CHANGES_CLUSTER,
                    None,
                ),
                &k(&["job"], K_CREATE_JOB, CHANGES_CLUSTER, None),
                &k(&["cronjob", "cj"], K_CREATE_CRONJOB, CHANGES_CLUSTER, None),
                &k(
                    &["serviceaccount", "sa"],
                    K_CREATE_SERVICEACCOUNT,
                    CHANGES_CLUSTER,
                    None,
                ),
                &k(
                    &["token"],
                    K_CREATE_TOKEN,
                    Does::Env("prints a new token for the service account"),
                    None,
                ),
                &k(&["role"], K_CREATE_ROLE, CHANGES_CLUSTER, None),
                &k(
                    &["rolebinding"],
                    K_CREATE_ROLEBINDING,
                    CHANGES_CLUSTER,
                    None,
                ),
                &k(
                    &["clusterrole"],
                    K_CREATE_CLUSTERROLE,
                    CHANGES_CLUSTER,
                    None,
                ),
                &k(
                    &["clusterrolebinding"],
                    K_CREATE_CLUSTERROLEBINDING,
                    CHANGES_CLUSTER,
                    None,
                ),
                &k_group(
                    &["service", "svc"],
                    &[
                        &k(
                            &["clusterip"],
                            K_CREATE_SERVICE_CLUSTERIP,
                            CHANGES_CLUSTER,
                            None,
                        ),
                        &k(
                            &["nodeport"],
                            K_CREATE_SERVICE_NODEPORT,
                            CHANGES_CLUSTER,
                            None,
                        ),
                        &k(
                            &["loadbalancer"],
                            K_CREATE_SERVICE_LOADBALANCER,
                            CHANGES_CLUSTER,
                            None,
                        ),
                        &k(
                            &["externalname"],
                            K_CREATE_SERVICE_EXTERNALNAME,
                            CHANGES_CLUSTER,
                            None,
                        ),
                    ],
                ),
                &k(&["ingress", "ing"], K_CREATE_INGRESS, CHANGES_CLUSTER, None),
                &k(
                    &["quota", "resourcequota"],
                    K_CREATE_QUOTA,
                    CHANGES_CLUSTER,
                    None,
                ),
                &k(
                    &["priorityclass", "pc"],
                    K_CREATE_PRIORITYCLASS,
                    CHANGES_CLUSTER,
                    None,
                ),
                &k(
                    &["poddisruptionbudget", "pdb"],
                    K_CREATE_PDB,
                    CHANGES_CLUSTER,
                    None,
                ),
            ],
            ..k(&["create"], K_CREATE, CHANGES_CLUSTER, None)
        },
        &k(&["patch"], K_PATCH, CHANGES_CLUSTER, None),
        &k(&["replace"], K_REPLACE, CHANGES_CLUSTER, None),
        &k(
            &["edit"],
            K_EDIT,
            Does::Code("opens the resources in an editor, then applies the changes"),
            None,
        ),
        &k(&["scale"], K_SCALE, CHANGES_CLUSTER, None),
        &k(&["autoscale"], K_AUTOSCALE, CHANGES_CLUSTER, None),
        &k(&["expose"], K_EXPOSE, CHANGES_CLUSTER, None),
        &k_group(
            &["rollout"],
            &[
                &k(&["status"], K_ROLLOUT_STATUS, READS_CLUSTER, None),
                &k(&["history"], K_ROLLOUT_HISTORY, READS_CLUSTER, None),
                &k(&["restart"], K_ROLLOUT_RESTART, CHANGES_CLUSTER, None),
                &k(&["undo"], K_ROLLOUT_UNDO, CHANGES_CLUSTER, None),
                &k(&["pause"], K_ROLLOUT_PAUSE, CHANGES_CLUSTER, None),
                &k(&["resume"], K_ROLLOUT_RESUME, CHANGES_CLUSTER, None),
            ],
        ),
        &k(&["label"], K_LABEL, CHANGES_CLUSTER, None),
        &k(&["annotate"], K_ANNOTATE, CHANGES_CLUSTER, None),
        &k_group(
            &["set"],
            &[
                &k(&["image"], K_SET_IMAGE, CHANGES_CLUSTER, None),
                &k(&["env"], K_SET_ENV, CHANGES_CLUSTER, None),
                &k(&["resources"], K_SET_RESOURCES, CHANGES_CLUSTER, None),
                &k(&["selector"], K_SET_SELECTOR, CHANGES_CLUSTER, None),
                &k(
                    &["serviceaccount", "sa"],
                    K_SET_SERVICEACCOUNT,
                    CHANGES_CLUSTER,
                    None,
                ),
                &k(&["subject"], K_SET_SUBJECT, CHANGES_CLUSTER, None),
            ],
        ),
        &k_group(
            &["certificate"],
            &[
                &k(
                    &["approve"],
                    K_CERTIFICATE,
                    Does::Config("approves a certificate request, granting credentials"),
                    None,
                ),
                &k(&["deny"], K_CERTIFICATE, CHANGES_CLUSTER, None),
            ],
        ),
        &k(
            &["delete"],
            K_DELETE,
            Does::Danger("deletes resources from the cluster"),
            None,
        ),
        &k(
            &["drain"],
            K_DRAIN,
            Does::Danger("evicts every pod from the node"),
            None,
        ),
        &k(
            &["cordon"],
            K_CORDON,
            Does::Danger("stops new pods from being scheduled on the node"),
            None,
        ),
        &k(&["uncordon"], K_CORDON, CHANGES_CLUSTER, None),
        &k(
            &["taint"],
            K_TAINT,
            Does::Danger(
                "changes which pods may run on the node (a `NoExecute` taint evicts them)",
            ),
            None,
        ),
        &Profile {
            rest: Passthrough,
            ..k(
                &["exec"],
                K_EXEC,
                Does::Code("runs a command in a container"),
                None,
            )
        },
        &Profile {
            rest: Passthrough,
            ..k(&["run"], K_RUN, Does::Code("runs a new pod"), None)
        },
        &k(
            &["attach"],
            K_ATTACH,
            Does::Code("attaches this terminal's input to a running container"),
            None,
        ),
        &Profile {
            rest: Passthrough,
            ..k(
                &["debug"],
                K_DEBUG,
                Does::Code("starts a debugging container"),
                Some(k_debug_check),
            )
        },
        &k(
            &["cp"],
            K_CP,
            Does::Code("copies files to or from a container (running `tar` in it)"),
            None,
        ),
        &k(
            &["port-forward"],
            K_PORT_FORWARD,
            Does::Code("opens local ports that lead into a pod"),
            None,
        ),
        &k(
            &["proxy"],
            K_PROXY,
            Does::Code("serves the cluster's API on a local port"),
            None,
        ),
    ],
    check: Some(kubectl_check),
    config: Some(&KUBECTL_CONFIG),
    ..BASE
};

/// kubectl reads `$KUBECONFIG`, by default `~/.kube/config`, whose users may name a
/// credential plugin kubectl runs on every request (`exec`, an `auth-provider`'s
/// `cmd-path`).
const KUBECTL_CONFIG: Config = Config {
    files: &[ConfigFile {
        name: ".kube/config",
        place: Place::Home,
        judge: Judge::YamlRefuses(&["exec", "auth-provider", "cmd-path"]),
        why: "a kubeconfig user's `exec` or `auth-provider` is a program kubectl runs for credentials",
        neutralised: false,
    }],
    env: "`KUBECONFIG` (other kubeconfig files), `HTTPS_PROXY`",
    run_env: &[],
};

const READS_CLUSTER: Does = Does::Net("reads from the cluster");
const CHANGES_CLUSTER: Does = Does::Config("changes the cluster");
const CHANGES_KUBECONFIG: Does = Does::Config("changes the kubeconfig");

/// A kubectl subcommand: the global options stay valid after it.
const fn k(
    names: &'static [&'static str],
    options: &'static [&'static str],
    does: Does,
    check: Option<fn(&mut Reading<'_>)>,
) -> Profile {
    Profile {
        names,
        syntax: Syntax::Clap,
        options,
        rest: Text,
        does,
        inherit: true,
        check,
        ..BASE
    }
}

/// A kubectl subcommand that only holds others.
const fn k_group(
    names: &'static [&'static str],
    subcommands: &'static [&'static Profile],
) -> Profile {
    Profile {
        names,
        syntax: Syntax::Clap,
        subcommands,
        inherit: true,
        ..BASE
    }
}

/// pflag's boolean words, as `strconv.ParseBool` reads them.
fn go_bool(v: &str) -> Option<bool> {
    match v {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// `--dry-run` (alone, `client`, `server`, or a true boolean) changes nothing: what the
/// subcommand and its options would change, run or destroy is only shown. Also
/// `--profile`, which writes a profile file.
fn kubectl_check(r: &mut Reading<'_>) {
    let global = |g: &&super::profile::Given<'_>| K_GLOBAL.contains(&g.opt.line);
    if let Some(g) = r
        .given
        .iter()
        .filter(global)
        .find(|g| g.opt.key() == "profile")
        && g.value.is_some_and(|v| v != "none")
    {
        let at = g.at;
        let out = r
            .value("profile-output")
            .unwrap_or("profile.pprof")
            .to_string();
        r.add(Effect::Writes(out), at);
    }
    // `-v=8` and above log the API's responses: secrets' values among them.
    if let Some(g) = r.given.iter().filter(global).find(|g| g.opt.key() == "v")
        && g.value
            .and_then(|v| v.parse::<u32>().ok())
            .is_none_or(|level| level >= 8)
    {
        let at = g.at;
        r.add(
            Effect::Env(
                "`-v` at level 8 and above logs the cluster's responses, secrets' values included"
                    .into(),
            ),
            at,
        );
    }
    kubectl_dry_run(r);
    // kubectl asks its API server on every run, whatever the subcommand: to print its
    // version (`--client` too), its help, a completion script or the kubeconfig. Unless
    // a finding says so already (`reads from the cluster`), a human is told.
    let said = |f: &Finding| matches!(&f.effect, Effect::Net(s) if s.contains("cluster"));
    if !r.findings.iter().any(said) {
        r.add(
            Effect::Net(
                "kubectl asks the cluster's API server on every run, even for its version or help"
                    .into(),
            ),
            Span::one(0),
        );
    }
}

/// `--dry-run` (`client`, `server`) changes nothing in the cluster: what would change is
/// shown instead.
fn kubectl_dry_run(r: &mut Reading<'_>) {
    let Some(g) = r.given.iter().rev().find(|g| g.opt.key() == "dry-run") else {
        return;
    };
    let at = g.at;
    let dry = match g.value {
        None | Some("client" | "server") => Some(true),
        Some("none") => Some(false),
        Some(v) => go_bool(v),
    };
    match dry {
        Some(true) => {
            let global: Vec<usize> = r
                .given
                .iter()
                .filter(|g| K_GLOBAL.contains(&g.opt.line))
                .map(|g| g.at.first)
                .collect();
            r.findings.retain(|f| {
                !matches!(
                    f.effect,
                    Effect::Config(_) | Effect::Danger(_) | Effect::Code(_)
                ) || global.contains(&f.at.first)
            });
            r.add(
                Effect::Net("`--dry-run` only shows what would change in the cluster".into()),
                at,
            );
        }
        Some(false) => {}
        None => r.add(
            Effect::Unknown(format!(
                "`{}`: kubectl takes only none, client or server here",
                r.words[at.first]
            )),
            at,
        ),
    }
}

/// Whether a `get`/`describe` operand names secrets: `secret`, `secrets`,
/// `secret/NAME`, `secrets.v1`, `pods,secrets`.
fn names_secrets(w: &str) -> bool {
    w.split(',').any(|part| {
        let kind = part.split('/').next().unwrap_or(part);
        let kind = kind.split('.').next().unwrap_or(kind).to_ascii_lowercase();
        kind == "secret" || kind == "secrets"
    })
}

/// Whether the operands (`TYPE [NAME…]` or `TYPE/NAME…`) take in secrets.
fn secrets_named(r: &Reading<'_>) -> bool {
    r.operands.iter().enumerate().any(|(n, &(_, w))| {
        if n == 0 || w.contains('/') {
            names_secrets(w)
        } else {
            false
        }
    })
}

/// `get` with an output that prints objects whole (`-o yaml`, `json`, `jsonpath=…`,
/// templates, custom columns) prints secrets' values; the table, `-o wide` and `-o name`
/// do not.
fn k_get_check(r: &mut Reading<'_>) {
    let printing = r
        .value("output")
        .is_some_and(|o| !matches!(o, "wide" | "name"));
    let raw_secrets = r
        .value("raw")
        .is_some_and(|p| p.to_ascii_lowercase().contains("secret"));
    let from_files = r.has("filename") || r.has("kustomize");
    let why = if raw_secrets {
        Some("`get --raw` prints secrets' values")
    } else if printing && secrets_named(r) {
        Some("`get secret` with `-o` prints secrets' values")
    } else if printing && from_files {
        Some("`get -f` with `-o` prints the resources the files name, secrets' values included")
    } else {
        None
    };
    if let Some(why) = why {
        let at = r.to_end(0);
        r.add(Effect::Env(why.into()), at);
    }
}

/// `describe secret` prints service-account tokens in full.
fn k_describe_check(r: &mut Reading<'_>) {
    if secrets_named(r) {
        let at = r.to_end(0);
        r.add(
            Effect::Env("`describe secret` prints service-account tokens in full".into()),
            at,
        );
    }
}

/// `apply view-last-applied` prints the last applied manifest: a secret's, values and all.
fn k_view_last_applied_check(r: &mut Reading<'_>) {
    if secrets_named(r) || r.has("filename") || r.has("kustomize") {
        let at = r.to_end(0);
        r.add(
            Effect::Env(
                "`view-last-applied` prints the applied manifests, secrets' values included".into(),
            ),
            at,
        );
    }
}

/// `kustomize [DIR]` reads the directory (`.` by default) as a whole tree, or fetches a
/// remote one.
fn k_kustomize_check(r: &mut Reading<'_>) {
    r.set_roles(&[], Text);
    let ops: Vec<(usize, &str)> = r.operands.clone();
    if ops.is_empty() && !r.stopped {
        r.add(Effect::ReadsTree(".".into()), Span::one(0));
    }
    for (i, w) in ops {
        let effect = if w.contains("://") || w.starts_with("github.com/") {
            Effect::Net(format!("`kustomize` fetches `{w}`"))
        } else {
            Effect::ReadsTree(w.to_string())
        };
        r.add(effect, Span::one(i));
    }
}

/// `--from-file=[KEY=]SOURCE` and `--from-env-file=FILE` read files into the cluster.
fn k_from_file_check(r: &mut Reading<'_>) {
    let mut found: Vec<(Effect, Span)> = Vec::new();
    for g in &r.given {
        let Some(v) = g.value else { continue };
        let path = match g.opt.key() {
            "from-file" => v.split_once('=').map_or(v, |(_, p)| p),
            "from-env-file" => v,
            _ => continue,
        };
        found.push((Effect::Reads(path.to_string()), g.at));
    }
    for (e, at) in found {
        r.add(e, at);
    }
}

/// `config set users.NAME.exec.command …` names a program kubectl runs.
fn k_config_set_check(r: &mut Reading<'_>) {
    if let Some(&(i, property)) = r.operands.first()
        && (property.contains(".exec") || property.contains("auth-provider"))
    {
        r.add(
            Effect::Code(format!(
                "`config set {property}` names a program kubectl runs for credentials"
            )),
            Span::one(i),
        );
    }
}

/// `debug node/NAME` runs a pod in the node's namespaces with its root filesystem;
/// `--profile=sysadmin` runs the debugging container privileged.
fn k_debug_check(r: &mut Reading<'_>) {
    let mut found: Vec<(Effect, Span)> = Vec::new();
    if let Some(&(i, target)) = r.operands.first()
        && (target.starts_with("node/") || target.starts_with("nodes/"))
    {
        found.push((
            Effect::Danger(format!(
                "`debug {target}` runs a pod in the node's host namespaces, its root filesystem mounted"
            )),
            Span::one(i),
        ));
    }
    if let Some(g) = r.given_of("profile")
        && g.value == Some("sysadmin")
    {
        found.push((
            Effect::Danger("`--profile=sysadmin` runs the debugging container privileged".into()),
            g.at,
        ));
    }
    for (e, at) in found {
        r.add(e, at);
    }
}

// ---------------------------------------------------------------------------------------
// systemctl
// ---------------------------------------------------------------------------------------

const SYSTEMCTL: Profile = Profile {
    names: &["systemctl"],
    syntax: Syntax::Gnu,
    options: &[
        "-h, --help",
        "--version",
        "--system",
        "--user",
        "-H, --host=HOST  config: operates on another machine (over ssh)",
        "-M, --machine=CONTAINER  config: operates on a local container",
        "-t, --type=TYPE",
        "--state=STATE",
        "--failed",
        "-p, --property=NAME",
        "-P NAME",
        "-a, --all",
        "-l, --full",
        "-r, --recursive",
        "--reverse",
        "--with-dependencies",
        "--job-mode=MODE",
        "-T, --show-transaction",
        "--show-types",
        "--value",
        "--check-inhibitors=MODE",
        "-i",
        "--kill-whom=WHOM",
        "-s, --signal=SIGNAL",
        "--what=RESOURCES",
        "--now",
        "--dry-run",
        "-q, --quiet",
        "--wait",
        "--no-block",
        "--no-wall",
        "--no-reload",
        "--legend=BOOL",
        "--no-legend",
        "--no-pager",
        "--no-ask-password",
        "--global  config: applies to every user's service manager",
        "--runtime",
        "-f, --force",
        "--preset-mode=MODE",
        "--root=PATH  config: works on the unit files under another root directory",
        "--image=PATH  config: works on the unit files in a disk image",
        "-n, --lines=INTEGER",
        "-o, --output=STRING",
        "--firmware-setup  config: tells the firmware to show its setup menu at the next boot",
        "--boot-loader-menu=TIME  config: changes the boot loader menu at the next boot",
        "--boot-loader-entry=NAME  config: changes the boot loader entry at the next boot",
        "--plain",
        "--timestamp=FORMAT",
        "--read-only",
        "--mkdir",
        "--marked",
    ],
    subcommands: &[
        &verb(&["list-units"], Does::Nothing),
        &verb(&["list-automounts"], Does::Nothing),
        &verb(&["list-sockets"], Does::Nothing),
        &verb(&["list-timers"], Does::Nothing),
        &verb(&["list-unit-files"], Does::Nothing),
        &verb(&["list-dependencies"], Does::Nothing),
        &verb(&["list-machines"], Does::Nothing),
        &verb(&["list-jobs"], Does::Nothing),
        &verb(&["is-active"], Does::Nothing),
        &verb(&["is-failed"], Does::Nothing),
        &verb(&["is-enabled"], Does::Nothing),
        &verb(&["is-system-running"], Does::Nothing),
        // `status` prints the units' last journal lines (in run mode, as the daemon's
        // user); `show` and `cat` print settings, `Environment=` values included.
        &Profile {
            check: Some(journal_check),
            ..verb(&["status"], Does::Nothing)
        },
        &verb(
            &["show", "cat"],
            Does::Env("prints unit settings, which may hold secrets (`Environment=`)"),
        ),
        &verb(&["help"], Does::Nothing),
        &verb(&["get-default"], Does::Nothing),
        &Profile {
            check: Some(setter_check),
            ..verb(
                &["log-level", "log-target", "service-watchdogs"],
                Does::Nothing,
            )
        },
        &Profile {
            check: Some(service_setter_check),
            ..verb(&["service-log-level", "service-log-target"], Does::Nothing)
        },
        &verb(
            &["show-environment"],
            Does::Env("prints the service manager's environment"),
        ),
        &verb(
            &[
                "start",
                "restart",
                "reload",
                "try-restart",
                "reload-or-restart",
                "try-reload-or-restart",
                "reload-or-try-restart",
                "force-reload",
                "condrestart",
                "condreload",
            ],
            Does::Config("starts, restarts or reloads units"),
        ),
        &verb(
            &[
                "enable",
                "reenable",
                "preset",
                "preset-all",
                "link",
                "add-wants",
                "add-requires",
            ],
            Does::Config("changes which units start at boot"),
        ),
        &verb(&["unmask"], Does::Config("unmasks units")),
        &verb(
            &["set-default"],
            Does::Config("changes the target the system boots into"),
        ),
        &verb(
            &["daemon-reload", "daemon-reexec"],
            Does::Config("reloads the service manager's configuration"),
        ),
        &verb(
            &["set-property", "bind", "mount-image"],
            Does::Config("changes a running unit"),
        ),
        &verb(
            &["reset-failed"],
            Does::Config("resets units' failed state"),
        ),
        &verb(
            &["freeze", "thaw"],
            Does::Config("freezes or thaws units' processes"),
        ),
        &verb(&["cancel"], Does::Config("cancels queued jobs")),
        &verb(
            &["set-environment", "unset-environment", "import-environment"],
            Does::Config("changes the service manager's environment"),
        ),
        &verb(&["edit"], Does::Code("opens unit files in an editor")),
        &verb(&["stop", "condstop"], Does::Danger("stops units")),
        &verb(&["disable"], Does::Danger("disables units")),
        &verb(
            &["mask"],
            Does::Danger("masks units so that nothing can start them"),
        ),
        &verb(
            &["kill"],
            Does::Danger("sends a signal to units' processes"),
        ),
        &verb(
            &["isolate"],
            Does::Danger("starts one unit and stops every other"),
        ),
        &verb(
            &["clean"],
            Does::Danger("deletes units' runtime, cache, state, logs or configuration"),
        ),
        &verb(
            &["revert"],
            Does::Danger("discards local changes to unit files"),
        ),
        &verb(
            &[
                "poweroff",
                "reboot",
                "halt",
                "kexec",
                "suspend",
                "hibernate",
                "hybrid-sleep",
                "suspend-then-hibernate",
                "emergency",
                "rescue",
                "default",
                "exit",
                "switch-root",
            ],
            Does::Danger("stops, suspends or changes the state of the whole system"),
        ),
    ],
    check: Some(systemctl_check),
    config: Some(&SYSTEMCTL_CONFIG),
    // `is-enabled` of a service with a SysV init script asks systemd's own script,
    // `systemd-sysv-install`, which runs `getopt` and lists `/etc/rc?.d` with `ls`.
    helpers: &["systemd-sysv-install", "getopt", "ls"],
    ..BASE
};

/// systemctl reads no configuration file an agent writes; its environment names the
/// pager (started only on a terminal) and the editor (`edit`).
const SYSTEMCTL_CONFIG: Config = Config {
    files: &[],
    env: "`SYSTEMD_PAGER`, `PAGER`, `SYSTEMD_LESS` (the pager, on a terminal only), `SYSTEMD_EDITOR`, `EDITOR`, `VISUAL` (`edit`)",
    run_env: &[],
};

/// A systemctl verb; systemctl's options stay valid after it.
const fn verb(names: &'static [&'static str], does: Does) -> Profile {
    Profile {
        names,
        syntax: Syntax::Gnu,
        rest: Text,
        does,
        inherit: true,
        ..BASE
    }
}

/// `systemctl status` shows each unit's recent log lines: a read, though not of a path.
fn journal_check(r: &mut Reading<'_>) {
    let at = r
        .words
        .iter()
        .position(|w| w == "status")
        .map_or(Span::one(0), Span::one);
    r.add(Effect::Reads("the units' recent journal lines".into()), at);
}

/// `log-level [LEVEL]`: with a value it sets.
fn setter_check(r: &mut Reading<'_>) {
    if let Some(&(i, value)) = r.operands.first() {
        r.add(
            Effect::Config(format!("sets the service manager's setting to `{value}`")),
            Span::one(i),
        );
    }
}

/// `service-log-level SERVICE [LEVEL]`: with a second operand it sets.
fn service_setter_check(r: &mut Reading<'_>) {
    if let Some(&(i, value)) = r.operands.get(1) {
        r.add(
            Effect::Config(format!("sets a service's logging to `{value}`")),
            Span::one(i),
        );
    }
}

/// `--job-mode=isolate` makes any start an `isolate`: every other unit stops.
fn systemctl_check(r: &mut Reading<'_>) {
    if let Some(g) = r.given_of("job-mode")
        && g.value == Some("isolate")
    {
        let at = g.at;
        r.add(
            Effect::Danger("`--job-mode=isolate` stops every unit but the one started".into()),
            at,
        );
    }
}

// The option lists, as each subcommand's `--help` (kubectl 1.32) shows them.

/// `kubectl get`.
const K_GET: &[&str] = &[
    "-A, --all-namespaces",
    "--allow-missing-template-keys",
    "--chunk-size=V",
    "--field-selector=V",
    "-f, --filename=V  reads",
    "--ignore-not-found",
    "-k, --kustomize=V  reads",
    "-L, --label-columns=V",
    "--no-headers",
    "-o, --output=V",
    "--output-watch-events",
    "--raw=V",
    "-R, --recursive",
    "-l, --selector=V",
    "--server-print",
    "--show-kind",
    "--show-labels",
    "--show-managed-fields",
    "--sort-by=V",
    "--subresource=V",
    "--template=V",
    "-w, --watch",
    "--watch-only",
];

/// `kubectl describe`.
const K_DESCRIBE: &[&str] = &[
    "-A, --all-namespaces",
    "--chunk-size=V",
    "-f, --filename=V  reads",
    "-k, --kustomize=V  reads",
    "-R, --recursive",
    "-l, --selector=V",
    "--show-events",
];

/// `kubectl logs`.
const K_LOGS: &[&str] = &[
    "--all-containers",
    "--all-pods",
    "-c, --container=V",
    "-f, --follow  follows",
    "--ignore-errors",
    "--insecure-skip-tls-verify-backend",
    "--limit-bytes=V",
    "--max-log-requests=V",
    "--pod-running-timeout=V",
    "--prefix",
    "-p, --previous",
    "-l, --selector=V",
    "--since=V",
    "--since-time=V",
    "--tail=V",
    "--timestamps",
];

/// `kubectl explain`.
const K_EXPLAIN: &[&str] = &["--api-version=V", "-o, --output=V", "--recursive"];

/// `kubectl api-resources`.
const K_API_RESOURCES: &[&str] = &[
    "--api-group=V",
    "--cached",
    "--categories=V",
    "--namespaced",
    "--no-headers",
    "-o, --output=V",
    "--sort-by=V",
    "--verbs=V",
];

/// `kubectl version`.
const K_VERSION: &[&str] = &["--client", "-o, --output=V"];

/// `kubectl top node`.
const K_TOP_NODE: &[&str] = &[
    "--no-headers",
    "-l, --selector=V",
    "--show-capacity",
    "--sort-by=V",
    "--use-protocol-buffers",
];

/// `kubectl top pod`.
const K_TOP_POD: &[&str] = &[
    "-A, --all-namespaces",
    "--containers",
    "--field-selector=V",
    "--no-headers",
    "-l, --selector=V",
    "--sort-by=V",
    "--sum",
    "--use-protocol-buffers",
];

/// `kubectl cluster-info dump`.
const K_CLUSTER_INFO_DUMP: &[&str] = &[
    "-A, --all-namespaces",
    "--allow-missing-template-keys",
    "--namespaces=V",
    "-o, --output=V",
    "--output-directory=V  writes",
    "--pod-running-timeout=V",
    "--show-managed-fields",
    "--template=V",
];

/// `kubectl events`.
const K_EVENTS: &[&str] = &[
    "-A, --all-namespaces",
    "--allow-missing-template-keys",
    "--chunk-size=V",
    "--for=V",
    "--no-headers",
    "-o, --output=V",
    "--show-managed-fields",
    "--template=V",
    "--types=V",
    "-w, --watch",
];

/// `kubectl auth can-i`.
const K_AUTH_CAN_I: &[&str] = &[
    "-A, --all-namespaces",
    "--list",
    "--no-headers",
    "-q, --quiet",
    "--subresource=V",
];

/// `kubectl auth whoami`.
const K_AUTH_WHOAMI: &[&str] = &[
    "--allow-missing-template-keys",
    "-o, --output=V",
    "--show-managed-fields",
    "--template=V",
];

/// `kubectl auth reconcile`.
const K_AUTH_RECONCILE: &[&str] = &[
    "--allow-missing-template-keys",
    "--dry-run[=V]",
    "-f, --filename=V  reads",
    "-k, --kustomize=V  reads",
    "-o, --output=V",
    "-R, --recursive",
    "--remove-extra-permissions",
    "--remove-extra-subjects",
    "--show-managed-fields",
    "--template=V",
];

/// `kubectl diff`.
const K_DIFF: &[&str] = &[
    "--concurrency=V",
    "--field-manager=V",
    "-f, --filename=V  reads",
    "--force-conflicts",
    "-k, --kustomize=V  reads",
    "--prune",
    "--prune-allowlist=V",
    "-R, --recursive",
    "-l, --selector=V",
    "--server-side",
    "--show-managed-fields",
];

/// `kubectl wait`.
const K_WAIT: &[&str] = &[
    "--all",
    "-A, --all-namespaces",
    "--allow-missing-template-keys",
    "--field-selector=V",
    "-f, --filename=V  reads",
    "--for=V",
    "--local",
    "-o, --output=V",
    "-R, --recursive",
    "-l, --selector=V",
    "--show-managed-fields",
    "--template=V",
    "--timeout=V",
];

/// `kubectl kustomize`.
const K_KUSTOMIZE: &[&str] = &[
    "--as-current-user",
    "--enable-alpha-plugins  code: runs kustomize plugins (programs and containers)",
    "--enable-helm  code: runs helm",
    "-e, --env=V",
    "--helm-api-versions=V",
    "--helm-command=V  runs: runs COMMAND as helm",
    "--helm-debug",
    "--helm-kube-version=V",
    "--load-restrictor=V",
    "--mount=V",
    "--network",
    "--network-name=V",
    "-o, --output=V  writes",
];

/// `kubectl plugin list`.
const K_PLUGIN_LIST: &[&str] = &["--name-only"];

/// `kubectl config view`.
const K_CONFIG_VIEW: &[&str] = &[
    "--allow-missing-template-keys",
    "--flatten  env: embeds the credentials' files in the output (kubectl does not redact them then)",
    "--merge",
    "--minify",
    "-o, --output=V",
    "--raw  env: prints the credentials in the kubeconfig",
    "--show-managed-fields",
    "--template=V",
];

/// `kubectl config get-contexts`.
const K_CONFIG_GET_CONTEXTS: &[&str] = &["--no-headers", "-o, --output=V"];

/// `kubectl config set-context`.
const K_CONFIG_SET_CONTEXT: &[&str] = &["--cluster=V", "--current", "--namespace=V", "--user=V"];

/// `kubectl config set-cluster`.
const K_CONFIG_SET_CLUSTER: &[&str] = &[
    "--certificate-authority=V",
    "--embed-certs",
    "--insecure-skip-tls-verify",
    "--proxy-url=V",
    "--server=V",
    "--tls-server-name=V",
];

/// `kubectl config set-credentials`.
const K_CONFIG_SET_CREDENTIALS: &[&str] = &[
    "--auth-provider=V  code: makes kubectl use an authentication provider plugin",
    "--auth-provider-arg=V",
    "--client-certificate=V",
    "--client-key=V",
    "--embed-certs",
    "--exec-api-version=V",
    "--exec-arg=V",
    "--exec-command=V  runs: makes kubectl run COMMAND to get credentials",
    "--exec-env=V",
    "--exec-interactive-mode=V",
    "--exec-provide-cluster-info",
    "--password=V",
    "--token=V",
    "--username=V",
];

/// `kubectl config set`.
const K_CONFIG_SET: &[&str] = &["--set-raw-bytes"];

/// `kubectl apply`.
const K_APPLY: &[&str] = &[
    "--all",
    "--allow-missing-template-keys",
    "--cascade[=V]",
    "--dry-run[=V]",
    "--field-manager=V",
    "-f, --filename=V  reads",
    "--force  danger: deletes and re-creates resources it cannot patch",
    "--force-conflicts",
    "--grace-period=V",
    "-k, --kustomize=V  reads",
    "--openapi-patch",
    "-o, --output=V",
    "--overwrite",
    "--prune  danger: deletes every resource of the set that the files no longer name",
    "--prune-allowlist=V",
    "-R, --recursive",
    "-l, --selector=V",
    "--server-side",
    "--show-managed-fields",
    "--subresource=V",
    "--template=V",
    "--timeout=V",
    "--validate[=V]",
    "--wait",
];

/// `kubectl apply view-last-applied`.
const K_APPLY_VIEW: &[&str] = &[
    "--all",
    "-f, --filename=V  reads",
    "-k, --kustomize=V  reads",
    "-o, --output=V",
    "-R, --recursive",
    "-l, --selector=V",
];

/// `kubectl apply set-last-applied`.
const K_APPLY_SET: &[&str] = &[
    "--allow-missing-template-keys",
    "--create-annotation",
    "--dry-run[=V]",
    "-f, --filename=V  reads",
    "-o, --output=V",
    "--show-managed-fields",
    "--template=V",
];

/// `kubectl apply edit-last-applied`.
const K_APPLY_EDIT: &[&str] = &[
    "--allow-missing-template-keys",
    "--field-manager=V",
    "-f, --filename=V  reads",
    "-k, --kustomize=V  reads",
    "-o, --output=V",
    "-R, --recursive",
    "--show-managed-fields",
    "--template=V",
    "--validate[=V]",
    "--windows-line-endings",
];

/// `kubectl create`.
const K_CREATE: &[&str] = &[
    "--allow-missing-template-keys",
    "--dry-run[=V]",
    "--edit",
    "--field-manager=V",
    "-f, --filename=V  reads",
    "-k, --kustomize=V  reads",
    "-o, --output=V",
    "--raw=V",
    "-R, --recursive",
    "--save-config",
    "-l, --selector=V",
    "--show-managed-fields",
    "--template=V",
    "--validate[=V]",
    "--windows-line-endings",
];

/// `kubectl create namespace`.
const K_CREATE_NAMESPACE: &[&str] = &[
    "--allow-missing-template-keys",
    "--dry-run[=V]",
    "--field-manager=V",
    "-o, --output=V",
    "--save-config",
    "--show-managed-fields",
    "--template=V",
    "--validate[=V]",
];

/// `kubectl create secret generic`.
const K_CREATE_SECRET_GENERIC: &[&str] = &[
    "--allow-missing-template-keys",
    "--append-hash",
    "--dry-run[=V]",
    "--field-manager=V",
    "--from-env-file=V",
    "--from-file=V",
    "--from-literal=V",
    "-o, --output=V",
    "--save-config",
    "--show-managed-fields",
    "--template=V",
    "--type=V",
    "--validate[=V]",
];

/// `kubectl create secret tls`.
const K_CREATE_SECRET_TLS: &[&str] = &[
    "--allow-missing-template-keys",
    "--append-hash",
    "--cert=V  reads",
    "--dry-run[=V]",
    "--field-manager=V",
    "--key=V  reads",
    "-o, --output=V",
    "--save-config",
    "--show-managed-fields",
    "--template=V",
    "--validate[=V]",
];

/// `kubectl create secret docker-registry`.
const K_CREATE_SECRET_DOCKER: &[&str] = &[
    "--allow-missing-template-keys",
    "--append-hash",
    "--docker-email=V",
    "--docker-password=V",
    "--docker-server=V",
    "--docker-username=V",
    "--dry-run[=V]",
    "--field-manager=V",
    "--from-file=V",
    "-o, --output=V",
    "--save-config",
    "--show-managed-fields",
    "--template=V",
    "--validate[=V]",
];

/// `kubectl create configmap`.
const K_CREATE_CONFIGMAP: &[&str] = &[
    "--allow-missing-template-keys",
    "--append-hash",
    "--dry-run[=V]",
    "--field-manager=V",
    "--from-env-file=V",
    "--from-file=V",
    "--from-literal=V",
    "-o, --output=V",
    "--save-config",
    "--show-managed-fields",
    "--template=V",
    "--validate[=V]",
];

/// `kubectl create deployment`.
const K_CREATE_DEPLOYMENT: &[&str] = &[
    "--allow-missing-template-keys",
    "--dry-run[=V]",
    "--field-manager=V",
    "--image=V",
    "-o, --output=V",
    "--port=V",
    "-r, --replicas=V",
    "--save-config",
    "--show-managed-fields",
    "--template=V",
    "--validate[=V]",
];

/// `kubectl create job`.
const K_CREATE_JOB: &[&str] = &[
    "--allow-missing-template-keys",
    "--dry-run[=V]",
    "--field-manager=V",
    "--from=V",
    "--image=V",
    "-o, --output=V",
    "--save-config",
    "--show-managed-fields",
    "--template=V",
    "--validate[=V]",
];

/// `kubectl create cronjob`.
const K_CREATE_CRONJOB: &[&str] = &[
    "--allow-missing-template-keys",
    "--dry-run[=V]",
    "--field-manager=V",
    "--image=V",
    "-o, --output=V",
    "--restart=V",
    "--save-config",
    "--schedule=V",
    "--show-managed-fields",
    "--template=V",
    "--validate[=V]",
];

/// `kubectl create serviceaccount`.
const K_CREATE_SERVICEACCOUNT: &[&str] = &[
    "--allow-missing-template-keys",
    "--dry-run[=V]",
    "--field-manager=V",
    "-o, --output=V",
    "--save-config",
    "--show-managed-fields",
    "--template=V",
    "--validate[=V]",
];

/// `kubectl create token`.
const K_CREATE_TOKEN: &[&str] = &[
    "--allow-missing-template-keys",
    "--audience=V",
    "--bound-object-kind=V",
    "--bound-object-name=V",
    "--bound-object-uid=V",
    "--duration=V",
    "-o, --output=V",
    "--show-managed-fields",
    "--template=V",
];

/// `kubectl create role`.
const K_CREATE_ROLE: &[&str] = &[
    "--allow-missing-template-keys",
    "--dry-run[=V]",
    "--field-manager=V",
    "-o, --output=V",
    "--resource=V",
    "--resource-name=V",
    "--save-config",
    "--show-managed-fields",
    "--template=V",
    "--validate[=V]",
    "--verb=V",
];

/// `kubectl create rolebinding`.
const K_CREATE_ROLEBINDING: &[&str] = &[
    "--allow-missing-template-keys",
    "--clusterrole=V",
    "--dry-run[=V]",
    "--field-manager=V",
    "--group=V",
    "-o, --output=V",
    "--role=V",
    "--save-config",
    "--serviceaccount=V",
    "--show-managed-fields",
    "--template=V",
    "--user=V",
    "--validate[=V]",
];

/// `kubectl create clusterrole`.
const K_CREATE_CLUSTERROLE: &[&str] = &[
    "--aggregation-rule=V",
    "--allow-missing-template-keys",
    "--dry-run[=V]",
    "--field-manager=V",
    "--non-resource-url=V",
    "-o, --output=V",
    "--resource=V",
    "--resource-name=V",
    "--save-config",
    "--show-managed-fields",
    "--template=V",
    "--validate[=V]",
    "--verb=V",
];

/// `kubectl create clusterrolebinding`.
const K_CREATE_CLUSTERROLEBINDING: &[&str] = &[
    "--allow-missing-template-keys",
    "--clusterrole=V",
    "--dry-run[=V]",
    "--field-manager=V",
    "--group=V",
    "-o, --output=V",
    "--save-config",
    "--serviceaccount=V",
    "--show-managed-fields",
    "--template=V",
    "--user=V",
    "--validate[=V]",
];

/// `kubectl create service clusterip`.
const K_CREATE_SERVICE_CLUSTERIP: &[&str] = &[
    "--allow-missing-template-keys",
    "--clusterip=V",
    "--dry-run[=V]",
    "--field-manager=V",
    "-o, --output=V",
    "--save-config",
    "--show-managed-fields",
    "--tcp=V",
    "--template=V",
    "--validate[=V]",
];

/// `kubectl create service nodeport`.
const K_CREATE_SERVICE_NODEPORT: &[&str] = &[
    "--allow-missing-template-keys",
    "--dry-run[=V]",
    "--field-manager=V",
    "--node-port=V",
    "-o, --output=V",
    "--save-config",
    "--show-managed-fields",
    "--tcp=V",
    "--template=V",
    "--validate[=V]",
];

/// `kubectl create service loadbalancer`.
const K_CREATE_SERVICE_LOADBALANCER: &[&str] = &[
    "--allow-missing-template-keys",
    "--dry-run[=V]",
    "--field-manager=V",
    "-o, --output=V",
    "--save-config",
    "--show-managed-fields",
    "--tcp=V",
    "--template=V",
    "--validate[=V]",
];

/// `kubectl create service externalname`.
const K_CREATE_SERVICE_EXTERNALNAME: &[&str] = &[
    "--allow-missing-template-keys",
    "--dry-run[=V]",
    "--external-name=V",
    "--field-manager=V",
    "-o, --output=V",
    "--save-config",
    "--show-managed-fields",
    "--tcp=V",
    "--template=V",
    "--validate[=V]",
];

/// `kubectl create ingress`.
const K_CREATE_INGRESS: &[&str] = &[
    "--allow-missing-template-keys",
    "--annotation=V",
    "--class=V",
    "--default-backend=V",
    "--dry-run[=V]",
    "--field-manager=V",
    "-o, --output=V",
    "--rule=V",
    "--save-config",
    "--show-managed-fields",
    "--template=V",
    "--validate[=V]",
];

/// `kubectl create quota`.
const K_CREATE_QUOTA: &[&str] = &[
    "--allow-missing-template-keys",
    "--dry-run[=V]",
    "--field-manager=V",
    "--hard=V",
    "-o, --output=V",
    "--save-config",
    "--scopes=V",
    "--show-managed-fields",
    "--template=V",
    "--validate[=V]",
];

/// `kubectl create priorityclass`.
const K_CREATE_PRIORITYCLASS: &[&str] = &[
    "--allow-missing-template-keys",
    "--description=V",
    "--dry-run[=V]",
    "--field-manager=V",
    "--global-default",
    "-o, --output=V",
    "--preemption-policy=V",
    "--save-config",
    "--show-managed-fields",
    "--template=V",
    "--validate[=V]",
    "--value=V",
];

/// `kubectl create poddisruptionbudget`.
const K_CREATE_PDB: &[&str] = &[
    "--allow-missing-template-keys",
    "--dry-run[=V]",
    "--field-manager=V",
    "--max-unavailable=V",
    "--min-available=V",
    "-o, --output=V",
    "--save-config",
    "--selector=V",
    "--show-managed-fields",
    "--template=V",
    "--validate[=V]",
];

/// `kubectl patch`.
const K_PATCH: &[&str] = &[
    "--allow-missing-template-keys",
    "--dry-run[=V]",
    "--field-manager=V",
    "-f, --filename=V  reads",
    "-k, --kustomize=V  reads",
    "--local",
    "-o, --output=V",
    "-p, --patch=V",
    "--patch-file=V  reads",
    "-R, --recursive",
    "--show-managed-fields",
    "--subresource=V",
    "--template=V",
    "--type=V",
];

/// `kubectl replace`.
const K_REPLACE: &[&str] = &[
    "--allow-missing-template-keys",
    "--cascade[=V]",
    "--dry-run[=V]",
    "--field-manager=V",
    "-f, --filename=V  reads",
    "--force  danger: deletes and re-creates the resources",
    "--grace-period=V",
    "-k, --kustomize=V  reads",
    "-o, --output=V",
    "--raw=V",
    "-R, --recursive",
    "--save-config",
    "--show-managed-fields",
    "--subresource=V",
    "--template=V",
    "--timeout=V",
    "--validate[=V]",
    "--wait",
];

/// `kubectl edit`.
const K_EDIT: &[&str] = &[
    "--allow-missing-template-keys",
    "--field-manager=V",
    "-f, --filename=V  reads",
    "-k, --kustomize=V  reads",
    "-o, --output=V",
    "--output-patch",
    "-R, --recursive",
    "--save-config",
    "--show-managed-fields",
    "--subresource=V",
    "--template=V",
    "--validate[=V]",
    "--windows-line-endings",
];

/// `kubectl scale`.
const K_SCALE: &[&str] = &[
    "--all",
    "--allow-missing-template-keys",
    "--current-replicas=V",
    "--dry-run[=V]",
    "-f, --filename=V  reads",
    "-k, --kustomize=V  reads",
    "-o, --output=V",
    "-R, --recursive",
    "--replicas=V",
    "--resource-version=V",
    "-l, --selector=V",
    "--show-managed-fields",
    "--template=V",
    "--timeout=V",
];

/// `kubectl autoscale`.
const K_AUTOSCALE: &[&str] = &[
    "--allow-missing-template-keys",
    "--cpu-percent=V",
    "--dry-run[=V]",
    "--field-manager=V",
    "-f, --filename=V  reads",
    "-k, --kustomize=V  reads",
    "--max=V",
    "--min=V",
    "--name=V",
    "-o, --output=V",
    "-R, --recursive",
    "--save-config",
    "--show-managed-fields",
    "--template=V",
];

/// `kubectl expose`.
const K_EXPOSE: &[&str] = &[
    "--allow-missing-template-keys",
    "--cluster-ip=V",
    "--dry-run[=V]",
    "--external-ip=V",
    "--field-manager=V",
    "-f, --filename=V  reads",
    "-k, --kustomize=V  reads",
    "-l, --labels=V",
    "--load-balancer-ip=V",
    "--name=V",
    "-o, --output=V",
    "--override-type=V",
    "--overrides=V",
    "--port=V",
    "--protocol=V",
    "-R, --recursive",
    "--save-config",
    "--selector=V",
    "--session-affinity=V",
    "--show-managed-fields",
    "--target-port=V",
    "--template=V",
    "--type=V",
];

/// `kubectl rollout status`.
const K_ROLLOUT_STATUS: &[&str] = &[
    "-f, --filename=V  reads",
    "-k, --kustomize=V  reads",
    "-R, --recursive",
    "--revision=V",
    "-l, --selector=V",
    "--timeout=V",
    "-w, --watch",
];

/// `kubectl rollout history`.
const K_ROLLOUT_HISTORY: &[&str] = &[
    "--allow-missing-template-keys",
    "-f, --filename=V  reads",
    "-k, --kustomize=V  reads",
    "-o, --output=V",
    "-R, --recursive",
    "--revision=V",
    "-l, --selector=V",
    "--show-managed-fields",
    "--template=V",
];

/// `kubectl rollout restart`.
const K_ROLLOUT_RESTART: &[&str] = &[
    "--allow-missing-template-keys",
    "--field-manager=V",
    "-f, --filename=V  reads",
    "-k, --kustomize=V  reads",
    "-o, --output=V",
    "-R, --recursive",
    "-l, --selector=V",
    "--show-managed-fields",
    "--template=V",
];

/// `kubectl rollout undo`.
const K_ROLLOUT_UNDO: &[&str] = &[
    "--allow-missing-template-keys",
    "--dry-run[=V]",
    "-f, --filename=V  reads",
    "-k, --kustomize=V  reads",
    "-o, --output=V",
    "-R, --recursive",
    "-l, --selector=V",
    "--show-managed-fields",
    "--template=V",
    "--to-revision=V",
];

/// `kubectl rollout pause`.
const K_ROLLOUT_PAUSE: &[&str] = &[
    "--allow-missing-template-keys",
    "--field-manager=V",
    "-f, --filename=V  reads",
    "-k, --kustomize=V  reads",
    "-o, --output=V",
    "-R, --recursive",
    "-l, --selector=V",
    "--show-managed-fields",
    "--template=V",
];

/// `kubectl rollout resume`.
const K_ROLLOUT_RESUME: &[&str] = &[
    "--allow-missing-template-keys",
    "--field-manager=V",
    "-f, --filename=V  reads",
    "-k, --kustomize=V  reads",
    "-o, --output=V",
    "-R, --recursive",
    "-l, --selector=V",
    "--show-managed-fields",
    "--template=V",
];

/// `kubectl label`.
const K_LABEL: &[&str] = &[
    "--all",
    "-A, --all-namespaces",
    "--allow-missing-template-keys",
    "--dry-run[=V]",
    "--field-manager=V",
    "--field-selector=V",
    "-f, --filename=V  reads",
    "-k, --kustomize=V  reads",
    "--list",
    "--local",
    "-o, --output=V",
    "--overwrite",
    "-R, --recursive",
    "--resource-version=V",
    "-l, --selector=V",
    "--show-managed-fields",
    "--template=V",
];

/// `kubectl annotate`.
const K_ANNOTATE: &[&str] = &[
    "--all",
    "-A, --all-namespaces",
    "--allow-missing-template-keys",
    "--dry-run[=V]",
    "--field-manager=V",
    "--field-selector=V",
    "-f, --filename=V  reads",
    "-k, --kustomize=V  reads",
    "--list",
    "--local",
    "-o, --output=V",
    "--overwrite",
    "-R, --recursive",
    "--resource-version=V",
    "-l, --selector=V",
    "--show-managed-fields",
    "--template=V",
];

/// `kubectl set image`.
const K_SET_IMAGE: &[&str] = &[
    "--all",
    "--allow-missing-template-keys",
    "--dry-run[=V]",
    "--field-manager=V",
    "-f, --filename=V  reads",
    "-k, --kustomize=V  reads",
    "--local",
    "-o, --output=V",
    "-R, --recursive",
    "-l, --selector=V",
    "--show-managed-fields",
    "--template=V",
];

/// `kubectl set env`.
const K_SET_ENV: &[&str] = &[
    "--all",
    "--allow-missing-template-keys",
    "-c, --containers=V",
    "--dry-run[=V]",
    "-e, --env=V",
    "--field-manager=V",
    "-f, --filename=V  reads",
    "--from=V",
    "--keys=V",
    "-k, --kustomize=V  reads",
    "--list  env: prints the workloads' environment variables",
    "--local",
    "-o, --output=V",
    "--overwrite",
    "--prefix=V",
    "-R, --recursive",
    "--resolve  env: resolves and prints values from secrets and config maps",
    "-l, --selector=V",
    "--show-managed-fields",
    "--template=V",
];

/// `kubectl set resources`.
const K_SET_RESOURCES: &[&str] = &[
    "--all",
    "--allow-missing-template-keys",
    "-c, --containers=V",
    "--dry-run[=V]",
    "--field-manager=V",
    "-f, --filename=V  reads",
    "-k, --kustomize=V  reads",
    "--limits=V",
    "--local",
    "-o, --output=V",
    "-R, --recursive",
    "--requests=V",
    "-l, --selector=V",
    "--show-managed-fields",
    "--template=V",
];

/// `kubectl set selector`.
const K_SET_SELECTOR: &[&str] = &[
    "--all",
    "--allow-missing-template-keys",
    "--dry-run[=V]",
    "--field-manager=V",
    "-f, --filename=V  reads",
    "--local",
    "-o, --output=V",
    "-R, --recursive",
    "--resource-version=V",
    "--show-managed-fields",
    "--template=V",
];

/// `kubectl set serviceaccount`.
const K_SET_SERVICEACCOUNT: &[&str] = &[
    "--all",
    "--allow-missing-template-keys",
    "--dry-run[=V]",
    "--field-manager=V",
    "-f, --filename=V  reads",
    "-k, --kustomize=V  reads",
    "--local",
    "-o, --output=V",
    "-R, --recursive",
    "--show-managed-fields",
    "--template=V",
];

/// `kubectl set subject`.
const K_SET_SUBJECT: &[&str] = &[
    "--all",
    "--allow-missing-template-keys",
    "--dry-run[=V]",
    "--field-manager=V",
    "-f, --filename=V  reads",
    "--group=V",
    "-k, --kustomize=V  reads",
    "--local",
    "-o, --output=V",
    "-R, --recursive",
    "-l, --selector=V",
    "--serviceaccount=V",
    "--show-managed-fields",
    "--template=V",
    "--user=V",
];

/// `kubectl certificate approve`.
const K_CERTIFICATE: &[&str] = &[
    "--allow-missing-template-keys",
    "-f, --filename=V  reads",
    "--force",
    "-k, --kustomize=V  reads",
    "-o, --output=V",
    "-R, --recursive",
    "--show-managed-fields",
    "--template=V",
];

/// `kubectl delete`.
const K_DELETE: &[&str] = &[
    "--all",
    "-A, --all-namespaces",
    "--cascade[=V]",
    "--dry-run[=V]",
    "--field-selector=V",
    "-f, --filename=V  reads",
    "--force",
    "--grace-period=V",
    "--ignore-not-found",
    "-i, --interactive",
    "-k, --kustomize=V  reads",
    "--now",
    "-o, --output=V",
    "--raw=V",
    "-R, --recursive",
    "-l, --selector=V",
    "--timeout=V",
    "--wait",
];

/// `kubectl drain`.
const K_DRAIN: &[&str] = &[
    "--chunk-size=V",
    "--delete-emptydir-data",
    "--disable-eviction",
    "--dry-run[=V]",
    "--force",
    "--grace-period=V",
    "--ignore-daemonsets",
    "--pod-selector=V",
    "-l, --selector=V",
    "--skip-wait-for-delete-timeout=V",
    "--timeout=V",
];

/// `kubectl cordon`.
const K_CORDON: &[&str] = &["--dry-run[=V]", "-l, --selector=V"];

/// `kubectl taint`.
const K_TAINT: &[&str] = &[
    "--all",
    "--allow-missing-template-keys",
    "--dry-run[=V]",
    "--field-manager=V",
    "-o, --output=V",
    "--overwrite",
    "-l, --selector=V",
    "--show-managed-fields",
    "--template=V",
    "--validate[=V]",
];

/// `kubectl exec`.
const K_EXEC: &[&str] = &[
    "-c, --container=V",
    "-f, --filename=V  reads",
    "--pod-running-timeout=V",
    "-q, --quiet",
    "-i, --stdin",
    "-t, --tty",
];

/// `kubectl run`.
const K_RUN: &[&str] = &[
    "--allow-missing-template-keys",
    "--annotations=V",
    "--attach",
    "--cascade[=V]",
    "--command",
    "--dry-run[=V]",
    "--env=V",
    "--expose",
    "--field-manager=V",
    "-f, --filename=V  reads",
    "--force",
    "--grace-period=V",
    "--image=V",
    "--image-pull-policy=V",
    "-k, --kustomize=V  reads",
    "-l, --labels=V",
    "--leave-stdin-open",
    "-o, --output=V",
    "--override-type=V",
    "--overrides=V",
    "--pod-running-timeout=V",
    "--port=V",
    "--privileged  danger: runs a privileged pod, with full access to its node",
    "-q, --quiet",
    "-R, --recursive",
    "--restart=V",
    "--rm",
    "--save-config",
    "--show-managed-fields",
    "-i, --stdin",
    "--template=V",
    "--timeout=V",
    "-t, --tty",
    "--wait",
];

/// `kubectl attach`.
const K_ATTACH: &[&str] = &[
    "-c, --container=V",
    "--pod-running-timeout=V",
    "-q, --quiet",
    "-i, --stdin",
    "-t, --tty",
];

/// `kubectl debug`.
const K_DEBUG: &[&str] = &[
    "--arguments-only",
    "--attach",
    "-c, --container=V",
    "--copy-to=V",
    "--custom=V",
    "--env=V",
    "-f, --filename=V  reads",
    "--image=V",
    "--image-pull-policy=V",
    "--keep-annotations",
    "--keep-init-containers",
    "--keep-labels",
    "--keep-liveness",
    "--keep-readiness",
    "--keep-startup",
    "--profile=V",
    "-q, --quiet",
    "--replace",
    "--same-node",
    "--set-image=V",
    "--share-processes",
    "-i, --stdin",
    "--target=V",
    "-t, --tty",
];

/// `kubectl cp`.
const K_CP: &[&str] = &["-c, --container=V", "--no-preserve", "--retries=V"];

/// `kubectl port-forward`.
const K_PORT_FORWARD: &[&str] = &["--address=V", "--pod-running-timeout=V"];

/// `kubectl proxy`.
const K_PROXY: &[&str] = &[
    "--accept-hosts=V",
    "--accept-paths=V",
    "--address=V",
    "--api-prefix=V",
    "--append-server-path",
    "--disable-filter",
    "--keepalive=V",
    "-p, --port=V",
    "--reject-methods=V",
    "--reject-paths=V",
    "-u, --unix-socket=V",
    "-w, --www=V",
    "-P, --www-prefix=V",
];

#[cfg(test)]
pub(in crate::policy::programs) mod tests {
    use super::super::testing::{Table, assert_refused, dangerous, read, said};

    /// kubectl asks its API server on every run: to print its help, its version, its
    /// completion script, or its kubeconfig (the oracle saw each connect to
    /// 127.0.0.1:8080, the server it asks without a kubeconfig).
    #[test]
    fn every_kubectl_command_asks_the_api_server() {
        for cmd in [
            "kubectl version --client",
            "kubectl config view",
            "kubectl config current-context",
            "kubectl completion bash",
            "kubectl plugin list",
            "kubectl create secret",
            "kubectl -n x",
        ] {
            let u = read(cmd);
            assert!(!u.harmless(), "{cmd} must not be harmless");
            assert!(said(cmd).contains("cluster"), "{cmd}: {}", said(cmd));
        }
    }

    /// Harmless.
    const HARMLESS: &[&str] = &[
        "systemctl",
        "systemctl --user list-units",
        "systemctl list-timers --all",
        "systemctl list-unit-files --type=service --state=enabled",
        "systemctl is-active nginx",
        "systemctl is-enabled nginx",
        "systemctl is-failed nginx",
        "systemctl list-dependencies nginx",
        "systemctl log-level",
    ];

    /// Under `docker *`, `kubectl *`: the network and ordinary reads only.
    const COVERED: &[&str] = &[
        // docker asks its daemon on every run: what it reads lies outside the project.
        "docker ps -a",
        "docker ps -aq --filter status=exited",
        "docker images",
        "docker container ls -a",
        "docker image ls",
        "docker logs --tail 50 web",
        "docker stats --no-stream",
        "docker version",
        "docker info",
        "docker top web -ef",
        "docker port web",
        "docker diff web",
        "docker history ubuntu",
        "docker inspect -f '{{.State.Status}}' web",
        "docker inspect -f '{{json .NetworkSettings.Networks}}' web",
        "docker inspect -f '{{.Config.Image}} {{.RestartCount}}' web",
        "docker inspect --type image ubuntu",
        "docker image inspect ubuntu",
        "docker volume ls",
        "docker network ls",
        "docker system df",
        "docker context ls",
        "docker compose ps",
        "docker compose logs -f web",
        "docker compose config --services",
        "docker-compose ps",
        // kubectl asks its API server on every run, whatever the subcommand (the oracle
        // saw each of these connect).
        "kubectl version --client",
        "kubectl config current-context",
        "kubectl config get-contexts",
        "kubectl completion bash",
        "kubectl plugin list",
        "systemctl status nginx",
        "systemctl status nginx --no-pager -l",
        "docker pull ubuntu:24.04",
        "docker push me/app:1",
        "docker search nginx",
        "docker compose pull",
        "kubectl get pods",
        // With no subcommand it asks the API server before printing its help.
        "kubectl -n kube-system",
        "kubectl --request-timeout 3",
        "kubectl get pods -n kube-system -o wide",
        "kubectl get po -w -l app=web",
        "kubectl get secrets",
        "kubectl get secret -o name",
        "kubectl describe pod web-1",
        "kubectl logs -f deploy/web -c app --since=1h",
        "kubectl explain pods.spec",
        "kubectl api-resources",
        "kubectl top pod",
        "kubectl top nodes",
        "kubectl version",
        "kubectl config view",
        "kubectl rollout status deploy/web",
        "kubectl events -A",
        "kubectl auth can-i get pods",
        "kubectl wait --for=condition=ready pod/web",
        "kubectl apply --dry-run=client -f deploy.yaml",
        "kubectl create deployment web --image=nginx --dry-run=client -o yaml",
        "kubectl delete pod web --dry-run=server",
        "kubectl kustomize overlays/prod",
        "kubectl get pods -v=6",
    ];

    /// Refused under a glob naming only the program, and a phrase the reasons must contain.
    const REFUSED: &[(&str, &str)] = &[
        (
            "docker run -it --rm ubuntu bash",
            "`docker run` runs a container",
        ),
        (
            "docker create ubuntu",
            "`docker create` creates a container",
        ),
        (
            "docker exec -it web sh",
            "`docker exec` runs a command in a running container",
        ),
        (
            "docker start web",
            "`docker start` starts containers, which run their code",
        ),
        ("docker attach web", "attaches this terminal's input"),
        (
            "docker build -t app .",
            "builds an image, running the Dockerfile's instructions",
        ),
        (
            "docker build --ssh default .",
            "`docker build --ssh` gives the build your SSH agent",
        ),
        (
            "docker build --secret id=n,src=/home/u/.npmrc .",
            "reads a secret (`/home/u/.npmrc`)",
        ),
        ("docker build -o out .", "writes `out`"),
        (
            "docker build --output type=local,dest=dist .",
            "writes `dist`",
        ),
        (
            "docker -H tcp://h:2375 ps",
            "`docker --host` talks to another Docker daemon",
        ),
        (
            "docker --context prod ps",
            "`docker --context` talks to another Docker daemon",
        ),
        (
            "docker --config /tmp/d pull x",
            "`docker --config` uses another client configuration",
        ),
        (
            "docker --tlsverify ps",
            "changes how the client reaches the daemon",
        ),
        ("docker login -u me", "stores registry credentials"),
        ("docker logout", "removes stored registry credentials"),
        (
            "docker cp web:/etc/app.conf ./app.conf",
            "writes `./app.conf`",
        ),
        ("docker cp ./conf web:/etc/", "writes `web:/etc/`"),
        ("docker save -o img.tar app", "writes `img.tar`"),
        ("docker export -o fs.tar web", "writes `fs.tar`"),
        ("docker load -i img.tar", "loads images into Docker"),
        ("docker tag app me/app:1", "tags an image"),
        (
            "docker commit web snap",
            "creates an image from a container",
        ),
        ("docker context use prod", "switches the Docker daemon"),
        ("docker run --env-file .env app", "reads a secret (`.env`)"),
        ("docker run -v ./src:/app app", "writes `./src`"),
        (
            "docker run -v /home/u/.ssh:/root/.ssh:ro app",
            "reads a secret",
        ),
        ("docker run --cidfile id.txt app", "writes `id.txt`"),
        (
            "docker inspect web",
            "`inspect` prints containers' configuration, their environment variables",
        ),
        (
            "docker inspect -f '{{json .Config.Env}}' web",
            "environment variables",
        ),
        (
            "docker inspect -f '{{json .Spec}}' web",
            "environment variables",
        ),
        (
            "docker inspect --format '{{.Config.Labels}}' web",
            "environment variables",
        ),
        ("kubectl config view --flatten", "does not redact"),
        (
            "docker compose up -d",
            "`docker compose up` starts the project's services",
        ),
        (
            "docker compose run --rm web sh",
            "`docker compose run` runs a one-off container",
        ),
        (
            "docker compose exec web ls",
            "`docker compose exec` runs a command in a service's container",
        ),
        ("docker compose build", "builds the services' images"),
        (
            "docker compose config",
            "prints the project with environment variables",
        ),
        (
            "docker compose -f other.yml --project-directory /srv up",
            "uses the Compose project of another directory",
        ),
        (
            "kubectl apply -f deploy.yaml",
            "`kubectl apply` changes the cluster",
        ),
        (
            "kubectl create namespace x",
            "`kubectl create namespace` changes the cluster",
        ),
        (
            "kubectl patch deploy web -p '{}'",
            "`kubectl patch` changes the cluster",
        ),
        (
            "kubectl scale deploy web --replicas=3",
            "`kubectl scale` changes the cluster",
        ),
        (
            "kubectl rollout restart deploy/web",
            "`kubectl rollout restart` changes the cluster",
        ),
        (
            "kubectl label pod web a=b",
            "`kubectl label` changes the cluster",
        ),
        (
            "kubectl set image deploy/web app=nginx:2",
            "`kubectl set image` changes the cluster",
        ),
        (
            "kubectl edit deploy/web",
            "opens the resources in an editor",
        ),
        (
            "kubectl exec -it web -- sh",
            "`kubectl exec` runs a command in a container",
        ),
        (
            "kubectl run tmp --image=busybox -- sh",
            "`kubectl run` runs a new pod",
        ),
        ("kubectl cp web:/etc/x ./x", "running `tar` in it"),
        (
            "kubectl port-forward svc/web 8080:80",
            "opens local ports that lead into a pod",
        ),
        ("kubectl proxy", "serves the cluster's API on a local port"),
        ("kubectl attach web -i", "attaches this terminal's input"),
        (
            "kubectl debug web -it --image=busybox",
            "starts a debugging container",
        ),
        (
            "kubectl --kubeconfig /tmp/k get pods",
            "`kubectl --kubeconfig` uses another kubeconfig",
        ),
        (
            "kubectl get pods --context prod",
            "`kubectl get --context` uses another kubeconfig context",
        ),
        (
            "kubectl get pods -s https://x",
            "`kubectl get --server` talks to another API server",
        ),
        (
            "kubectl get pods --token t",
            "`kubectl get --token` authenticates with another token",
        ),
        (
            "kubectl get pods --as admin",
            "`kubectl get --as` acts as another user",
        ),
        (
            "kubectl get secret db -o yaml",
            "`get secret` with `-o` prints secrets' values",
        ),
        (
            "kubectl get secrets/db -ojsonpath={.data.password}",
            "prints secrets' values",
        ),
        ("kubectl get pods,secrets -o json", "prints secrets' values"),
        (
            "kubectl get --raw /api/v1/namespaces/x/secrets/db",
            "`get --raw` prints secrets' values",
        ),
        (
            "kubectl describe secret db",
            "`describe secret` prints service-account tokens in full",
        ),
        (
            "kubectl config view --raw",
            "`kubectl config view --raw` prints the credentials in the kubeconfig",
        ),
        (
            "kubectl create token deployer",
            "prints a new token for the service account",
        ),
        (
            "kubectl set env deploy/web --list",
            "prints the workloads' environment variables",
        ),
        ("kubectl config use-context prod", "changes the kubeconfig"),
        (
            "kubectl config set users.me.exec.command /tmp/x",
            "names a program kubectl runs",
        ),
        (
            "kubectl create secret generic s --from-file=k=/home/u/.ssh/id_rsa",
            "reads a secret (`/home/u/.ssh/id_rsa`)",
        ),
        (
            "kubectl kustomize --enable-helm .",
            "`kubectl kustomize --enable-helm` runs helm",
        ),
        ("kubectl get pods --profile=cpu", "writes `profile.pprof`"),
        ("kubectl get secret db -v=9", "logs the cluster's responses"),
        (
            "systemctl start nginx",
            "`systemctl start` starts, restarts or reloads units",
        ),
        (
            "systemctl restart nginx",
            "`systemctl restart` starts, restarts or reloads units",
        ),
        ("systemctl reload nginx", "reloads units"),
        (
            "systemctl enable --now nginx",
            "`systemctl enable` changes which units start at boot",
        ),
        (
            "systemctl daemon-reload",
            "reloads the service manager's configuration",
        ),
        (
            "systemctl set-property nginx CPUQuota=10%",
            "changes a running unit",
        ),
        ("systemctl reset-failed", "resets units' failed state"),
        (
            "systemctl edit nginx",
            "`systemctl edit` opens unit files in an editor",
        ),
        (
            "systemctl show-environment",
            "prints the service manager's environment",
        ),
        (
            "systemctl -H admin@host status x",
            "`systemctl --host` operates on another machine",
        ),
        (
            "systemctl -M box status",
            "`systemctl --machine` operates on a local container",
        ),
        (
            "systemctl log-level debug",
            "sets the service manager's setting to `debug`",
        ),
        (
            "docker compose cp web:/etc/app.conf ./app.conf",
            "writes `./app.conf`",
        ),
        (
            "docker container inspect web",
            "`inspect` prints containers' configuration, their environment variables",
        ),
        ("docker import fs.tar app", "reads `fs.tar`"),
        (
            "kubectl apply view-last-applied -f deploy.yaml",
            "`view-last-applied` prints the applied manifests, secrets' values included",
        ),
        (
            "kubectl config set-credentials me --auth-provider=gcp",
            "`kubectl config set-credentials --auth-provider` makes kubectl use an authentication provider plugin",
        ),
        (
            "kubectl config set-credentials me --exec-command=/tmp/x",
            "`kubectl config set-credentials --exec-command` makes kubectl run COMMAND to get credentials",
        ),
        (
            "kubectl create configmap app --from-file=app.conf",
            "reads `app.conf`",
        ),
        (
            "kubectl create secret docker-registry r --from-file=.dockerconfigjson=/home/u/.docker/config.json",
            "reads a secret (`/home/u/.docker/config.json`)",
        ),
        (
            "kubectl kustomize --enable-alpha-plugins .",
            "`kubectl kustomize --enable-alpha-plugins` runs kustomize plugins",
        ),
        (
            "kubectl kustomize --enable-helm --helm-command=/tmp/h .",
            "`kubectl kustomize --helm-command` runs COMMAND as helm",
        ),
        (
            "systemctl service-log-level nginx debug",
            "sets a service's logging to `debug`",
        ),
    ];

    /// Dangerous.
    const DANGEROUS: &[&str] = &[
        "docker rm -f web",
        "docker container rm web",
        "docker rmi app",
        "docker image rm app",
        "docker kill web",
        "docker stop web",
        "docker restart web",
        "docker system prune -af",
        "docker system prune --volumes",
        "docker container prune -f",
        "docker image prune -a",
        "docker volume rm data",
        "docker volume prune",
        "docker network rm net",
        "docker builder prune",
        "docker compose down",
        "docker compose down -v",
        "docker compose rm -f",
        "docker compose stop",
        "docker run --privileged alpine",
        "docker run --pid=host alpine",
        "docker run --net=host alpine",
        "docker run --network host alpine",
        "docker run --userns=host alpine",
        "docker run --ipc host alpine",
        "docker run -v /:/host alpine",
        "docker run -v /var/run/docker.sock:/var/run/docker.sock alpine",
        "docker run --mount type=bind,source=/etc,target=/etc alpine",
        "docker run --cap-add SYS_ADMIN alpine",
        "docker run --device /dev/sda alpine",
        "docker run --security-opt seccomp=unconfined alpine",
        "docker run --use-api-socket alpine",
        "docker create --privileged alpine",
        "docker container run -v /etc:/x alpine",
        "docker exec --privileged web sh",
        "docker compose run -v /:/h web",
        "docker compose exec --privileged web sh",
        "docker build --allow network.host .",
        "kubectl delete pod web",
        "kubectl delete ns prod --dry-run=none",
        "kubectl drain node1 --ignore-daemonsets",
        "kubectl cordon node1",
        "kubectl taint nodes n1 k=v:NoExecute",
        "kubectl apply --prune -l app=web -f dir/",
        "kubectl replace --force -f x.yaml",
        "kubectl debug node/n1 -it --image=busybox",
        "kubectl debug web --profile=sysadmin -it --image=busybox",
        "kubectl run x --image=busybox --privileged",
        "systemctl stop nginx",
        "systemctl disable nginx",
        "systemctl mask nginx",
        "systemctl kill nginx",
        "systemctl isolate rescue.target",
        "systemctl poweroff",
        "systemctl reboot",
        "systemctl halt",
        "systemctl suspend",
        "systemctl hibernate",
        "systemctl kexec",
        "systemctl emergency",
        "systemctl rescue",
        "systemctl default",
        "systemctl clean nginx",
        "systemctl start --job-mode=isolate x",
    ];

    /// Not dangerous.
    const NOT_DANGEROUS: &[&str] = &[
        "docker ps",
        "docker run -v ./src:/app -v data:/data app",
        "docker compose up -d",
        "kubectl delete pod web --dry-run=client",
        "kubectl apply -f x.yaml",
        "systemctl restart nginx",
    ];

    /// What the programs refuse, or execgate does not know, and a phrase the reasons
    /// must contain.
    const NOT_UNDERSTOOD: &[(&str, &str)] = &[
        ("docker frob", "`frob` is not a `docker` subcommand"),
        // docker's global options only come before the subcommand.
        ("docker ps --context x", "`--context` is not an option"),
        ("docker ps -H x", "`-H` is not an option"),
        // No abbreviations in docker (cobra): the reader's in-order mode knows them,
        // docker refuses the command.
        ("docker run --privi alpine", "docker takes no abbreviations"),
        ("docker ps --al", "`--al` is not an option"),
        ("docker compose up -f x.yml", "`-f` is not an option"),
        ("docker compose frob", "not a `docker compose` subcommand"),
        (
            "docker run -v x:/y --mount type=bind,target=/y alpine",
            "cannot read the source",
        ),
        ("docker cp a b", "exactly one side must be a container"),
        (
            "kubectl myplugin",
            "`myplugin` is not a `kubectl` subcommand",
        ),
        ("kubectl get pods --frob", "`--frob` is not an option"),
        (
            "kubectl delete pod x --dry-run=maybe",
            "takes only none, client or server",
        ),
        (
            "systemctl frobnicate",
            "`frobnicate` is not a `systemctl` subcommand",
        ),
        ("systemctl --no-pag status", "abbreviates `--no-pager`"),
    ];

    /// Dangerous, and a phrase the reasons must contain.
    const DANGEROUS_AND_WHY: &[(&str, &str)] = &[
        (
            "docker create --cap-add SYS_ADMIN alpine",
            "`docker create --cap-add` gives the container extra kernel capabilities",
        ),
        (
            "docker create --device /dev/sda alpine",
            "`docker create --device` gives the container a device of the host",
        ),
        (
            "docker create --use-api-socket alpine",
            "`docker create --use-api-socket` gives the container Docker's API socket",
        ),
        (
            "docker compose down --rmi all",
            "`docker compose down --rmi` deletes the images the services use",
        ),
        (
            "docker compose rm -v -f",
            "`docker compose rm --volumes` deletes the containers' anonymous volumes",
        ),
        (
            "docker compose run --cap-add SYS_ADMIN web",
            "`docker compose run --cap-add` gives the container extra kernel capabilities",
        ),
        (
            "docker compose up -V",
            "`docker compose up --renew-anon-volumes` discards the data in the containers' anonymous volumes",
        ),
        (
            "docker compose wait --down-project web",
            "`docker compose wait --down-project` takes the whole project down when the first container stops",
        ),
        (
            "kubectl apply --force -f x.yaml",
            "`kubectl apply --force` deletes and re-creates resources it cannot patch",
        ),
    ];

    /// Every table above, for the test that every option and check has a case
    /// (`programs::tests`).
    pub(in crate::policy::programs) const TABLES: &[&dyn Table] = &[
        &HARMLESS,
        &COVERED,
        &REFUSED,
        &DANGEROUS,
        &DANGEROUS_AND_WHY,
        &NOT_DANGEROUS,
        &NOT_UNDERSTOOD,
    ];

    #[test]
    fn ops_harmless() {
        for &c in HARMLESS {
            let u = read(c);
            assert!(u.harmless(), "{c:?}: {}", said(c));
        }
    }

    /// Under `docker *`, `kubectl *`: the network and ordinary reads only.
    #[test]
    fn ops_a_glob_covers() {
        for &c in COVERED {
            let u = read(c);
            assert!(u.understood() && !u.harmless(), "{c:?}: {}", said(c));
            assert_eq!(u.glob_refusal(1, &[]), None, "{c:?}: {}", said(c));
        }
        assert_eq!(
            said("kubectl get pods"),
            "`kubectl get` reads from the cluster"
        );
        assert_eq!(
            said("kubectl -n x"),
            "`kubectl` asks the cluster's API server, even with no subcommand"
        );
        assert_eq!(
            said("docker pull x"),
            "`docker pull` downloads an image from a registry"
        );
        assert_eq!(
            said("kubectl delete pod web --dry-run=server"),
            "`--dry-run` only shows what would change in the cluster"
        );
    }

    #[test]
    fn ops_what_a_glob_refuses_and_why() {
        for &(c, what) in REFUSED {
            assert_refused(c, what);
            assert!(!read(c).harmless(), "{c:?}");
        }
    }

    #[test]
    fn ops_dangers() {
        for &c in DANGEROUS {
            assert!(dangerous(c), "{c:?} must be dangerous: {}", said(c));
        }
        for &(c, what) in DANGEROUS_AND_WHY {
            let s = said(c);
            assert!(dangerous(c), "{c:?} must be dangerous: {s}");
            assert!(s.contains(what), "{c:?}: expected {what:?} in {s:?}");
        }
        for &c in NOT_DANGEROUS {
            assert!(!dangerous(c), "{c:?} is not dangerous: {}", said(c));
        }
        assert!(
            said("docker run -v /:/host alpine")
                .contains("`-v /:/host` gives the container the host's `/`")
        );
        assert!(
            said("docker run --pid=host alpine")
                .contains("`--pid=host` shares the host's processes with the container")
        );
        assert!(
            said("docker compose down -v")
                .contains("deletes the project's named volumes, and the data in them")
        );
        assert!(
            said("kubectl drain n1").contains("`kubectl drain` evicts every pod from the node")
        );
        assert!(
            said("systemctl poweroff")
                .contains("stops, suspends or changes the state of the whole system")
        );
    }

    #[test]
    fn ops_refuse_what_they_do_not_know() {
        for &(c, what) in NOT_UNDERSTOOD {
            let u = read(c);
            let s = said(c);
            assert!(!u.understood(), "{c:?}: {s}");
            assert!(s.contains(what), "{c:?}: expected {what:?} in {s:?}");
            assert!(u.glob_refusal(1, &[]).is_some(), "{c:?}");
        }
    }
}
