# An inventory for `just remote-up inventory=FILE` (docs/remote.md): your
# own Debian 12 machines, reached over SSH with a key, each with a role.
#
#   server  Consul and Nomad servers (raft), Swarm managers; they run no
#           application. 1, 3 or 5 of them.
#   worker  the application's tasks. At least one.
#   client  the load generator, the image registry, the node probe. Exactly
#           one: load never competes with the application for a worker's CPU.
#
# Every host needs systemd, sshd, and the user below with passwordless sudo
# (or root). Nothing else: remote-up brings Consul, Nomad, Docker, the
# registry and the probe, from this machine, without the hosts downloading
# anything.

# Consul's and Nomad's datacenter
datacenter = "dc1"

# defaults for every host; a host block may set its own user, key and port
ssh {
  user = "debian"
  key  = "~/.ssh/id_ed25519" # relative paths are from this file's folder
  port = 22
}

host "server1" {
  address = "192.168.10.11" # the address the hosts and this machine reach it at
  role    = "server"
}

host "server2" {
  address = "192.168.10.12"
  role    = "server"
}

host "server3" {
  address = "192.168.10.13"
  role    = "server"
}

host "worker1" {
  address = "192.168.10.21"
  role    = "worker"
}

host "worker2" {
  address = "192.168.10.22"
  role    = "worker"
}

host "loadgen" {
  address = "192.168.10.10"
  role    = "client"
  user    = "admin" # this host's own user
}

# Where remote-up keeps this cluster's CA, certificates, gossip keys and
# tokens on this machine (0700; every secret 0600). Default:
# .state/remote/<file name>-<hash of its path>/
# state_dir = "/secure/orchbench/lab"
