// Package uniqueid makes the 64-bit IDs of the DeathStarBench ports' unique-id
// services (and of the social network's users): unique across replicas and
// ordered by creation time.
package uniqueid

import (
	"hash/fnv"
	"os"
	"sync"
	"time"
)

// Layout of a 64-bit ID: sign bit 0 | 41 bits of milliseconds since idEpoch |
// 10 bits of machine ID | 12 bits of counter. Like DeathStarBench's
// unique-id service it combines a timestamp, the machine and a counter, so
// replicas never collide and IDs sort by creation time.
const (
	idTimestampBits = 41
	idMachineBits   = 10
	idCounterBits   = 12

	maxMachineID = 1<<idMachineBits - 1
	maxCounter   = 1<<idCounterBits - 1
)

// idEpoch starts the 41-bit millisecond clock, which lasts ~69 years from it.
var idEpoch = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// Generator hands out unique, time-ordered 64-bit IDs.
type Generator struct {
	machineID int64
	now       func() time.Time

	mu       sync.Mutex
	lastTick int64
	counter  int64
}

// New returns a generator for machineID (0..1023).
func New(machineID int64) *Generator {
	return &Generator{machineID: machineID & maxMachineID, now: time.Now}
}

// MachineIDFromHostname derives a machine ID from the host name, the
// fallback when none is configured (DeathStarBench hashes the MAC address).
func MachineIDFromHostname() int64 {
	name, _ := os.Hostname()
	h := fnv.New32a()
	h.Write([]byte(name))
	return int64(h.Sum32() & maxMachineID)
}

// Next returns a new ID.
func (g *Generator) Next() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	tick := g.now().Sub(idEpoch).Milliseconds()
	if tick < g.lastTick {
		// The clock stepped back: stay on the last tick rather than risk
		// reissuing IDs from the past.
		tick = g.lastTick
	}
	if tick == g.lastTick {
		g.counter++
		if g.counter > maxCounter {
			// 4096 IDs in one millisecond: borrow the next millisecond.
			tick++
			g.counter = 0
		}
	} else {
		g.counter = 0
	}
	g.lastTick = tick
	return tick<<(idMachineBits+idCounterBits) | g.machineID<<idCounterBits | g.counter
}

// Split returns the parts of an ID made by Generator.
func Split(id int64) (timestamp time.Time, machineID, counter int64) {
	tick := id >> (idMachineBits + idCounterBits)
	return idEpoch.Add(time.Duration(tick) * time.Millisecond),
		(id >> idCounterBits) & maxMachineID, id & maxCounter
}
