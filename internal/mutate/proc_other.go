//go:build !unix

package main

import "os/exec"

// killGroup: without process groups, cancelling kills the go command only
// (exec.CommandContext's default).
func killGroup(*exec.Cmd) {}
