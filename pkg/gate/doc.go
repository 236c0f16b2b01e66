// Package gate is Deponent's deny-by-default gate: it decides ALLOW or
// BLOCK for one agent tool call before anything runs, under a policy file
// (Policy). It parses commands with a real POSIX parser and reads every
// program's arguments with that program's model from a catalogue. It
// executes nothing and records nothing: package kernel's Cell runs what it
// allows through a jail and package evidence records every decision.
//
// Contract. Decide answers ALLOW or BLOCK for one call before anything runs.
// Anything the gate does not model is refused: unknown tools, unknown or
// mistyped parameters, shell syntax beyond the shapes below, programs off
// the allowlist or without a model, options a program's model does not
// know, paths that leave the sandbox. Every BLOCK reason names what was
// refused and, where the agent can do something else, what.
//
// Tools (Tools, ToolParams): run_cmd {cmd}, read_file {path}, write_file
// {path, content}, edit_file {path, old, new}, list_dir {path}.
//
// Threat surface covered:
//   - File tools: paths must resolve inside the sandbox. The check follows
//     symlinks component by component (a link inside that points out is an
//     escape; one that points inside is fine), rejects NUL, absolute paths
//     outside the sandbox and ".." above it, and compares on path
//     boundaries. write_file and edit_file refuse protected paths — ".git"
//     at any depth, ".deponent", ".github/workflows", ".github/actions",
//     the policy's extra_protected_paths and allow_executables — compared
//     case-insensitively and after symlink resolution, because what is
//     written there runs later outside the jail. edit_file's old must be a
//     non-empty string and new a string, each within file_size_mb (the
//     executor checks that old occurs once); list_dir follows read_file.
//   - run_cmd shape: parsed by mvdan.cc/sh/v3/syntax (POSIX). Only simple
//     commands of literal words joined by &&, ||, ;, | and newlines pass,
//     plus: `cd SUBDIR` into the sandbox (no "..", not in a pipeline; the
//     commands after it are checked from every directory they may run in);
//     `NAME=value` prefixes for a fixed list of variables (AssignableVariables)
//     whose values are checked; and the redirects `>/dev/null`,
//     `2>/dev/null` (and `>>` forms) and `2>&1` before a pipe or after
//     `>/dev/null`. Every expansion ($x, ${x}, $(…), backquotes, $((…)),
//     $'…', $"…", tilde, and any `$` or backquote outside single quotes
//     except a `$` in double quotes that no shell expands), other redirect,
//     here-document, background job, subshell, group, function, control
//     flow, negation and process substitution is refused with its own class.
//   - Caps, counted in one linear pass before parsing (the parser is
//     superlinear on nested shapes): 64 KiB per command, 256 commands, 8192
//     words, 16 nested openers or compound commands, 4096 quotes, escapes
//     and `$` signs; a short-option cluster has at most 64 letters and one
//     program reads at most 1024 options; globs match at most 4096 paths.
//   - Programs: a head must be a bare allowlisted name (never resolved from
//     the sandbox) or an exact allow_executables path, and an allowlisted
//     name must have a model in the catalogue (catalogue.go, prog_*.go; the
//     policy parser refuses one without). A model reads the arguments as
//     the program's parser does — getopt_long clusters, glued values,
//     "--opt=value", "--", options after operands, unambiguous long-option
//     prefixes; argparse, click, clap and Go flag variants; subcommands
//     (git, go, ruff), expressions (find), scripts (sed, awk), python -m —
//     and, where the BSD variant on macOS reads words differently, under
//     that reading too. It refuses what runs other programs, installs
//     packages, reads names or options the gate cannot see (@file
//     arguments, --files0-from, pytest addopts, inline config that holds
//     paths) or follows links out, and gives every other argument a role:
//     a path read (inside the sandbox), written or removed (inside, off
//     protected paths, never the sandbox root), text, or a search pattern.
//     `python -m` runs only modules the policy lists (python_modules), under
//     their own model, or the project's own modules.
//   - Unquoted globs are expanded here in the command's directory; every
//     match must be inside and must not start with "-".
//   - The denylist applies to a command's program, options and operands
//     (and NAME=value prefixes) as defence in depth — never to the search
//     pattern of a read-only program — so quoting cannot split a denied
//     phrase; paths are also matched cleaned ("../etc/" as "/etc/").
//   - What was approved is what runs: Decision.Script re-renders the parsed
//     words, each single-quoted, with glob matches spelled out and the
//     prefixes and redirects in fixed forms, so /bin/sh has nothing left to
//     interpret.
//   - Invisible, bidirectional, control and path look-alike characters are
//     refused, so the text a reviewer reads is the text that runs.
//
// Not covered (the jail's job, or out of scope):
//   - Code inside an allowed program: `python3 -c …`, a test suite, a
//     conftest.py, a Makefile's recipes, a script written with write_file,
//     and configuration the agent writes (pyproject.toml addopts, setup.cfg,
//     .ruff.toml) can do anything the process can. The gate checks the
//     command line, not what the program then reads.
//   - Time of check to time of use: the filesystem can change between the
//     decision and the run, including by an earlier command of the same
//     chain (`python3 mk_link.py && cat link/x`). Run Script in a jail that
//     confines writes and mounts ProtectedPaths read-only.
//   - Files a program reads by itself: recursive readers (grep -r, diff -r,
//     find) may follow in-tree symlinks that point out; -R, -L and their
//     kin are refused, but the jail's read policy is the real boundary for
//     reads. Protected paths may be read (cat .git/config), including what
//     the checkout left there.
//   - Trees: rm -r, mv and cp -r act on whole trees; a protected path named
//     by an operand, an anchored protected path below it and a .git directly
//     inside it are refused, and so is a copied or moved tree landing on a
//     directory that holds one (`cp -r build/gh .github`), but a repository
//     nested deeper is not searched for (the jail keeps the top-level .git
//     read-only), and a copy of a tree holding a nested repository makes
//     another one.
//     Formatters and fixers (black, ruff format, ruff check --fix) walking a
//     directory are refused when a protected directory below it holds
//     Python sources; other files they might reach through their own
//     configuration (an include pattern) are not followed.
//   - The models follow the GNU tools of Linux runners (and the listed BSD
//     differences); an option a newer version adds is refused until it is
//     modelled. Programs run under the environment the policy builds; the
//     policy cannot set the variables that inject options (GIT_*,
//     PYTEST_ADDOPTS, MAKEFLAGS, GOFLAGS, POSIXLY_CORRECT, …).
//   - git may refresh its index opportunistically while reading (status);
//     git add and git commit, when the policy allows them, write .git and
//     need a jail that lets them.
//   - Hard links (a regular file to the gate) and working-directory lookups
//     by trusted programs: `python3 -m x` imports from the sandbox first,
//     and version-manager shims (pyenv, asdf) read .python-version there.
//   - The denylist is a heuristic over words, not a parser of code inside
//     them.
//
// Executing an ALLOW: run `/bin/sh -c Decision.Script` with the working
// directory at Sandbox(), PATH=TrustedPATH(), stdin from /dev/null, and an
// environment built from Policy().EnvPass() — never the runner's
// environment, which could carry ENV, BASH_ENV or exported functions. Heads
// are rendered as bare names, so the verdict does not depend on what is
// installed: an allowlisted program that is missing fails at run time with
// "not found". The file tools act on Decision.Path, relative to the
// sandbox, through an os.Root of it.
package gate
