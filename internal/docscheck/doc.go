// Package docscheck holds the tests that keep the documentation true: the
// README's input and output tables against action.yml, docs/policy.md
// against the policy parser, the README's first command actually run, links
// that resolve, and the version the binaries print. It has no code of its
// own.
package docscheck
