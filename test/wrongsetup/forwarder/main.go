// Command forwarder is the proxied row's TCP forwarder as a program of its
// own, so that the multi-node validity test runs it on another node than
// the generator's and the instance's: it relays every connection to a
// healthy instance of a service, found through a Consul agent at each
// accept, and prints its address once it listens.
//
//	forwarder --listen 10.77.0.11:0 --consul http://10.77.0.11:8500 --service taewa-proxied
package main

import (
	"flag"
	"fmt"
	"net"
	"os"

	"github.com/orchbench/orchbench/test/wrongsetup"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to accept connections at")
	consul := flag.String("consul", "http://127.0.0.1:8500", "the Consul agent that names the service's healthy instances")
	service := flag.String("service", "", "the service whose instances get the relayed connections")
	flag.Parse()
	if *service == "" {
		fmt.Fprintln(os.Stderr, "forwarder: --service is required")
		os.Exit(2)
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(os.Stderr, "forwarder: --listen %s: %v\n", *listen, err)
		os.Exit(1)
	}
	fmt.Println(l.Addr())
	wrongsetup.Forward(l, func() (string, error) { return wrongsetup.ConsulInstance(*consul, *service) })
}
