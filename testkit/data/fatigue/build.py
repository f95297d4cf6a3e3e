#!/usr/bin/env python3
"""The fatigue corpus: shell commands real coding agents ran, and the class of each.

    python3 testkit/data/fatigue/build.py --extract [--mirror DIR]
        Reads every source below from its fetched git snapshot (DIR/<owner>+<name>/repo,
        DIR defaulting to /work/.mirror), pinned at the commit named here, extracts the
        commands the agents issued, puts each source project's own root path to
        `{project}`, keeps at most CAP commands a source project, classifies them (rules
        below, then overrides.tsv) and writes commands.jsonl.
    python3 testkit/data/fatigue/build.py --classify
        Re-derives the class of every line of commands.jsonl from the rules and
        overrides.tsv, and fails (exit 1, listing the lines) if any differs.
    python3 testkit/data/fatigue/build.py --explain 'COMMAND'
        Prints the class of one command and why (each simple command's class).
    python3 testkit/data/fatigue/build.py --sample N [--seed S]
        Prints N lines of the corpus chosen at random (for review by eye).

Standard library only (python3 3.11). See README.md beside this file.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import re
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "commands.jsonl")
OVERRIDES = os.path.join(HERE, "overrides.tsv")

# At most this many commands from any one source project.
CAP = 1500

CLASSES = ("read", "code", "write", "net", "outside")
RANK = {c: i for i, c in enumerate(CLASSES)}

# ── The sources ────────────────────────────────────────────────────────────────────────
#
# kind:
#   specstory  Cursor chat histories saved by SpecStory (.specstory/history/*.md): each
#              terminal tool call is a ```bash block that opens a `---`-separated segment
#              (the early format) or follows "Tool use: **run_terminal_cmd**".
#   entire     Entire's checkpoints branch (entire/checkpoints/v1): each session's full
#              agent transcript (full.jsonl), in the agent's own format: Claude Code's
#              session log (tool_use "Bash"), Codex's rollout (function_call
#              "exec_command"/"shell"/"shell_command"), Copilot CLI's events
#              (tool.execution_start "bash").
#   automaker  Automaker's per-feature logs (.automaker/features/*/agent-output.md):
#              "🔧 Tool: Bash" with its JSON input; the feature's feature.json names the
#              model (codex-* is Codex CLI).
# roots: the source project's own root, as its commands spell it (each becomes
#   `{project}`); for entire, each transcript's own working directory is its root too.
# agents: for entire and automaker, which agents' commands to take.
SOURCES = [
    {
        "id": "minsky",
        "repo": "edobry/minsky",
        "commit": "39b37d6cf616d018e42fb69eef4e3b349aa2966d",
        "kind": "specstory",
        "agent": "cursor",
        "roots": ["/Users/edobry/Projects/minsky"],
        "license": "MIT",
    },
    {
        "id": "chef-chopsky",
        "repo": "daviswhitehead/chef-chopsky",
        "commit": "513a7ef9bbc8caf3905813c63888933a8c2bfe97",
        "kind": "specstory",
        "agent": "cursor",
        "roots": [
            "/Users/daviswhitehead/Library/CloudStorage/GoogleDrive-whitehead.davis@gmail.com/My\\ Drive/github/chef-chopsky",
            "/Users/daviswhitehead/Library/CloudStorage/GoogleDrive-whitehead.davis@gmail.com/My Drive/github/chef-chopsky",
            "/Users/daviswhitehead/Documents/github/chef-chopsky",
        ],
        "license": "CC0-1.0",
    },
    {
        "id": "focuslab",
        "repo": "learnwithcc/focuslab",
        "commit": "1a1298448f9847195b81255d24e40ac17ca4acc7",
        "kind": "specstory",
        "agent": "cursor",
        "roots": ["/Users/cryophobic/dev/projects/focuslab"],
        "license": "not stated",
    },
    {
        "id": "politipo",
        "repo": "simbolico/politipo",
        "commit": "9b420b027629b71b99ec4c5cd96846a43df48f35",
        "kind": "specstory",
        "agent": "cursor",
        # a Replit workspace: the project is the workspace
        "roots": ["/home/runner/workspace"],
        "license": "not stated",
    },
    {
        "id": "entire-cli",
        "repo": "entireio/cli",
        "commit": "394f81fab87f71aa8938d91ff7a067c524ff344b",
        "kind": "entire",
        "roots": ["/Users/alex/workspace/cli", "/Users/soph/Work/entire/devenv/cli"],
        "license": "MIT",
    },
    {
        "id": "cipher-box",
        "repo": "FSM1/cipher-box",
        "commit": "e227f1183b594fa6bd5dbe58c75272434067e89b",
        "kind": "entire",
        "roots": [],
        "license": "MIT",
    },
    {
        "id": "repiq",
        "repo": "yutakobayashidev/repiq",
        "commit": "a26c516407605bc1eed371774e25f5b17dc4038e",
        "kind": "entire",
        "roots": ["/home/yuta/ghq/github.com/yutakobayashidev/repiq"],
        "license": "MIT",
    },
    {
        "id": "agentv",
        "repo": "EntityProcess/agentv",
        "commit": "47dca0eea369e545808f72dd9473c846f66dd79f",
        "kind": "entire",
        "roots": ["/home/entity/projects/EntityProcess/agentv"],
        "license": "MIT",
    },
    {
        "id": "pradeep",
        "repo": "yinkev/praDeep",
        "commit": "a67f04fca067f00c80dafdbc9e8d3b2b35dd1056",
        "kind": "automaker",
        "agents": ["codex"],
        "roots": ["/Users/kyin/Projects/praDeep"],
        "license": "AGPL-3.0",
    },
]


# ── Extraction ─────────────────────────────────────────────────────────────────────────


def git(gitdir: str, *args: str) -> bytes:
    out = subprocess.run(["git", "--git-dir", gitdir, *args], capture_output=True)
    return out.stdout


def git_text(gitdir: str, *args: str) -> str:
    return git(gitdir, *args).decode("utf-8", errors="replace")


def latest_versions(gitdir: str, commit: str, prefix: str) -> list[tuple[str, str]]:
    """(commit, path) of the newest version of every file ever under `prefix` in the
    history of `commit` (a file deleted later is taken as it was before)."""
    log = git(gitdir, "log", "--format=%x00C%H", "--name-status", "-z", commit, "--", prefix)
    seen: dict[str, str] = {}
    order: list[str] = []
    current = None
    fields = log.decode("utf-8", errors="replace").split("\0")
    i = 0
    while i < len(fields):
        f = fields[i].strip("\n")
        if f.startswith("C") and len(f) == 41:
            current = f[1:]
            i += 1
            continue
        if f in ("A", "M", "D") or f.startswith("R") or f.startswith("C"):
            status = f
            if status.startswith("R") or (status.startswith("C") and len(status) > 1):
                path = fields[i + 2] if i + 2 < len(fields) else ""
                i += 3
            else:
                path = fields[i + 1] if i + 1 < len(fields) else ""
                i += 2
            if path and path not in seen:
                if status == "D":
                    seen[path] = ""
                else:
                    seen[path] = current
                    order.append(path)
            elif path and seen.get(path) == "" and status != "D":
                seen[path] = current
                order.append(path)
            continue
        i += 1
    return sorted((seen[p], p) for p in order if seen[p])


FENCE = re.compile(r"^```(?:bash|sh|shell|zsh)?\s*$")


def specstory_commands(text: str) -> list[str]:
    """The terminal commands of one SpecStory history file of a Cursor session."""
    lines = text.splitlines()
    out: list[str] = []
    # Segments are separated by lines "---".
    segments: list[list[str]] = [[]]
    for line in lines:
        if line.strip() == "---":
            segments.append([])
        else:
            segments[-1].append(line)
    for seg in segments:
        body = [l for l in seg]
        # skip leading blank lines
        k = 0
        while k < len(body) and not body[k].strip():
            k += 1
        if k >= len(body):
            continue
        head = body[k]
        start = None
        if head.strip() == "```bash":
            start = k
        elif "Tool use: **run_terminal_cmd**" in head or (
            head.lstrip().startswith("<tool-use") and 'data-tool-name="run_terminal_cmd"' in head
        ):
            for j in range(k + 1, len(body)):
                if body[j].strip() == "```bash":
                    start = j
                    break
        if start is None:
            continue
        cmd_lines = []
        closed = False
        for j in range(start + 1, len(body)):
            if body[j].strip() == "```":
                closed = True
                break
            cmd_lines.append(body[j])
        if not closed:
            continue
        cmd = "\n".join(cmd_lines).strip()
        if cmd:
            out.append(cmd)
    return out


def unwrap_shell(cmd):
    """Codex runs each command as [shell, -lc, SCRIPT] (or a string so spelled): the
    script is what the agent wrote."""
    if isinstance(cmd, list):
        if len(cmd) >= 3 and os.path.basename(cmd[0]) in ("bash", "zsh", "sh") and cmd[1] in ("-lc", "-c"):
            return cmd[2]
        return shlex.join(cmd)
    m = re.match(r"^(?:/bin/|/usr/bin/)?(?:bash|zsh|sh) -l?c (.*)$", cmd, re.S)
    if m:
        try:
            words = shlex.split(m.group(1))
        except ValueError:
            return cmd
        if len(words) == 1:
            return words[0]
    return cmd


def transcript_commands(raw: str):
    """(agent, call id, command, cwd) of every shell call in one agent transcript."""
    out = []
    cwd = None
    for line in raw.splitlines():
        try:
            o = json.loads(line)
        except ValueError:
            continue
        if not isinstance(o, dict):
            continue
        t = o.get("type")
        # Claude Code's session log.
        if t == "assistant" and isinstance(o.get("message"), dict):
            cwd = o.get("cwd") or cwd
            content = o["message"].get("content")
            if isinstance(content, list):
                for c in content:
                    if (
                        isinstance(c, dict)
                        and c.get("type") == "tool_use"
                        and c.get("name") == "Bash"
                        and isinstance(c.get("input"), dict)
                        and isinstance(c["input"].get("command"), str)
                    ):
                        out.append(("claude-code", c.get("id"), c["input"]["command"], o.get("cwd")))
        elif t in ("user", "system") and o.get("cwd"):
            cwd = cwd or o.get("cwd")
        # Codex's rollout.
        elif t == "session_meta" and isinstance(o.get("payload"), dict):
            cwd = o["payload"].get("cwd") or cwd
        elif t == "turn_context" and isinstance(o.get("payload"), dict):
            cwd = o["payload"].get("cwd") or cwd
        elif t == "response_item" and isinstance(o.get("payload"), dict):
            p = o["payload"]
            if p.get("type") == "function_call" and p.get("name") in ("exec_command", "shell", "shell_command", "container.exec"):
                try:
                    args = json.loads(p.get("arguments") or "{}")
                except ValueError:
                    continue
                cmd = args.get("cmd") if "cmd" in args else args.get("command")
                if cmd is None:
                    continue
                cmd = unwrap_shell(cmd)
                if isinstance(cmd, str) and cmd.strip():
                    out.append(("codex", p.get("call_id"), cmd, args.get("workdir") or cwd))
            elif p.get("type") == "local_shell_call":
                action = p.get("action") or {}
                cmd = unwrap_shell(action.get("command") or [])
                if cmd:
                    out.append(("codex", p.get("call_id"), cmd, action.get("working_directory") or cwd))
        # Copilot CLI's events.
        elif t == "session.start" and isinstance(o.get("data"), dict):
            ctx = o["data"].get("context") or {}
            cwd = ctx.get("cwd") or cwd
        elif t == "hook.start" and isinstance(o.get("data"), dict):
            inp = o["data"].get("input") or {}
            if isinstance(inp, dict):
                cwd = cwd or inp.get("cwd")
        elif t == "tool.execution_start" and isinstance(o.get("data"), dict):
            d = o["data"]
            if d.get("toolName") == "bash" and isinstance(d.get("arguments"), dict):
                cmd = d["arguments"].get("command")
                if isinstance(cmd, str) and cmd.strip():
                    out.append(("copilot-cli", d.get("toolCallId"), cmd, cwd))
    # The transcript's root: the first working directory it names.
    return out, cwd


def first_cwd(raw: str):
    for line in raw.splitlines()[:200]:
        try:
            o = json.loads(line)
        except ValueError:
            continue
        if not isinstance(o, dict):
            continue
        if o.get("cwd"):
            return o["cwd"]
        p = o.get("payload")
        if isinstance(p, dict) and p.get("cwd"):
            return p["cwd"]
        d = o.get("data")
        if isinstance(d, dict):
            if isinstance(d.get("context"), dict) and d["context"].get("cwd"):
                return d["context"]["cwd"]
            if isinstance(d.get("input"), dict) and d["input"].get("cwd"):
                return d["input"]["cwd"]
    return None


# Credentials some commands carry (API keys, tokens): each becomes `<redacted>`.
CREDENTIAL = re.compile(
    r"sb_(?:publishable|secret)_[A-Za-z0-9_-]{10,}|lsv2_[a-z]+_[A-Za-z0-9_]{10,}"
    r"|sk-(?:proj-|ant-)?(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{20,}"
    r"|github_pat_\w{20,}|AKIA[0-9A-Z]{16}|xox[abpr]-[\w-]{10,}|AIza[\w-]{30,}"
    r"|eyJ[\w-]{15,}\.[\w-]{10,}\.[\w-]{10,}|glpat-[\w-]{20,}|npm_[A-Za-z0-9]{30,}"
)


def normalise(cmd: str, roots) -> str:
    """Each spelling of the project's root becomes `{project}` (longest first, and only
    where a path component ends); credentials become `<redacted>`."""
    cmd = CREDENTIAL.sub("<redacted>", cmd)
    for root in sorted({r.rstrip("/") for r in roots if r and len(r) > 1}, key=len, reverse=True):
        cmd = re.sub(re.escape(root) + r"(?=$|[/\s\"';&|)`:])", "{project}", cmd)
    return cmd


def extract_source(src, mirror):
    gitdir = os.path.join(mirror, src["repo"].replace("/", "+"), "repo")
    if not os.path.isdir(gitdir):
        sys.exit(f"{src['id']}: no snapshot at {gitdir} (fetch github:{src['repo']})")
    rows = []  # (agent, command)
    if src["kind"] == "specstory":
        commit = src["commit"]
        for c, path in latest_versions(gitdir, commit, ".specstory/history"):
            text = git_text(gitdir, "show", f"{c}:{path}")
            # Cursor's sessions only (VS Code/Copilot ones record no commands).
            for cmd in specstory_commands(text):
                rows.append((src["agent"], normalise(cmd, src["roots"])))
        used = commit
    elif src["kind"] == "entire":
        ref = "refs/heads/entire/checkpoints/v1"
        tip = git_text(gitdir, "rev-parse", ref).strip()
        used = src["commit"] or tip  # pinned; the tip when a source is first added
        listing = git_text(gitdir, "ls-tree", "-r", "--name-only", used).splitlines()
        seen = set()
        for path in sorted(p for p in listing if p.endswith("/full.jsonl")):
            raw = git_text(gitdir, "show", f"{used}:{path}")
            if not raw:
                continue  # a blob of 4 MiB or more: not in the snapshot
            calls, _ = transcript_commands(raw)
            root = first_cwd(raw)
            for agent, call_id, cmd, cwd in calls:
                key = (agent, call_id, cmd) if call_id else (agent, path, cmd, len(seen))
                if key in seen:
                    continue  # the same call, in a later checkpoint of the session
                seen.add(key)
                rows.append((agent, normalise(cmd, [root, cwd] + src["roots"])))
    elif src["kind"] == "automaker":
        used = src["commit"] or git_text(gitdir, "rev-parse", "HEAD").strip()
        listing = git_text(gitdir, "ls-tree", "-r", "--name-only", "-z", used, "--", ".automaker").split("\0")
        feats = collections.defaultdict(dict)
        for p in listing:
            m = re.match(r"\.automaker/features/([^/]+)/(feature\.json|agent-output\.md)$", p)
            if m:
                feats[m.group(1)][m.group(2)] = p
        for fid in sorted(feats):
            d = feats[fid]
            if "agent-output.md" not in d or "feature.json" not in d:
                continue
            try:
                model = str(json.loads(git_text(gitdir, "show", f"{used}:{d['feature.json']}")).get("model", ""))
            except ValueError:
                continue
            agent = "codex" if model.startswith("codex") else None
            if agent not in src.get("agents", []):
                continue
            text = git_text(gitdir, "show", f"{used}:{d['agent-output.md']}")
            for m in re.finditer(r"🔧 Tool: Bash\nInput: (\{.*?\n\})", text, re.S):
                try:
                    cmd = json.loads(m.group(1)).get("command")
                except ValueError:
                    continue
                if isinstance(cmd, str) and cmd.strip():
                    rows.append((agent, normalise(unwrap_shell(cmd), src["roots"])))
    else:
        raise ValueError(src["kind"])
    return rows, used


def cap(rows, n):
    """At most n rows, spread evenly over the source (deterministic)."""
    if len(rows) <= n:
        return rows
    step = len(rows) / n
    return [rows[int(i * step)] for i in range(n)]


def keep(cmd: str) -> bool:
    """Commands a Linux/macOS shell would run: not PowerShell/cmd.exe ones, not empty."""
    if not cmd.strip():
        return False
    if re.search(r"\b[A-Za-z]:\\", cmd):
        return False
    if re.search(r"\b(Get-ChildItem|Select-String|Get-Content|Remove-Item|Set-Location|Write-Host)\b", cmd):
        return False
    return True


def do_extract(mirror):
    overrides = load_overrides()
    lines = []
    report = []
    for src in SOURCES:
        rows, used = extract_source(src, mirror)
        rows = [r for r in rows if keep(r[1])]
        total = len(rows)
        rows = cap(rows, CAP)
        per_agent = collections.Counter(a for a, _ in rows)
        report.append((src["id"], src["repo"], used, total, dict(per_agent)))
        for agent, cmd in rows:
            lines.append({"agent": agent, "source": src["id"], "class": classify_with(cmd, overrides), "command": cmd})
    with open(CORPUS, "w", encoding="utf-8") as f:
        for o in lines:
            f.write(json.dumps(o, ensure_ascii=False) + "\n")
    for r in report:
        print("\t".join(str(x) for x in r))
    summarise(lines)


def summarise(lines):
    by_agent = collections.Counter(o["agent"] for o in lines)
    by_class = collections.Counter(o["class"] for o in lines)
    print(f"{len(lines)} commands")
    print("agents:", dict(by_agent.most_common()))
    print("classes:", {c: by_class[c] for c in CLASSES})
    cross = collections.Counter((o["agent"], o["class"]) for o in lines)
    for a in sorted(by_agent):
        print(f"  {a:12}", " ".join(f"{c}={cross[(a, c)]}" for c in CLASSES))


# ── Classification ─────────────────────────────────────────────────────────────────────
#
# A command line is cut into simple commands (at ; && || | & newlines, `do`/`then`/…,
# and the insides of $(…) and `…` are simple commands too, heredoc bodies are data).
# Each simple command gets a class by the rules below; the line's class is the riskiest
# of them (outside > net > write > code > read); then overrides.tsv, by exact command.
#
# Paths. A word naming a path is inside the project when it is relative and does not
# climb out (`..`), or starts with `{project}`. It is outside when it starts with `~`,
# `$HOME`, `..`, or `/` followed by a system or user directory (/Users, /home, /etc,
# /tmp, /var, /usr, /opt, …: see SYSTEM_ROOTS) — /dev/null and /dev/std* excepted.
# Secrets: a word naming .env (not .env.example/.sample/.template), a private key,
# ~/.ssh, ~/.aws, credentials or a token file, or a $VARIABLE named …KEY/TOKEN/SECRET/
# PASSWORD, makes the command `outside` wherever it is.
# Redirections: `> f`, `>> f` (and tee f) write f: `write` inside the project, `outside`
# outside it; `2>&1`, `>/dev/null` are nothing; `< f` reads f.

SYSTEM_ROOTS = (
    "Users", "home", "etc", "tmp", "var", "usr", "opt", "root", "private", "System",
    "Library", "Applications", "bin", "sbin", "lib", "lib64", "dev", "proc", "sys", "mnt",
    "Volumes", "srv", "nix", "snap", "workspace", "workspaces", "app", "run", "boot", "media",
    "data", "c", "d", "code", "cygdrive",
)
HARMLESS_PATHS = ("/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty")

SECRET = re.compile(
    r"(^|[/\s'\"=])(\.env(\.(local|development|production|prod|dev|test|staging)(\.local)?)?"
    r"|\.envrc|\.netrc|\.npmrc|\.pypirc|id_rsa|id_ed25519|id_ecdsa|[\w.-]*\.pem|[\w.-]*\.key"
    r"|\.ssh|\.aws|\.gnupg|credentials(\.json)?|\.git-credentials|secrets?\.(json|ya?ml|toml))"
    r"(?=$|[\s'\"/;|&)>])"
)
SECRET_VAR = re.compile(r"\$\{?[A-Z0-9_]*(KEY|TOKEN|SECRET|PASSWORD|PASSWD)[A-Z0-9_]*\}?")

# Programs that only read (files they name are judged by the path rules).
READ_PROGS = {
    "cat", "head", "tail", "less", "more", "ls", "ll", "la", "tree", "pwd", "echo", "printf",
    "wc", "grep", "egrep", "fgrep", "rg", "ag", "ack", "sort", "uniq", "cut", "tr", "diff",
    "cmp", "file", "stat", "du", "nl", "tac", "column", "fold", "fmt", "comm", "join",
    "paste", "rev", "basename", "dirname", "realpath", "readlink", "true", "false", "sleep",
    "seq", "test", "[", "[[", "which", "type", "whereis", "date", "whoami", "uname", "jq",
    "yq", "xxd", "hexdump", "od", "strings", "md5sum", "md5", "sha256sum", "sha1sum",
    "shasum", "cksum", "expr", "bc", "awk", "gawk", "find", "fd", "sed", "export", "set",
    "unset", "exit", "return", "local", "read", "wait", "shift", "cd", "pushd", "popd",
    "alias", "hash", "ldd", "nm", "objdump", "readelf", "jobs", "iconv", "base64",
    "colordiff", "bat", "uuidgen", "batcat", "exa", "eza", "lsd", "locale", "tput", "clear", "hostname",
    "id", "groups", "nproc", "arch", "getconf", "sw_vers", "cal", "printenv_safe", "command",
    "builtin", "declare", "typeset", "let", "break", "continue", ":", "trap", "unalias",
    "shopt", "ulimit", "umask_show", "zcat", "gunzip_c", "lsattr", "identify", "pdfinfo",
    "pdftotext", "mdls", "plutil_p", "tokei", "cloc", "scc", "sqlite3_ro", "xmllint", "tidy",
    "htmlhint", "unzip_l", "zipinfo", "tar_t", "cut", "look", "csvlook", "mlr", "gron",
}

# Programs that run the project's own code: tests, builds, linters, its scripts.
CODE_PROGS = {
    "python", "python3", "python3.10", "python3.11", "python3.12", "python3.13", "py", "node",
    "nodejs", "deno", "tsx", "ts-node", "make", "cmake", "ninja", "pytest", "py.test", "tox",
    "nox", "jest", "vitest", "mocha", "ava", "tsc", "eslint", "prettier", "ruff", "black",
    "isort", "mypy", "pyright", "flake8", "pylint", "bandit", "biome", "oxlint", "stylelint",
    "next", "vite", "webpack", "rollup", "esbuild", "turbo", "nx", "lerna", "playwright",
    "cypress", "storybook", "rspec", "rake", "rails", "ruby", "irb", "php", "phpunit",
    "artisan", "mvn", "gradle", "./gradlew", "gradlew", "javac", "java", "kotlinc", "dotnet",
    "swift", "swiftc", "xcodebuild", "gcc", "g++", "clang", "clang++", "cc", "rustc",
    "rustfmt", "clippy-driver", "golangci-lint", "gofmt", "goimports", "staticcheck",
    "go-test", "shellcheck", "shfmt", "hadolint", "markdownlint", "alembic", "manage.py",
    "uvicorn", "gunicorn", "flask", "django-admin", "streamlit", "jupyter", "ipython",
    "coverage", "hypothesis", "behave", "robot", "locust", "sqlfluff", "dbt", "terraform_fmt",
    "prisma", "drizzle-kit", "knex", "sequelize", "typeorm", "wrangler_dev", "expo", "react-native",
    "tailwindcss", "postcss", "sass", "lessc", "svgo", "lint-staged", "husky", "knip",
    "depcheck", "madge", "ts-prune", "size-limit", "bats", "busted", "lua", "luajit", "perl",
    "Rscript", "R", "julia", "ghc", "stack", "cabal", "elixir", "mix", "erl", "ocaml", "dune",
    "zig", "nim", "crystal", "dart", "flutter", "elm", "gleam", "scala", "sbt", "lein", "clj",
    "bazel", "buck", "pants", "meson", "scons", "just", "task", "invoke", "doit", "air",
    "nodemon", "concurrently", "wait-on", "start-server-and-test", "c8", "nyc", "istanbul",
    "bun-test", "spectral", "redocly", "openapi-generator", "protoc", "buf", "sqlc", "templ",
    "wire", "mockgen", "stringer", "godoc", "hugo", "jekyll", "mkdocs", "sphinx-build",
    "docusaurus", "astro", "nuxt", "svelte-kit", "ng", "vue-cli-service", "remix", "gatsby",
    "electron", "electron-builder", "tauri", "wasm-pack", "trunk", "maturin", "pre-commit",
    "semgrep", "trivy_fs", "actionlint", "yamllint", "jsonlint", "commitlint", "changeset",
    "tsup", "unbuild", "vsce", "sam_local", "mkcert_no", "shellspec", "ctest", "valgrind",
    "gdb", "lldb", "strace_no", "hyperfine", "k6", "artillery", "ab_no", "wrk_no",
    "golint", "revive", "gosec", "govulncheck_no", "cargo-nextest", "nextest", "tarpaulin",
    "typedoc", "jsdoc", "api-extractor", "dts-bundle-generator", "ncc", "pkg", "vercel_dev",
    "ts-jest", "babel", "swc", "parcel", "snowpack", "rome", "dprint", "taplo", "stylua",
    "selene", "luacheck", "clang-format", "clang-tidy", "cppcheck", "cpplint", "include-what-you-use",
    "minsky", "entire", "goreleaser",
}

# Programs that reach the network or install, whatever their arguments.
NET_PROGS = {
    "curl", "wget", "http", "https", "httpie", "xh", "gh", "hub", "glab", "apt", "apt-get",
    "aptitude", "brew", "port", "snap", "dnf", "yum", "pacman", "apk", "zypper", "ssh",
    "scp", "sftp", "rsync", "nc", "ncat", "netcat", "telnet", "ftp", "ping", "dig",
    "nslookup", "host", "traceroute", "whois", "vercel", "netlify", "heroku", "fly",
    "flyctl", "railway", "render", "aws", "gcloud", "gsutil", "az", "kubectl", "helm",
    "doctl", "firebase", "supabase", "wrangler", "amplify", "eas", "pulumi", "terraform",
    "ansible", "ansible-playbook", "huggingface-cli", "hf", "ollama", "pipx", "gem",
    "composer", "conda", "mamba", "micromamba", "rustup", "nvm", "fnm", "volta", "asdf",
    "pyenv", "rbenv", "sdk", "corepack", "npm-check-updates", "ncu", "ngrok",
    "cloudflared", "tailscale", "openssl_s_client", "aria2c", "yt-dlp", "youtube-dl",
    "git-lfs", "stripe", "twilio", "sentry-cli", "ab", "wrk", "lighthouse", "mcp",
    "claude", "codex", "gemini", "cursor-agent", "aider", "openai", "anthropic", "llm",
    "newman", "grpcurl", "websocat", "wscat", "mosquitto_pub", "mosquitto_sub", "kafkacat",
    "kcat", "psql_remote", "nix", "govulncheck", "npm-audit", "snyk", "socket", "renovate",
}

# Programs outside the project or dangerous, whatever their arguments.
OUTSIDE_PROGS = {
    "sudo", "su", "doas", "kill", "pkill", "killall", "xkill", "shutdown", "reboot", "halt",
    "poweroff", "launchctl", "systemctl", "service", "crontab", "at", "chown", "chgrp",
    "mount", "umount", "diskutil", "dd", "mkfs", "fdisk", "parted", "open", "xdg-open",
    "osascript", "code", "cursor", "subl", "vim", "vi", "nvim", "nano", "emacs", "eval",
    "exec", "env", "printenv", "ps", "pgrep", "lsof", "netstat", "ss", "top", "htop",
    "btop", "fuser", "df", "free", "uptime", "vm_stat", "iostat", "vmstat", "sysctl",
    "dmesg", "journalctl", "log", "history", "security", "keychain", "defaults", "scutil",
    "networksetup", "ifconfig", "ip", "route", "iptables", "ufw", "pfctl", "docker",
    "docker-compose", "podman", "colima", "lima", "vagrant", "virsh", "qemu-system-x86_64",
    "psql", "mysql", "mongosh", "mongo", "redis-cli", "pg_dump", "pg_restore", "createdb",
    "dropdb", "pg_ctl", "initdb", "mysqldump", "nohup", "disown", "setsid", "screen", "tmux",
    "watch", "caffeinate", "pbcopy", "pbpaste", "xclip", "xsel", "say", "afplay",
    "screencapture", "mdfind", "spctl", "xattr", "codesign", "hdiutil", "installer",
    "pkgutil", "softwareupdate", "update-alternatives", "ldconfig", "modprobe", "insmod",
    "chroot", "nsenter", "unshare", "bwrap", "firejail", "passwd", "useradd", "usermod",
    "groupadd", "visudo", "chsh", "newgrp", "source_home", "gpg", "ssh-keygen", "ssh-add",
    "ssh-agent", "keytool", "certutil", "update-ca-certificates", "trust", "systemd-run",
    "timedatectl", "hostnamectl", "localectl", "loginctl", "nmcli", "iwconfig", "tcpdump",
    "wireshark", "tshark", "nmap", "masscan", "strace", "ltrace", "dtrace", "dtruss",
    "perf", "bpftrace", "cpulimit", "renice", "nice", "ionice", "taskset", "chrt",
    "killport", "kill-port", "fkill", "pm2", "forever", "supervisorctl", "lsblk", "blkid",
    "smartctl", "mdutil", "tmutil", "diskutil", "sips_no", "automator", "shortcuts",
    "osqueryi", "auditctl", "ausearch", "getent", "last", "who", "w", "finger", "lastlog",
    "sqlite3_home", "rm_home", "workmux", "agent-browser", "act", "nix-shell", "direnv", "explorer.exe", "cmd.exe", "powershell", "pwsh", "wsl",
    "code-insiders", "idea", "pycharm", "webstorm", "zed", "xed", "gedit",
}

# Programs that write: their operands (the paths) decide inside or outside.
WRITE_PROGS = {
    "rm", "rmdir", "mv", "cp", "mkdir", "touch", "ln", "chmod", "truncate", "patch",
    "unzip", "gunzip", "gzip", "bzip2", "xz", "zip", "tar", "install", "rsync_local",
    "split", "shred", "unlink", "mktemp", "sqlite3", "dos2unix", "unix2dos", "convert",
    "magick", "ffmpeg", "sips", "pandoc", "wkhtmltopdf", "git-filter-repo", "apply_patch",
    "applypatch", "tee", "cpio", "7z", "7za", "rar", "unrar", "csplit", "sponge",
}

GIT_READ = {
    "status", "log", "diff", "show", "rev-parse", "ls-files", "ls-tree", "blame", "grep",
    "describe", "shortlog", "reflog", "cat-file", "rev-list", "merge-base", "name-rev",
    "whatchanged", "count-objects", "check-ignore", "check-attr", "for-each-ref",
    "show-ref", "symbolic-ref_read", "var", "help", "version", "--version", "diff-tree",
    "diff-index", "diff-files", "range-diff", "verify-commit", "fsck", "show-branch",
    "cherry", "annotate", "--no-pager", "instaweb_no", "-P", "hash-object", "ls-remote_no",
}
GIT_NET = {"push", "pull", "fetch", "clone", "ls-remote", "remote-update", "send-email", "request-pull", "lfs", "submodule"}
GIT_WRITE = {
    "add", "commit", "checkout", "switch", "restore", "reset", "stash", "merge", "rebase",
    "cherry-pick", "revert", "rm", "mv", "init", "clean", "apply", "am", "notes", "gc",
    "prune", "update-index", "update-ref", "filter-branch", "bisect", "worktree", "sparse-checkout",
    "mergetool", "format-patch", "commit-tree", "read-tree", "write-tree", "replace",
    "maintenance", "repack", "pack-refs", "symbolic-ref", "fast-import", "rerere", "restore",
}

PKG_MANAGERS = {"npm", "pnpm", "yarn", "bun", "npx", "pnpx", "bunx", "cargo", "go", "uv", "pip", "pip3", "poetry", "pipenv", "rye", "hatch", "pdm", "deno", "bundle", "mix", "dotnet", "swift", "flutter", "dart"}
NPM_NET = {"install", "i", "ci", "add", "update", "up", "upgrade", "publish", "login", "logout", "adduser", "view", "info", "show_remote", "search", "outdated", "audit", "dedupe", "link", "unlink", "remove", "rm", "uninstall", "un", "pack_no", "create", "init", "dlx", "x_remote", "whoami", "dist-tag", "deprecate", "owner", "access", "token", "doctor", "ping", "import", "fetch", "prune"}
CARGO_NET = {"add", "install", "update", "publish", "search", "login", "yank", "owner", "fetch", "vendor", "generate-lockfile", "new", "init", "remove", "uninstall", "binstall"}
GO_NET = {"get", "install", "mod", "work"}
UV_NET = {"add", "sync", "lock", "pip", "tool", "venv", "python", "remove", "init", "self", "publish", "build_no", "export"}
PIP_NET = {"install", "download", "uninstall", "wheel", "search", "index"}
POETRY_NET = {"install", "add", "update", "lock", "remove", "publish", "self", "init", "new", "sync", "source"}


def word_paths_risk(word: str) -> str | None:
    """The class a path-like word brings on its own (None: not a path, or inside)."""
    w = word.strip()
    if not w:
        return None
    if w in HARMLESS_PATHS or w.startswith("/dev/fd/"):
        return None
    if w.startswith("~") or w.startswith("$HOME") or w.startswith("${HOME}"):
        return "outside"
    if w == ".." or w.startswith("../") or "/../" in w.replace("{project}/", "/"):
        if w.startswith("{project}/") and "/../" not in w[len("{project}"):]:
            return None
        return "outside"
    if w.startswith("/"):
        first = w[1:].split("/", 1)[0]
        if first in SYSTEM_ROOTS:
            return "outside"
    # key=value operands: judge the value
    if "=" in w and not w.startswith("="):
        v = w.split("=", 1)[1]
        if v and v != w:
            return word_paths_risk(v)
    return None


def is_secret(text: str) -> bool:
    for m in SECRET.finditer(text):
        tok = m.group(2)
        if tok.startswith(".env"):
            # .env.example, .env.sample, .env.template are not secrets
            rest = text[m.end():]
            if re.match(r"\.(example|sample|template|dist|defaults?)", rest):
                continue
        return True
    return bool(SECRET_VAR.search(text))


HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")


def strip_heredocs(cmd: str) -> str:
    """Removes heredoc bodies (they are data), keeping the `<<WORD` markers."""
    out_lines = []
    lines = cmd.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        out_lines.append(line)
        pending = [m.group(2) for m in HEREDOC.finditer(line)]
        i += 1
        for delim in pending:
            while i < len(lines) and lines[i].strip() != delim:
                i += 1
            i += 1  # the delimiter line
    return "\n".join(out_lines)


def split_substitutions(text: str) -> tuple[str, list[tuple[str, str]]]:
    """The line with each $( … ), <( … ), >( … ) and ` … ` (outside single quotes) made a
    placeholder word, $'…' strings made one too, and unquoted newlines made `;`; and the
    insides, as (kind, command)."""
    out: list[str] = []
    subs: list[tuple[str, str]] = []
    i, n = 0, len(text)
    dq = False
    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n:
            out.append(text[i : i + 2])
            i += 2
            continue
        if not dq and ch == "'":
            j = text.find("'", i + 1)
            j = n - 1 if j < 0 else j
            out.append(text[i : j + 1])
            i = j + 1
            continue
        if not dq and text.startswith("$'", i):
            j = i + 2
            while j < n and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            out.append("ANSI_STRING")
            i = j + 1
            continue
        if ch == '"':
            dq = not dq
            out.append(ch)
            i += 1
            continue
        if text.startswith("$((", i):
            j = text.find("))", i)
            j = n - 2 if j < 0 else j
            out.append("ARITH")
            i = j + 2
            continue
        if text.startswith("$(", i) or (not dq and (text.startswith("<(", i) or text.startswith(">(", i))):
            depth = 0
            j = i + 1
            q = None
            while j < n:
                c = text[j]
                if q:
                    if c == "\\":
                        j += 2
                        continue
                    if c == q:
                        q = None
                elif c in "'\"":
                    q = c
                elif c == "(":
                    depth += 1
                elif c == ")":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            subs.append(("$", text[i + 2 : j]))
            out.append("SUBST")
            i = j + 1
            continue
        if ch == "`":
            j = i + 1
            while j < n and text[j] != "`":
                j += 2 if text[j] == "\\" else 1
            subs.append(("`", text[i + 1 : j]))
            out.append("SUBST")
            i = j + 1
            continue
        if ch == "\n" and not dq:
            out.append("\n; ")
            i += 1
            continue
        out.append(ch)
        i += 1
    return "".join(out), subs


SEPARATORS = {";", "&&", "||", "|", "&", "|&", ";;", "(", ")", "{", "}", "\n"}
KEYWORDS = {"then", "do", "else", "elif", "if", "while", "until", "!", "time", "done", "fi", "esac", "in_"}


def tokens(cmd: str) -> list[str] | None:
    # `2>&1`, `>&2`, `1>&-`: file descriptors, not files
    cmd = re.sub(r"(?<![^\s;|&(])\d*[<>]&(?:\d+|-)(?=$|[\s;|&)])", " ", cmd)
    cmd = cmd.replace("\\\n", " ").replace("\\(", " ESC_LP ").replace("\\)", " ESC_RP ").replace("\\;", " ESC_SEMI ")
    lex = shlex.shlex(cmd, posix=True, punctuation_chars=";&|()<>")
    lex.whitespace = " \t\r\n"
    lex.whitespace_split = True
    lex.commenters = "#"
    try:
        return list(lex)
    except ValueError:
        return None


def simple_commands(cmd: str):
    """[(words, redirect_targets)] of the line (None when it cannot be tokenized)."""
    toks = tokens(cmd)
    if toks is None:
        return None
    out = []
    words: list[str] = []
    redirs: list[tuple[str, str]] = []
    i = 0
    skip_for = False
    while i < len(toks):
        t = toks[i]
        if t in SEPARATORS or t == "\n":
            if words or redirs:
                out.append((words, redirs))
            words, redirs = [], []
            skip_for = False
            i += 1
            continue
        if skip_for:
            i += 1
            continue
        if re.fullmatch(r"\d*(>|>>|>\||&>|&>>|<|<<<|<>)", t) or t in (">", ">>", "<", "&>", ">&", "<<", "<<-"):
            target = toks[i + 1] if i + 1 < len(toks) else ""
            if t in (">&", "<&") and re.fullmatch(r"\d+|-", target):
                i += 2  # `2>&1`, `>&2`: a file descriptor, not a file
                continue
            # `2>&1`, `>&2`: lexed as '2', '>', '&', '1' sometimes
            if target == "&":
                target = "&" + (toks[i + 2] if i + 2 < len(toks) else "")
                i += 1
            if t.startswith("<<") and t not in ("<<<",):
                redirs.append(("heredoc", target))
            elif "<" in t and ">" not in t:
                redirs.append(("in", target))
            else:
                redirs.append(("out", target))
            i += 2
            continue
        if not words and t in KEYWORDS:
            i += 1
            continue
        if not words and t in ("for", "select", "case"):
            skip_for = True
            i += 1
            continue
        if not words and (re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", t) or t == "REDACTED"):
            # an assignment before the command (or alone)
            redirs.append(("assign", t))
            i += 1
            continue
        words.append(t)
        i += 1
    if words or redirs:
        out.append((words, redirs))
    # a trailing fd number before a redirection ('2' '>' …) is lexed as a word
    cleaned = []
    for words, redirs in out:
        if words and redirs and re.fullmatch(r"\d", words[-1]):
            words = words[:-1]
        cleaned.append((words, redirs))
    return cleaned


def path_class(word: str, write: bool) -> str:
    r = word_paths_risk(word)
    if r:
        return r
    if is_secret(word):
        return "outside"
    return "write" if write else "read"


def operands(words: list[str]) -> list[str]:
    return [w for w in words[1:] if not w.startswith("-") or w == "-"]


def worst(classes) -> str:
    best = "read"
    for c in classes:
        if c and RANK[c] > RANK[best]:
            best = c
    return best


def strip_wrappers(words: list[str]) -> list[str]:
    """`timeout 30 X`, `xargs X`, `command X`, `uv run X`, `npx X`… → X (and its args)."""
    while words:
        w = os.path.basename(words[0]) if words[0].startswith("/") and "/bin/" in words[0] else words[0]
        if w in ("timeout", "gtimeout"):
            rest = words[1:]
            while rest and rest[0].startswith("-"):
                rest = rest[1:]
            words = rest[1:] if rest else []
        elif w in ("xargs",):
            rest = words[1:]
            while rest and rest[0].startswith("-"):
                opt = rest[0]
                rest = rest[1:]
                if opt in ("-I", "-n", "-P", "-L", "-d", "-E", "-s") and rest:
                    rest = rest[1:]
            words = rest
        elif w in ("command", "builtin", "time", "stdbuf", "unbuffer", "caffeinate_no"):
            rest = words[1:]
            if rest and rest[0] in ("-v", "-V"):
                return ["which"] + rest[1:]
            while rest and rest[0].startswith("-"):
                rest = rest[1:]
            words = rest
        elif w in ("uv", "poetry", "pipenv", "rye", "pdm", "hatch") and len(words) > 1 and words[1] == "run":
            rest = words[2:]
            while rest and rest[0].startswith("-"):
                opt = rest[0]
                rest = rest[1:]
                if opt in ("--with", "--python", "-p", "--project", "--directory", "--env-file", "--extra", "--group", "--package") and rest:
                    rest = rest[1:]
            words = rest
        elif w == "bundle" and len(words) > 1 and words[1] == "exec":
            words = words[2:]
        else:
            break
    return words


def classify_simple(words: list[str], redirs) -> tuple[str, str]:
    """(class, why) of one simple command."""
    parts = []
    for kind, target in redirs:
        if kind == "out":
            if target.startswith("&") or target in HARMLESS_PATHS or target == "-":
                continue
            parts.append((path_class(target, True), f"> {target}"))
        elif kind == "in":
            parts.append((path_class(target, False), f"< {target}"))
        elif kind == "assign":
            val = target.split("=", 1)[1] if "=" in target else ""
            r = word_paths_risk(val) if val.startswith(("~", "/", "$HOME")) else None
            if is_secret(target) and not SECRET_VAR.search(target):
                parts.append(("outside", f"secret in {target}"))
            elif r:
                parts.append((r, f"assigns {target}"))
    words = strip_wrappers(list(words))
    if not words:
        return (worst(p[0] for p in parts), "; ".join(p[1] for p in parts) or "no command")

    prog_word = words[0]
    prog = prog_word
    # a path to a program: ./x, bin/x, scripts/x.sh, {project}/x, /usr/bin/x
    if "/" in prog_word:
        base = os.path.basename(prog_word)
        if prog_word.startswith(("/usr/", "/bin/", "/opt/homebrew/bin/", "/usr/local/bin/", "/sbin/")) and base in (
            READ_PROGS | CODE_PROGS | NET_PROGS | OUTSIDE_PROGS | WRITE_PROGS | PKG_MANAGERS | {"git", "bash", "sh", "zsh", "env"}
        ):
            prog = base
        elif word_paths_risk(prog_word) == "outside":
            parts.append(("outside", f"runs {prog_word}"))
            prog = None
        else:
            parts.append(("code", f"runs the project's {prog_word}"))
            prog = None
    args = words[1:]

    # `X --version`, `X --help` of a program the tables know: only prints.
    known = READ_PROGS | CODE_PROGS | NET_PROGS | OUTSIDE_PROGS | WRITE_PROGS | PKG_MANAGERS | {"git", "bash", "sh", "zsh"}
    if prog in known and args and (
        all(a in ("--version", "-V", "version", "--help", "-h", "help") for a in args) or args == ["-v"]
    ):
        return worst([p[0] for p in parts] + ["read"]), f"{prog} {' '.join(args)} (prints)"

    # Secrets named anywhere, on any program.
    for w in words:
        if is_secret(w):
            parts.append(("outside", f"names a secret: {w}"))
            break
    if SECRET_VAR.search(" ".join(words)):
        parts.append(("outside", "names a secret variable"))

    def paths_of(ws, write=False):
        for w in ws:
            if w.startswith("-") and "=" not in w:
                continue
            r = word_paths_risk(w)
            if r:
                parts.append((r, f"path outside: {w}"))
            elif write and not w.startswith("-"):
                parts.append(("write", f"writes {w}"))

    if prog is None:
        pass
    elif prog in ("bash", "sh", "zsh", "dash", "fish"):
        # bash script.sh → the project's script; bash -c "…" → its inside
        if args and args[0] in ("-c", "-lc", "-ic") and len(args) > 1:
            c, why = classify_line(args[1])
            parts.append((c, f"{prog} -c: {why}"))
        elif args and not args[0].startswith("-"):
            r = word_paths_risk(args[0])
            parts.append((r or "code", f"{prog} runs {args[0]}"))
        elif not args or args == ["-l"] or args == ["-s"]:
            parts.append(("outside", f"{prog} reads its script from input"))
        else:
            parts.append(("code", f"{prog} {' '.join(args[:2])}"))
        paths_of(args[1:])
    elif prog in ("source", "."):
        target = args[0] if args else ""
        r = word_paths_risk(target)
        parts.append((r or "code", f"source {target}"))
    elif prog == "git":
        parts.append(classify_git(args))
    elif prog == "mise" or prog == "asdf":
        sub = next((a for a in args if not a.startswith("-")), "")
        if sub in ("run", "r", "exec", "x", "tasks", "watch"):
            parts.append(("code", f"{prog} {sub}"))
        elif sub in ("ls", "list", "current", "which", "where", "env_no", "doctor", "version", "--version", "config"):
            parts.append(("read", f"{prog} {sub}"))
        else:
            parts.append(("net", f"{prog} {sub}"))
    elif prog == "bd":
        # beads, an issue tracker kept in the project (.beads/)
        sub = next((a for a in args if not a.startswith("-")), "")
        ops = [a for a in args if not a.startswith("-")]
        if sub == "dep" and (len(ops) < 2 or ops[1] not in ("tree", "list", "show", "cycles")):
            parts.append(("write", "bd dep"))
        elif sub in ("list", "show", "ready", "stats", "blocked", "search", "status", "info", "where", "dep", "prime", "children", "epic", "history", "export", "quickstart", "help", "version", "stale", "count", "query", "graph", "doctor", "comments", "onboard", ""):
            parts.append(("read", f"bd {sub}"))
        elif sub in ("sync",):
            parts.append(("net", "bd sync"))
        else:
            parts.append(("write", f"bd {sub}"))
    elif prog == "openssl":
        sub = args[0] if args else ""
        if sub in ("rand", "version", "dgst", "base64", "sha256", "sha1", "md5", "x509", "enc_no", "list", "help", "errstr"):
            parts.append(("read", f"openssl {sub}"))
        elif sub in ("s_client", "s_time", "ocsp"):
            parts.append(("net", f"openssl {sub}"))
        else:
            parts.append(("outside", f"openssl {sub}"))
        paths_of(args[1:])
    elif prog == "playwright" and args[:1] == ["install"]:
        parts.append(("net", "playwright install"))
    elif prog.startswith("python") and len(args) >= 2 and args[0] == "-m" and args[1] in ("pip", "venv", "ensurepip", "http.server", "pip_audit"):
        sub = args[2] if len(args) > 2 else ""
        if args[1] == "pip" and sub in PIP_NET:
            parts.append(("net", f"python -m pip {sub}"))
        elif args[1] == "pip":
            parts.append(("read", f"python -m pip {sub}"))
        elif args[1] == "http.server":
            parts.append(("net", "python -m http.server"))
        else:
            parts.append(("write", f"python -m {args[1]}"))
        paths_of(args[2:])
    elif prog in PKG_MANAGERS:
        parts.append(classify_pkg(prog, args))
        paths_of(args)
    elif prog == "cd" or prog in ("pushd",):
        target = args[0] if args else "~"
        if target == "-":
            parts.append(("read", "cd -"))
        else:
            r = word_paths_risk(target)
            parts.append((r or "read", f"cd {target}"))
    elif prog == "sed":
        inplace = any(a == "-i" or a.startswith("-i") or a == "--in-place" or a.startswith("--in-place") for a in args)
        # the script (first operand unless -e/-f gave it)
        ops = [a for a in args if not a.startswith("-")]
        if not any(a in ("-e", "-f") or a.startswith("-e") for a in args) and ops:
            ops = ops[1:]
        if inplace:
            parts.append(("write", "sed -i"))
        else:
            parts.append(("read", "sed"))
        paths_of(ops, write=False)
    elif prog in ("perl", "ruby") and any(a.startswith("-i") or a.startswith("-pi") or a == "-p" and "-i" in args for a in args):
        parts.append(("write", f"{prog} -i"))
    elif prog in ("grep", "egrep", "fgrep", "rg", "ag", "ack", "awk", "gawk", "jq", "yq"):
        # the first operand is a pattern/program, unless -e/-f/--regexp gave it
        ops = []
        skip_next = False
        pattern_given = False
        for a in args:
            if skip_next:
                skip_next = False
                continue
            if a in ("-e", "--regexp", "-f", "--file", "-g", "--glob", "-t", "--type", "-T", "--type-not", "-m", "--max-count", "-A", "-B", "-C", "--context", "-F_no", "--include", "--exclude", "--exclude-dir", "-v_no", "--arg", "--argjson", "--slurpfile", "--rawfile", "--color", "--colors", "-M", "--max-columns", "--max-depth", "-d", "--sort", "--iglob", "--type-add", "-j", "--threads", "--max-filesize", "-E_no", "--encoding", "-r_no"):
                if a in ("-e", "--regexp", "-f", "--file"):
                    pattern_given = True
                if a in ("--arg", "--argjson", "--slurpfile", "--rawfile"):
                    skip_next = True
                skip_next = True
                continue
            if a.startswith("-"):
                continue
            ops.append(a)
        if not pattern_given and ops:
            ops = ops[1:]
        parts.append(("read", prog))
        paths_of(ops)
    elif prog == "find" or prog == "fd":
        parts.append(("read", prog))
        starts = []
        for a in args:
            if a.startswith("-") or a in ("(", ")", "!", "ESC_LP", "ESC_RP"):
                break
            starts.append(a)
        paths_of(starts)
        if "-delete" in args:
            parts.append(("write", "find -delete"))
        for flag in ("-exec", "-execdir", "-ok", "-okdir"):
            if flag in args:
                k = args.index(flag)
                inner = []
                for a in args[k + 1 :]:
                    if a in (";", "\\;", "+", "ESC_SEMI"):
                        break
                    inner.append(a)
                inner = [w for w in inner if w != "{}"]
                if inner:
                    c, why = classify_simple(inner, [])
                    parts.append((c, f"find {flag}: {why}"))
    elif prog in READ_PROGS:
        parts.append(("read", prog))
        paths_of(args)
    elif prog in WRITE_PROGS:
        if prog == "tar":
            flags = " ".join(a for a in args[:2])
            if re.search(r"(^|\s)-?[a-zA-Z]*t", flags) and not re.search(r"(^|\s)-?[a-zA-Z]*[xc]", flags):
                parts.append(("read", "tar t"))
                paths_of(args)
            else:
                parts.append(("write", "tar"))
                paths_of(args)
        elif prog == "unzip" and "-l" in args:
            parts.append(("read", "unzip -l"))
            paths_of(args)
        elif prog == "mktemp":
            parts.append(("outside", "mktemp (a file outside the project)"))
        else:
            parts.append(("write", prog))
            paths_of(args)
    elif prog in NET_PROGS:
        parts.append(("net", prog))
        paths_of(args)
    elif prog in OUTSIDE_PROGS:
        parts.append(("outside", prog))
    elif prog in CODE_PROGS or prog.endswith((".sh", ".py", ".js", ".ts", ".mjs", ".rb")):
        parts.append(("code", prog))
        paths_of(args)
    else:
        parts.append(("outside", f"unknown program {prog}"))
    c = worst(p[0] for p in parts)
    why = "; ".join(p[1] for p in parts if p[0] == c) or c
    return c, why


def classify_git(args: list[str]) -> tuple[str, str]:
    # skip git's own options (-C dir, -c k=v, --no-pager, …)
    rest = list(args)
    extra = []
    while rest and rest[0].startswith("-"):
        opt = rest.pop(0)
        if opt in ("-C", "-c", "--git-dir", "--work-tree", "--namespace") and rest:
            val = rest.pop(0)
            if opt in ("-C", "--git-dir", "--work-tree"):
                r = word_paths_risk(val)
                if r:
                    extra.append((r, f"git {opt} {val}"))
    if not rest:
        return worst([c for c, _ in extra] + ["read"]), "git"
    sub = rest[0]
    subargs = rest[1:]
    if sub == "config":
        if any(a in ("--global", "--system") for a in subargs):
            c = "outside"
        elif any(a in ("--get", "--list", "-l", "--get-all", "--get-regexp", "--show-origin") for a in subargs) or len([a for a in subargs if not a.startswith("-")]) <= 1:
            c = "read"
        else:
            c = "write"
    elif sub == "branch":
        ops = [a for a in subargs if not a.startswith("-")]
        if any(a in ("-d", "-D", "-m", "-M", "-c", "-C", "--delete", "--move", "--set-upstream-to", "-u", "--unset-upstream", "-f", "--force") for a in subargs):
            c = "write"
        elif ops and not any(a in ("--list", "-l", "--contains", "--merged", "--no-merged", "--points-at", "--format", "--sort") or a.startswith(("--contains", "--merged", "--no-merged", "--format", "--sort", "--points-at")) for a in subargs):
            c = "write"
        else:
            c = "read"
    elif sub == "tag":
        ops = [a for a in subargs if not a.startswith("-")]
        c = "write" if (ops and not any(a in ("-l", "--list", "--contains", "--points-at") for a in subargs)) or any(a in ("-d", "-a", "-s", "-f") for a in subargs) else "read"
    elif sub == "stash":
        c = "read" if subargs[:1] in (["list"], ["show"]) else "write"
    elif sub == "remote":
        c = "read" if not subargs or subargs[0] in ("-v", "show", "get-url", "--verbose") else ("net" if subargs[0] in ("update", "prune") else "write")
    elif sub == "worktree":
        c = "read" if subargs[:1] == ["list"] else "write"
    elif sub == "submodule":
        c = "read" if subargs[:1] in (["status"], ["summary"], [], ["foreach_no"]) else "net"
    elif sub == "lfs":
        c = "read" if subargs[:1] in (["ls-files"], ["status"], ["env"]) else "net"
    elif sub in GIT_READ:
        c = "read"
    elif sub in GIT_NET:
        c = "net"
    elif sub in GIT_WRITE:
        c = "write"
    else:
        c = "outside"
    out_paths = [(word_paths_risk(a), a) for a in subargs if not a.startswith("-") or "=" in a]
    cls = [c] + [r for r, _ in out_paths if r] + [e[0] for e in extra]
    return worst(cls), f"git {sub}"


def classify_pkg(prog: str, args: list[str]) -> tuple[str, str]:
    ops = [a for a in args if not a.startswith("-")]
    sub = ops[0] if ops else ""
    if prog in ("npm", "pnpm", "yarn", "bun"):
        if prog in ("yarn", "pnpm", "bun") and not ops and not any(a in ("--version", "-v", "--help") for a in args):
            return ("net", f"{prog} (install)") if prog != "bun" else ("code", "bun")
        if sub in NPM_NET:
            return "net", f"{prog} {sub}"
        if sub in ("exec", "x", "dlx") and prog in ("npm", "pnpm", "bun") and sub != "dlx":
            return "code", f"{prog} {sub}"
        if sub == "dlx":
            return "net", f"{prog} dlx"
        if sub == "config" and len(ops) > 1 and ops[1] in ("set", "delete", "edit", "rm") and not any(a.startswith("--location=project") for a in args):
            return "outside", f"{prog} config {ops[1]} (the user's configuration)"
        if sub in ("config", "set", "get") and any(a in ("--global", "-g") for a in args):
            return "outside", f"{prog} config --global"
        if any(a in ("-g", "--global") for a in args):
            return "outside", f"{prog} -g"
        return "code", f"{prog} {sub}".strip()
    if prog in ("npx", "pnpx", "bunx"):
        rest = [a for a in args if not a.startswith("-")]
        tool = rest[0] if rest else ""
        if tool.startswith("create-") or tool in ("degit", "giget", "shadcn", "shadcn-ui", "@shadcn/ui", "license-checker", "npm-check-updates", "ncu", "vercel", "netlify", "wrangler", "supabase", "firebase", "expo-doctor_no"):
            return "net", f"{prog} {tool}"
        if tool in ("kill-port", "fkill"):
            return "outside", f"{prog} {tool}"
        if tool == "playwright" and "install" in rest:
            return "net", f"{prog} playwright install"
        if "-y" in args or "--yes" in args or "-p" in args or "--package" in args:
            return "net", f"{prog} {tool} (installs)"
        return "code", f"{prog} {tool}"
    if prog == "cargo":
        if sub in CARGO_NET:
            return "net", f"cargo {sub}"
        return "code", f"cargo {sub}"
    if prog == "go":
        if sub in GO_NET:
            if sub == "mod" and len(ops) > 1 and ops[1] in ("graph", "why", "verify_no", "edit_no"):
                return "code", f"go mod {ops[1]}"
            return "net", f"go {sub}"
        if sub in ("env", "version", "list", "doc"):
            return "read", f"go {sub}"
        return "code", f"go {sub}"
    if prog in ("pip", "pip3"):
        if sub in PIP_NET:
            return "net", f"{prog} {sub}"
        return "read", f"{prog} {sub}"
    if prog == "uv":
        if sub in UV_NET:
            if sub == "pip" and len(ops) > 1 and ops[1] in ("list", "show", "freeze", "check", "tree"):
                return "read", f"uv pip {ops[1]}"
            return "net", f"uv {sub}"
        if sub in ("run",):
            return "code", "uv run"
        if sub in ("--version", "version", "tree"):
            return "read", f"uv {sub}"
        return "code", f"uv {sub}"
    if prog in ("poetry", "pipenv", "rye", "hatch", "pdm"):
        if sub in POETRY_NET:
            return "net", f"{prog} {sub}"
        if sub in ("shell",):
            return "outside", f"{prog} shell"
        return "code", f"{prog} {sub}"
    if prog == "deno":
        if sub in ("install", "add", "upgrade", "cache"):
            return "net", f"deno {sub}"
        return "code", f"deno {sub}"
    if prog == "bundle":
        if sub in ("install", "update", "add"):
            return "net", f"bundle {sub}"
        return "code", f"bundle {sub}"
    if prog in ("mix",):
        if sub.startswith("deps.get") or sub in ("deps.get", "deps.update", "hex.publish"):
            return "net", f"mix {sub}"
        return "code", f"mix {sub}"
    if prog == "dotnet":
        if sub in ("add", "restore", "nuget", "tool", "new"):
            return "net", f"dotnet {sub}"
        return "code", f"dotnet {sub}"
    if prog in ("swift", "flutter", "dart"):
        if sub in ("package", "pub") and len(ops) > 1 and ops[1] in ("get", "update", "resolve", "add", "upgrade"):
            return "net", f"{prog} {sub} {ops[1]}"
        return "code", f"{prog} {sub}"
    return "code", prog


def classify_line(cmd: str, depth: int = 0) -> tuple[str, str]:
    """(class, why) of a whole command line, by the rules alone."""
    body = strip_heredocs(cmd.replace("\\\n", " "))
    outer, subs = split_substitutions(body)
    parts = []
    if depth < 4:
        for kind, inner in subs:
            c, why = classify_line(inner, depth + 1)
            if kind == "`" and "unknown program" in why:
                continue  # markdown `code` in a message, not a command the agent meant
            parts.append((c, f"$({why})"))
    simple = simple_commands(outer)
    if simple is None:
        parts.append(("outside", "cannot be tokenized"))
    else:
        for words, redirs in simple:
            parts.append(classify_simple(words, redirs))
    if not parts:
        return "read", "empty"
    c = worst(p[0] for p in parts)
    why = " | ".join(p[1] for p in parts if p[0] == c)
    return c, why


def load_overrides() -> dict[str, tuple[str, str]]:
    """command → (class, why) from overrides.tsv: `class<TAB>json-string command<TAB>why`."""
    out = {}
    if not os.path.exists(OVERRIDES):
        return out
    with open(OVERRIDES, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            fields = line.split("\t")
            if len(fields) < 2 or fields[0] not in CLASSES:
                sys.exit(f"{OVERRIDES}:{n}: want CLASS<TAB>\"command\"<TAB>why")
            out[json.loads(fields[1])] = (fields[0], fields[2] if len(fields) > 2 else "")
    return out


def classify_with(cmd: str, overrides) -> str:
    if cmd in overrides:
        return overrides[cmd][0]
    return classify_line(cmd)[0]


def do_classify() -> int:
    overrides = load_overrides()
    bad = []
    lines = []
    with open(CORPUS, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            o = json.loads(line)
            lines.append(o)
            want = classify_with(o["command"], overrides)
            if o["class"] != want:
                bad.append((n, o["class"], want, o["command"]))
    unused = set(overrides) - {o["command"] for o in lines}
    for n, have, want, cmd in bad:
        print(f"commands.jsonl:{n}: says {have}, the rules say {want}: {cmd[:160]!r}")
    for cmd in sorted(unused):
        print(f"overrides.tsv: no corpus command {cmd[:160]!r}")
    if bad or unused:
        return 1
    summarise(lines)
    print("every class agrees with the rules and overrides.tsv")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--extract", action="store_true")
    ap.add_argument("--mirror", default="/work/.mirror")
    ap.add_argument("--classify", action="store_true")
    ap.add_argument("--explain")
    ap.add_argument("--sample", type=int)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--class", dest="klass")
    a = ap.parse_args()
    if a.extract:
        do_extract(a.mirror)
        return 0
    if a.explain is not None:
        ov = load_overrides()
        if a.explain in ov:
            print(ov[a.explain][0], "(override:", ov[a.explain][1] + ")")
        print(*classify_line(a.explain), sep="\t")
        return 0
    if a.sample:
        with open(CORPUS, encoding="utf-8") as f:
            lines = [json.loads(l) for l in f]
        if a.klass:
            lines = [o for o in lines if o["class"] == a.klass]
        rnd = random.Random(a.seed)
        for o in rnd.sample(lines, min(a.sample, len(lines))):
            print(o["class"], classify_line(o["command"])[1][:100], "::", o["command"].replace("\n", "⏎")[:240], sep="\t")
        return 0
    if a.classify:
        return do_classify()
    ap.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
