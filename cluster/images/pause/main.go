// Command pause holds a Nomad bridge-mode allocation's network namespace, as
// Kubernetes' pause image does; no image registry is reachable here, so Nomad's
// docker driver gets this one as its infra_image instead.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}
