// The program in the smoke test's image (tools/k8s-local.sh smoke): a scratch image holds only this
// static binary, so the test needs no base image from a registry.
//
//	smoke serve ADDR   answers every HTTP request with the pod's host name (the readiness probe too)
//	smoke get URL      prints the body of one GET (pod → Service by DNS name, run with kubectl exec)
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) != 3 {
		fail("usage: smoke serve ADDR | smoke get URL")
	}
	switch os.Args[1] {
	case "serve":
		serve(os.Args[2])
	case "get":
		get(os.Args[2])
	default:
		fail("unknown command " + os.Args[1])
	}
}

func serve(addr string) {
	// As PID 1 the default action of SIGTERM does nothing: without this, deleting a pod would
	// wait for its whole grace period.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-stop
		os.Exit(0)
	}()
	name, _ := os.Hostname()
	http.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, name)
	})
	fail(http.ListenAndServe(addr, nil).Error())
}

func get(url string) {
	client := http.Client{Timeout: 5 * time.Second}
	res, err := client.Get(url)
	if err != nil {
		fail(err.Error())
	}
	defer res.Body.Close()
	if _, err := io.Copy(os.Stdout, res.Body); err != nil || res.StatusCode != http.StatusOK {
		fail(fmt.Sprintf("GET %s: status %d", url, res.StatusCode))
	}
}

func fail(message string) {
	fmt.Fprintln(os.Stderr, message)
	os.Exit(1)
}
