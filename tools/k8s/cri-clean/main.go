// cri-clean stops and removes every pod sandbox of the cluster's containerd through the CRI, like
// `crictl rmp --all --force`, for `tools/k8s-local.sh down`: stopping a sandbox through the CRI
// (not just killing its tasks) runs the CNI DEL that removes the pod's veth, network namespace,
// IP allocation and iptables rules. Usage: cri-clean unix:///path/to/containerd.sock
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func main() {
	if len(os.Args) != 2 {
		fail("usage: cri-clean unix:///path/to/containerd.sock")
	}
	conn, err := grpc.NewClient(os.Args[1], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fail(err.Error())
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	runtime := runtimeapi.NewRuntimeServiceClient(conn)
	sandboxes, err := runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		fail("listing pod sandboxes: " + err.Error())
	}
	failed := false
	for _, sandbox := range sandboxes.Items {
		if err := remove(ctx, runtime, sandbox.Id); err != nil {
			fmt.Fprintf(os.Stderr, "pod %s/%s: %v\n", sandbox.Metadata.Namespace, sandbox.Metadata.Name, err)
			failed = true
		}
	}
	fmt.Printf("%d pod sandboxes removed\n", len(sandboxes.Items))
	if failed {
		os.Exit(1)
	}
}

func remove(ctx context.Context, runtime runtimeapi.RuntimeServiceClient, id string) error {
	if _, err := runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: id}); err != nil {
		return err
	}
	_, err := runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: id})
	return err
}

func fail(message string) {
	fmt.Fprintln(os.Stderr, message)
	os.Exit(1)
}
