// Package translate reads a pack's rendered Nomad job into an
// orchestrator-neutral plan that the Swarm and Kubernetes adapters turn
// into their own objects. The job stays the single source of truth, and
// every adapter honours it by the same rules, so a difference measured
// between orchestrators is the orchestrators', not their translations'.
//
// Services. Each task group becomes one Service running its one docker
// task, named <job>-<group>: Consul names are not unique across jobs (two
// variants of one app both register "taewa") while an orchestrator's
// service names are, so the group's Consul names are kept beside it
// (Service.Consul) for the adapter to resolve on the job's own network.
// Every name must be a DNS-1035 label (lower-case letters, digits and '-',
// starting with a letter, at most 63 characters), since both Swarm DNS and
// Kubernetes Services need one.
//
// Container ports. A group's port label gets the container port its `to`
// names; without one, its `static` port; without either (a dynamic port, as
// in host networking), the first port from 8000 up, in label order, that no
// other label of the group claims. Each service has its own address on the
// job's network, so these never collide across services. Nomad's host and
// bridge network modes both become that network.
//
// Runtime variables (${NOMAD_ADDR_x}, ${NOMAD_PORT_x}, meta, names) are
// resolved here; the instance index, which only the orchestrator knows, is
// left in env values as AllocIndex for the adapter to substitute (see
// ExpandIndex). Env templates that look up a service of the job render its
// DNS name and port. The path /alloc/data marks a service that needs a data
// volume of its own per replica (Service.UsesAllocDir).
//
// Resources are what contract.ParseTask reads for every orchestrator and
// the limits gate; a CPU mode the Target cannot enforce is refused. One
// http or tcp check per group is read into Check, which the adapter runs
// itself from the task's network namespace.
//
// Refusals and remarks. Whatever the target cannot honour is an error
// naming the target, job, group, task and stanza, e.g.
//
//	kubernetes: job taewa, group taewa, task taewa: driver "exec" is not supported
//
// A stanza that means nothing on the target is never dropped silently: the
// plan lists it as a Remark, "ignored" or "differs", with the reason.
// Adapters add the remarks that are facts of their own orchestrator.
package translate
