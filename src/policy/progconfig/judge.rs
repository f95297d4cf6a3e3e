//! Reading a configuration file's keys, format by format, just far enough to judge them:
//! the first key a profile does not list as harmless (or lists as refused), or why the
//! file cannot be read exactly. Where execgate's reading and the program's could differ
//! (a section npm would nest, an escape YAML would decode, a document TOML rejects), the
//! file is not vouched for.

use crate::policy::programs::Judge;

/// The first key of `text` that `judge` refuses (`Ok(Some)`), none (`Ok(None)`), or why
/// execgate cannot read it as the program would (`Err`).
pub(super) fn first_refused(judge: Judge, text: &str) -> Result<Option<String>, String> {
    match judge {
        Judge::Exists => Ok(None),
        Judge::NpmIni(harmless) => npm_ini(text, harmless),
        Judge::PythonIni(harmless) => python_ini(text, harmless),
        Judge::Toml(harmless) => toml(text, harmless),
        Judge::YamlTop(harmless) => yaml_top(text, harmless),
        Judge::YamlRefuses(refused) => yaml_refuses(text, refused),
        Judge::DotenvRefuses(refused) => Ok(dotenv(text, refused)),
        Judge::JsonTop(harmless) => json_top(text, harmless),
    }
}

/// Whether `key` matches `pattern`, where `*` stands for any run of characters.
fn matches(pattern: &str, key: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = key.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

fn harmless(patterns: &[&str], key: &str) -> bool {
    patterns.iter().any(|p| matches(p, key))
}

/// npm's ini (the `ini` package): every non-comment line is `key`, `key = value` or
/// `key[] = value`, leading blanks ignored; a `[section]` nests the keys after it.
fn npm_ini(text: &str, patterns: &[&str]) -> Result<Option<String>, String> {
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with([';', '#']) {
            continue;
        }
        if line.starts_with('[') {
            return Err(format!(
                "a section (`{line}`), which npm reads as nested settings"
            ));
        }
        let key = line.split('=').next().unwrap_or_default().trim();
        let key = key.strip_suffix("[]").unwrap_or(key);
        if key.starts_with(['"', '\'']) || key.contains('\\') {
            return Err(format!("a quoted or escaped key (`{key}`)"));
        }
        if !harmless(patterns, key) {
            return Ok(Some(key.to_string()));
        }
    }
    Ok(None)
}

/// Python's configparser as pip uses it: `[section]`, `key = value` or `key: value`,
/// indented lines continuing a value; pip reads `key_name` as `key-name`, in any case.
fn python_ini(text: &str, patterns: &[&str]) -> Result<Option<String>, String> {
    let mut section: Option<String> = None;
    let mut in_value = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with(['#', ';']) {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            if !in_value {
                return Err("an indented line that continues no value".into());
            }
            continue;
        }
        if let Some(name) = trimmed.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
            section = Some(name.trim().to_string());
            in_value = false;
            continue;
        }
        let Some(end) = trimmed.find(['=', ':']) else {
            return Err(format!("a line that is no setting (`{trimmed}`)"));
        };
        if section.is_none() {
            return Err("a setting before any section".into());
        }
        let key = trimmed[..end].trim().to_ascii_lowercase().replace('_', "-");
        in_value = true;
        if !harmless(patterns, &key) {
            let section = section.as_deref().unwrap_or_default();
            return Ok(Some(format!("{section}.{key}")));
        }
    }
    Ok(None)
}

/// TOML: every leaf's dotted path (tables are walked; arrays and values are leaves).
fn toml(text: &str, patterns: &[&str]) -> Result<Option<String>, String> {
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| format!("not TOML: {}", e.message()))?;
    Ok(toml_walk(&table, "", patterns))
}

fn toml_walk(table: &toml::Table, prefix: &str, patterns: &[&str]) -> Option<String> {
    for (key, value) in table {
        let path = format!("{prefix}{key}");
        let refused = match value {
            toml::Value::Table(inner) => toml_walk(inner, &format!("{path}."), patterns),
            _ => (!harmless(patterns, &path)).then_some(path),
        };
        if refused.is_some() {
            return refused;
        }
    }
    None
}

