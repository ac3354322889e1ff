// Package nomadattrs is an OpenTelemetry Collector logs processor that names
// the Nomad job, group, task and allocation of every task log line.
//
// Nomad writes task logs to <data_dir>/alloc/<alloc_id>/alloc/logs/<task>.<stream>.<n>;
// the path gives the allocation, task and stream, and Nomad's HTTP API
// (GET /v1/allocation/<id>) gives the namespace, job, group and node.
package nomadattrs

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"
)

// Type is the processor's name in the collector configuration.
var Type = component.MustNewType("nomadattrs")

// NewFactory returns the factory the collector builder registers.
func NewFactory() processor.Factory {
	return processor.NewFactory(Type,
		func() component.Config { return createDefaultConfig() },
		processor.WithLogs(createLogs, component.StabilityLevelDevelopment))
}

func createLogs(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
	c := cfg.(*Config)
	r, err := newResolver(c, set.Logger)
	if err != nil {
		return nil, err
	}
	p := &attrsProcessor{pathAttr: c.PathAttribute, resolver: r}
	// MutatesData: records are moved into new resources.
	return processorhelper.NewLogs(ctx, set, cfg, next, p.processLogs,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}))
}
