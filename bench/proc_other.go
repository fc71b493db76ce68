//go:build !linux

package main

import (
	"os/exec"
	"syscall"
)

// childAttr keeps the defaults outside Linux; peak RSS is not measured there.
func childAttr() *syscall.SysProcAttr { return nil }

// signalGroup sends sig to the server process.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if sig == syscall.SIGKILL {
		_ = cmd.Process.Kill()
		return
	}
	_ = cmd.Process.Signal(sig)
}
