package main

// Go workloads register themselves with harness/loadgen from init; loadgen
// imports none of them, so the binary links them in here.
import (
	_ "github.com/orchbench/orchbench/apps/voting/workload"
	_ "github.com/orchbench/orchbench/deathstarbench/hotelreservation/workload"
	_ "github.com/orchbench/orchbench/deathstarbench/mediamicroservices/workload"
	_ "github.com/orchbench/orchbench/deathstarbench/socialnetwork/workload"
)
