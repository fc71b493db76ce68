//go:build linux

package main

import (
	"os/exec"
	"syscall"
)

// childAttr puts a server in its own process group, so a Ctrl-C at the
// terminal reaches only the bench (which then stops it in order), and has
// the kernel kill it should the bench die without cleaning up.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// signalGroup sends sig to the server's process group.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	_ = syscall.Kill(-cmd.Process.Pid, sig)
}
