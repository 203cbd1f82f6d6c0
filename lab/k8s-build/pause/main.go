// pause is the sandbox ("infra") container of a Kubernetes pod: it holds the pod's
// namespaces open and does nothing else. This is a Go rewrite of the behaviour of
// kubernetes/build/pause/linux/pause.c, built statically for the gpurack lab so that
// no image has to be pulled from a registry:
//
//   - it exits 0 on SIGINT or SIGTERM (the runtime stops the sandbox that way);
//   - as PID 1 of a pod that shares its PID namespace it reaps orphaned children;
//   - `pause -v` prints the version and exits.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// version is set with -ldflags "-X main.version=..." by tools/k8s-build/build.sh.
var version = "unknown"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-v" {
		fmt.Printf("pause.go %s (gpurack lab)\n", version)
		return
	}
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "Warning: pause should be the first process")
	}

	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range sigs {
		switch sig {
		case syscall.SIGINT, syscall.SIGTERM:
			fmt.Fprintf(os.Stderr, "Shutting down, got signal: %v\n", sig)
			os.Exit(0)
		case syscall.SIGCHLD:
			reap()
		}
	}
}

// reap collects every exited child so none stays a zombie.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
