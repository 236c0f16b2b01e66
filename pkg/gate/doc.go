// Package gate is Deponent's deny-by-default gate: it decides ALLOW or
// BLOCK for one agent tool call before anything runs, under a policy file
// (Policy). It parses commands with a real POSIX parser and knows, per
// program, which arguments can name files and which options run other
// programs. It executes nothing and records nothing: package kernel's Cell
// runs what it allows through a jail and package evidence records every
// decision.
//
// Contract. Decide answers ALLOW or BLOCK for one call before anything runs.
// Anything the gate does not model is refused: unknown tools, unknown or
// mistyped parameters, shell syntax beyond simple commands, programs off
// the allowlist, paths that leave the sandbox.
//
// Threat surface covered:
//   - read_file / write_file: paths must resolve inside the sandbox. The
//     check follows symlinks component by component (a link inside that
//     points out is an escape; one that points inside is fine), rejects NUL,
//     absolute paths outside the sandbox and ".." above it, and compares on
//     path boundaries. Writes to protected paths — ".git" at any depth,
//     ".deponent", ".github/workflows", ".github/actions", the policy's
//     extra_protected_paths and allow_executables —
//     are refused, compared case-insensitively and after symlink resolution,
//     because what is written there runs later outside the jail.
//   - run_cmd: parsed by a real POSIX parser (mvdan.cc/sh/v3/syntax). Only
//     simple commands of literal words joined by &&, ||, ;, | and newlines
//     pass. Every expansion ($x, ${x}, $(…), backquotes, $((…)), $'…', $"…",
//     tilde, and any `$` or backquote outside single quotes, escaped or not),
//     redirect, here-document, background job, subshell, group, function,
//     control flow, negation, assignment and process substitution is refused
//     with its own class. Program names must be bare allowlisted names
//     (never resolved from the sandbox) or exact allow_executables paths.
//     Every argument that can name a file — the word itself, the value after
//     any "=", the value glued to a short option ("-o/tmp/x") — must resolve
//     inside the sandbox (an existing symlink is followed). Arguments may
//     name protected paths only for programs that never write (cat, head,
//     tail, grep, wc, ls, diff, echo, pwd, true); for every other program,
//     including sort (-o) and uniq (second operand), they are refused.
//     Unquoted globs are expanded here; every match must be inside and must
//     not start with "-" (a file named like an option). A small program
//     model knows which words are not paths (echo's operands, grep's
//     pattern, python's -c code) and which options run other programs or
//     install packages (python -m pip, sort --compress-program, find -exec,
//     …). The seed's denylist applies to the parsed words as defence in
//     depth, so quoting cannot split a denied phrase.
//   - What was approved is what runs: Decision.Script re-renders the parsed
//     words, each single-quoted, with glob matches spelled out, so /bin/sh
//     has nothing left to interpret.
//   - Invisible, bidirectional, control and path look-alike characters are
//     refused, so the text a reviewer reads is the text that runs.
//
// Not covered (the jail's job, or out of scope):
//   - Code inside an allowed program: `python3 -c …`, a test suite, a
//     conftest.py or a script written with write_file can do anything the
//     process can. The gate only checks what the shell would do.
//   - Time of check to time of use: the filesystem can change between the
//     decision and the run, including by an earlier command of the same
//     chain (`python3 mk_link.py && cat link/x`). Run Script in a jail that
//     confines writes and mounts ProtectedPaths read-only.
//   - Files a program reads by itself: recursive readers (grep -r, diff -r)
//     may follow in-tree symlinks that point out; `grep -R` is refused, but
//     the jail's read policy is the real boundary for reads.
//   - Options of policy-added programs beyond the small unsafe-option model
//     (find -exec, sort --compress-program, tar --to-command, mypy
//     --install-types, …): allowing a program trusts its option surface.
//   - Hard links (a regular file to the gate) and working-directory lookups
//     by trusted programs: `python3 -m x` imports from the sandbox first,
//     and version-manager shims (pyenv, asdf) read .python-version there.
//   - The denylist is a heuristic over words, not a parser of code inside
//     them; it also refuses harmless text such as `grep -rn sudo .`.
//
// Executing an ALLOW: run `/bin/sh -c Decision.Script` with the working
// directory at Sandbox(), PATH=TrustedPATH(), stdin from /dev/null, and an
// environment built from Policy().EnvPass() — never the runner's
// environment, which could carry ENV, BASH_ENV or exported functions. Heads are rendered as bare names, so
// the verdict does not depend on what is installed: an allowlisted program
// that is missing fails at run time with "not found".
package gate