/// The YAML constructs that let a document spell a key otherwise than as written: an
/// escape in a double-quoted scalar (`"env\x5ffile"`), a directive, an alias used as a
/// key (`*k : …`, which stands for whatever `&k` anchored). An alias as a value, merged
/// or not (`<<: *common`, compose's habit), brings only keys written elsewhere in the
/// text, which are read there.
fn yaml_unreadable(text: &str) -> Option<&'static str> {
    if ["\\x", "\\u", "\\U"].iter().any(|e| text.contains(e)) {
        return Some("an escape in a quoted scalar");
    }
    if text.lines().any(|l| l.starts_with('%')) {
        return Some("a directive");
    }
    let bytes = text.as_bytes();
    let name = |c: &u8| !(c.is_ascii_whitespace() || matches!(c, b',' | b'[' | b']' | b'{' | b'}'));
    for (i, b) in bytes.iter().enumerate() {
        let after_blank = i == 0
            || matches!(
                bytes[i - 1],
                b' ' | b'\t' | b'\n' | b'[' | b'{' | b',' | b'?'
            );
        if !(after_blank && *b == b'*') {
            continue;
        }
        let rest = &bytes[i + 1..];
        let end = rest.iter().position(|c| !name(c)).unwrap_or(rest.len());
        if end == 0 {
            continue;
        }
        let after = &rest[end..];
        let after = &after[after
            .iter()
            .take_while(|c| matches!(c, b' ' | b'\t'))
            .count()..];
        if after.first() == Some(&b':') || (i > 0 && bytes[i - 1] == b'?') {
            return Some("an alias used as a key");
        }
    }
    None
}

/// The top-level keys of a YAML mapping: the lines that start at the first column.
fn yaml_top(text: &str, patterns: &[&str]) -> Result<Option<String>, String> {
    if let Some(why) = yaml_unreadable(text) {
        return Err(why.into());
    }
    for line in text.lines() {
        let content = line.trim();
        if content.is_empty() || content.starts_with('#') || matches!(content, "---" | "...") {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            continue;
        }
        let Some(end) = line.find(':') else {
            return Err(format!("a top-level line that is no key (`{content}`)"));
        };
        let key = line[..end].trim();
        let key = key
            .strip_prefix(['"', '\''])
            .and_then(|k| k.strip_suffix(['"', '\'']))
            .unwrap_or(key);
        if key.is_empty() || !plain_key(key) {
            return Err(format!(
                "a top-level line execgate does not read (`{content}`)"
            ));
        }
        if !harmless(patterns, key) {
            return Ok(Some(key.to_string()));
        }
    }
    Ok(None)
}

