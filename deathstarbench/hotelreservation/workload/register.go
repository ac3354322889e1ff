package workload

import "github.com/orchbench/orchbench/harness/loadgen"

// Registered as "hotel-reservation" so `orchbench load -w hotel-reservation:mixed`
// and an experiment's workload = "hotel-reservation:mixed" find it.
func init() {
	loadgen.RegisterWorkload("hotel-reservation", func(spec string) (loadgen.Workload, error) {
		w, err := FromSpec(spec)
		if err != nil {
			return nil, err // a nil interface, not a nil *HotelReservation in one
		}
		return w, nil
	})
}
