// netcheck is the lab's TCP probe: the lab has no registry, so the end-to-end tests that
// prove NetworkPolicy enforcement (a pod can or cannot open a TCP connection to another)
// run this static program from a locally made image (lab/k8s-build, docs/lab-kubernetes.md).
//
//	netcheck serve PORT            accept connections on PORT, answer "ok" to each
//	netcheck connect HOST:PORT S   exit 0 when HOST:PORT answers "ok" within S seconds, else 1
//	netcheck sleep S               sleep S seconds, exit 0 (a Job that runs and completes)
//	netcheck -v                    print the version
package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

// version is set with -ldflags "-X main.version=..." by lab/k8s-build/build.sh.
var version = "unknown"

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "-v":
		fmt.Printf("netcheck %s (gpurack lab)\n", version)
	case "serve":
		need(3)
		serve(os.Args[2])
	case "connect":
		need(4)
		os.Exit(connect(os.Args[2], seconds(os.Args[3])))
	case "sleep":
		need(3)
		time.Sleep(seconds(os.Args[2]))
	default:
		usage()
	}
}

func serve(port string) {
	ln, err := net.Listen("tcp", ":"+port)
	if err != nil {
		fmt.Fprintln(os.Stderr, "netcheck:", err)
		os.Exit(1)
	}
	go func() {
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
		<-sigs
		os.Exit(0)
	}()
	fmt.Println("netcheck: serving on", ln.Addr())
	for {
		c, err := ln.Accept()
		if err != nil {
			continue
		}
		fmt.Fprintln(c, "ok")
		c.Close()
	}
}

// connect tries again until the deadline: a NetworkPolicy agent learns a new pod's address
// from the API server, so a pod's first attempt may be refused before its policy is synced.
func connect(addr string, timeout time.Duration) int {
	deadline := time.Now().Add(timeout)
	for {
		err := answer(addr, time.Until(deadline))
		if err == nil {
			fmt.Println("netcheck: connected to", addr)
			return 0
		}
		if time.Until(deadline) < retryEvery {
			fmt.Println("netcheck:", err)
			return 1
		}
		time.Sleep(retryEvery)
	}
}

const retryEvery = 250 * time.Millisecond

func answer(addr string, timeout time.Duration) error {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return fmt.Errorf("no connection: %w", err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(timeout))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || line != "ok\n" {
		return fmt.Errorf("connected, no answer: %q %v", line, err)
	}
	return nil
}

func seconds(s string) time.Duration {
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n < 0 {
		usage()
	}
	return time.Duration(n * float64(time.Second))
}

func need(n int) {
	if len(os.Args) < n {
		usage()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: netcheck serve PORT | connect HOST:PORT SECONDS | sleep SECONDS | -v")
	os.Exit(64)
}