/// A key of letters, digits, `_` and `-` only.
fn plain_key(key: &str) -> bool {
    key.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Whether any mapping key anywhere in the document matches a refused pattern (`*` is
/// not used here: each pattern is a key): the key, quoted or not, followed by `:`.
fn yaml_refuses(text: &str, refused: &[&str]) -> Result<Option<String>, String> {
    if let Some(why) = yaml_unreadable(text) {
        return Err(why.into());
    }
    for key in refused {
        let mut from = 0;
        while let Some(i) = text[from..].find(key) {
            let start = from + i;
            let end = start + key.len();
            from = end;
            let before = text[..start].chars().next_back();
            let word_start =
                before.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'));
            let after = text[end..]
                .trim_start_matches(['"', '\''])
                .trim_start_matches([' ', '\t']);
            if word_start && after.starts_with(':') {
                return Ok(Some(key.to_string()));
            }
        }
    }
    Ok(None)
}

/// A `.env` file's names (`NAME=value`, `export NAME=value`).
fn dotenv(text: &str, refused: &[&str]) -> Option<String> {
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let name = line.split(['=', ':']).next().unwrap_or_default().trim();
        if refused.iter().any(|p| matches(p, name)) {
            return Some(name.to_string());
        }
    }
    None
}

fn json_top(text: &str, patterns: &[&str]) -> Result<Option<String>, String> {
    let object: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(text).map_err(|e| format!("not a JSON object: {e}"))?;
    Ok(object.keys().find(|k| !harmless(patterns, k)).cloned())
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! judged {
        ($name:ident, $judge:expr, $text:expr, $want:expr) => {
            #[test]
            fn $name() {
                let got = first_refused($judge, $text);
                let want: Result<Option<&str>, ()> = $want;
                match (got, want) {
                    (Ok(g), Ok(w)) => assert_eq!(g.as_deref(), w),
                    (Err(_), Err(())) => {}
                    (g, w) => panic!("{g:?}, wanted {w:?}"),
                }
            }
        };
    }

    const NPM: Judge = Judge::NpmIni(&["save-exact", "@*:registry", "//*:_authToken"]);
    judged!(
        npm_harmless,
        NPM,
        "save-exact=true\n; x\n# y\n@a:registry=https://r/\n//r/:_authToken=${T}\n",
        Ok(None)
    );
    judged!(
        npm_refused,
        NPM,
        "save-exact=true\n  userconfig = /root/secret\n",
        Ok(Some("userconfig"))
    );
    judged!(npm_bare_key, NPM, "viewer\n", Ok(Some("viewer")));
    judged!(npm_array_key, NPM, "save-exact[]=x\n", Ok(None));
    judged!(npm_section, NPM, "[x]\nsave-exact=true\n", Err(()));
    judged!(npm_quoted, NPM, "\"viewer\"=x\n", Err(()));
    judged!(
        npm_auth_file,
        NPM,
        "//r/:keyfile=/root/k\n",
        Ok(Some("//r/:keyfile"))
    );

    const PIP: Judge = Judge::PythonIni(&["timeout", "index-url"]);
    judged!(
        pip_harmless,
        PIP,
        "[global]\ntimeout = 5\nindex_url = x\n  more\n",
        Ok(None)
    );
    judged!(
        pip_refused,
        PIP,
        "[install]\nLOG: /tmp/x\n",
        Ok(Some("install.log"))
    );
    judged!(pip_no_section, PIP, "timeout = 5\n", Err(()));

    const CARGO: Judge = Judge::Toml(&["term.*", "profile.*.lto"]);
    judged!(
        toml_harmless,
        CARGO,
        "[term]\ncolor = 'always'\n[profile.release]\nlto = true\n",
        Ok(None)
    );
    judged!(
        toml_refused,
        CARGO,
        "[target.x86_64-unknown-linux-gnu]\nrunner = 'x'\n",
        Ok(Some("target.x86_64-unknown-linux-gnu.runner"))
    );
    judged!(
        toml_inline,
        CARGO,
        "build = { rustc-wrapper = 'x' }\n",
        Ok(Some("build.rustc-wrapper"))
    );
    judged!(
        toml_dotted,
        CARGO,
        "build.rustc = 'x'\n",
        Ok(Some("build.rustc"))
    );
    judged!(toml_broken, CARGO, "stable\n", Err(()));

    const TOP: Judge = Judge::YamlTop(&["packages", "catalog"]);
    judged!(
        yaml_top_harmless,
        TOP,
        "# c\npackages:\n  - 'a/*'\n  - b\ncatalog:\n  x: 1\n",
        Ok(None)
    );
    judged!(
        yaml_top_refused,
        TOP,
        "packages: []\n\"storeDir\": /x\n",
        Ok(Some("storeDir"))
    );
    judged!(
        yaml_top_flow,
        TOP,
        "{packages: [a], storeDir: x}\n",
        Err(())
    );
    judged!(yaml_top_escape, TOP, "packages: \"\\x41\"\n", Err(()));
    judged!(yaml_top_alias, TOP, "x: &k storeDir\n*k : 1\n", Err(()));
    judged!(yaml_top_tag, TOP, "!!str storeDir: x\n", Err(()));

    const COMPOSE: Judge = Judge::YamlRefuses(&["env_file", "include"]);
    judged!(
        compose_harmless,
        COMPOSE,
        "services:\n  web:\n    image: nginx\n    command: [\"--include\", \"x\"]\n",
        Ok(None)
    );
    judged!(
        compose_refused,
        COMPOSE,
        "services:\n  web:\n    env_file: /root/x\n",
        Ok(Some("env_file"))
    );
    judged!(
        compose_flow,
        COMPOSE,
        "services: {web: {\"env_file\" : x}}\n",
        Ok(Some("env_file"))
    );
    judged!(
        compose_list,
        COMPOSE,
        "include:\n  - other.yaml\n",
        Ok(Some("include"))
    );

    judged!(
        compose_merge,
        COMPOSE,
        "x-c: &c\n  image: a\nservices:\n  web:\n    <<: *c\n    ports: [*p]\n",
        Ok(None)
    );
    judged!(
        compose_merged_key,
        COMPOSE,
        "x-c: &c\n  env_file: /x\nservices:\n  web:\n    <<: *c\n",
        Ok(Some("env_file"))
    );
    judged!(
        compose_alias_key,
        COMPOSE,
        "x: &k env_file\nservices:\n  web: {*k : /root/x}\n",
        Err(())
    );
    judged!(
        compose_tagged,
        COMPOSE,
        "services:\n  web:\n    ports: !reset []\n",
        Ok(None)
    );

    const DOTENV: Judge = Judge::DotenvRefuses(&["COMPOSE_*", "DOCKER_*"]);
    judged!(
        dotenv_harmless,
        DOTENV,
        "TAG=1\n# DOCKER_HOST=x\n",
        Ok(None)
    );
    judged!(
        dotenv_refused,
        DOTENV,
        "export DOCKER_HOST=tcp://x\n",
        Ok(Some("DOCKER_HOST"))
    );

    const JSON: Judge = Judge::JsonTop(&["auths", "*Format"]);
    judged!(
        json_harmless,
        JSON,
        "{\"auths\": {}, \"psFormat\": \"x\"}",
        Ok(None)
    );
    judged!(
        json_refused,
        JSON,
        "{\"credsStore\": \"x\"}",
        Ok(Some("credsStore"))
    );
    judged!(json_broken, JSON, "[]", Err(()));

    #[test]
    fn patterns_match_runs_of_characters() {
        assert!(matches("a*b", "ab") && matches("a*b", "axxb") && !matches("a*b", "axx"));
        assert!(matches("*", "") && matches("x", "x") && !matches("x", "xy"));
        assert!(matches("profile.*.lto", "profile.release.lto"));
        assert!(!matches("profile.*.lto", "profile.release.rustflags"));
        assert!(matches("//*:_authToken", "//r/:_authToken"));
    }
}
