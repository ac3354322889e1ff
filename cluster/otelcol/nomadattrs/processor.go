package nomadattrs

import (
	"context"
	"regexp"

	"go.opentelemetry.io/collector/pdata/plog"
)

// Resource attribute names set on every Nomad task log record. They are
// resource attributes because VictoriaLogs makes an OTLP resource's
// attributes the stream fields: one stream per allocation, task and stream.
const (
	AttrNamespace = "nomad.namespace"
	AttrJob       = "nomad.job"
	AttrGroup     = "nomad.group"
	AttrTask      = "nomad.task"
	AttrAllocID   = "nomad.alloc_id"
	AttrNode      = "nomad.node"
	AttrStream    = "log.stream" // stdout | stderr
)

// logPath matches .../alloc/<alloc_id>/alloc/logs/<task>.<stream>.<n>, the
// files Nomad's log collector writes and rotates (n counts up).
var logPath = regexp.MustCompile(`/alloc/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/alloc/logs/([^/]+)\.(stdout|stderr)\.[0-9]+$`)

// source is what a log file's path tells about its records.
type source struct{ allocID, task, stream string }

func parsePath(p string) (source, bool) {
	m := logPath.FindStringSubmatch(p)
	if m == nil {
		return source{}, false
	}
	return source{allocID: m[1], task: m[2], stream: m[3]}, true
}

type attrsProcessor struct {
	pathAttr string
	resolver *resolver
}

// group is one output resource: an input resource narrowed to one source.
type group struct {
	rl     plog.ResourceLogs
	scopes map[int]plog.ScopeLogs // input scope index -> output scope
}

// processLogs moves every record into a resource for its (allocation, task,
// stream) carrying the nomad.* attributes. Records whose path is not a Nomad
// task log keep their resource unchanged; nothing is dropped.
func (p *attrsProcessor) processLogs(ctx context.Context, ld plog.Logs) (plog.Logs, error) {
	out := plog.NewLogs()
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		in := ld.ResourceLogs().At(i)
		groups := map[source]*group{}
		for j := 0; j < in.ScopeLogs().Len(); j++ {
			sl := in.ScopeLogs().At(j)
			recs := sl.LogRecords()
			for k := 0; k < recs.Len(); k++ {
				rec := recs.At(k)
				var src source
				if v, ok := rec.Attributes().Get(p.pathAttr); ok {
					src, _ = parsePath(v.Str())
				}
				g := groups[src]
				if g == nil {
					g = p.newGroup(ctx, out, in, src)
					groups[src] = g
				}
				osl, ok := g.scopes[j]
				if !ok {
					osl = g.rl.ScopeLogs().AppendEmpty()
					sl.Scope().CopyTo(osl.Scope())
					osl.SetSchemaUrl(sl.SchemaUrl())
					g.scopes[j] = osl
				}
				rec.MoveTo(osl.LogRecords().AppendEmpty())
			}
		}
	}
	return out, nil
}

func (p *attrsProcessor) newGroup(ctx context.Context, out plog.Logs, in plog.ResourceLogs, src source) *group {
	rl := out.ResourceLogs().AppendEmpty()
	in.Resource().CopyTo(rl.Resource())
	rl.SetSchemaUrl(in.SchemaUrl())
	if src.allocID != "" {
		attrs := rl.Resource().Attributes()
		attrs.PutStr(AttrAllocID, src.allocID)
		attrs.PutStr(AttrTask, src.task)
		attrs.PutStr(AttrStream, src.stream)
		if info, ok := p.resolver.lookup(ctx, src.allocID); ok {
			attrs.PutStr(AttrNamespace, info.Namespace)
			attrs.PutStr(AttrJob, info.JobID)
			attrs.PutStr(AttrGroup, info.TaskGroup)
			attrs.PutStr(AttrNode, info.NodeName)
		}
	}
	return &group{rl: rl, scopes: map[int]plog.ScopeLogs{}}
}
