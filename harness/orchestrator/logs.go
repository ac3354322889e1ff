package orchestrator

// ShippedLogs is an orchestrator whose tasks' logs the node agent ships,
// each line labelled with the job that wrote it: the agent tails Nomad's
// allocation directories. Other orchestrators' task logs are not shipped,
// and their steps carry no link to logs.
type ShippedLogs interface {
	// ShippedLogJob is the job label the shipped logs of d's tasks carry.
	ShippedLogJob(d *Deployment) string
}
