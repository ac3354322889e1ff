package swarm

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/hashicorp/nomad/api"
)

// interpContext resolves Nomad's runtime variables for one task.
//
//	${NOMAD_ADDR_<label>}   0.0.0.0:<container port>   (listen on the overlay address)
//	${NOMAD_IP_<label>}     0.0.0.0
//	${NOMAD_PORT_<label>}   <container port>
//	${NOMAD_ALLOC_INDEX}    {{.Task.Slot}} in env (Swarm expands it per task;
//	                        slots count from 1, Nomad's index from 0)
//	${NOMAD_ALLOC_DIR}      /alloc (its data dir is a volume)
//	${NOMAD_JOB_NAME} ${NOMAD_GROUP_NAME} ${NOMAD_TASK_NAME}   the names
//	${NOMAD_META_<key>} ${meta.<key>}   the task's merged meta
//	${<KEY>}                the task's own env KEY, as Nomad does
//
// Any other ${NOMAD_...}, ${attr...}, ${node...} or ${env...} is an error
// naming the task and the variable; any other ${...} is left as it is,
// as Nomad leaves unknown names.
type interpContext struct {
	w                where
	ports            map[string]int
	job, group, task string
	meta             map[string]string
	env              map[string]string
	usesAllocDir     bool
	depth            int
}

var interpRE = regexp.MustCompile(`\$\{([^}]*)\}`)

// interpolate replaces the variables in s, a value of field. In a Swarm
// template field (env) the literal text is escaped and ${NOMAD_ALLOC_INDEX}
// becomes the slot; elsewhere that index is an error, since Swarm expands
// templates only in env, hostname and mounts.
func (c *interpContext) interpolate(s, field string, templated bool) (string, error) {
	var out strings.Builder
	last := 0
	for _, m := range interpRE.FindAllStringSubmatchIndex(s, -1) {
		lit := s[last:m[0]]
		if templated {
			lit = escapeTemplate(lit)
		}
		out.WriteString(lit)
		name := strings.TrimSpace(s[m[2]:m[3]])
		rep, raw, err := c.variable(name, field, templated)
		if err != nil {
			return "", err
		}
		if templated && !raw {
			rep = escapeTemplate(rep)
		}
		out.WriteString(rep)
		last = m[1]
	}
	lit := s[last:]
	if templated {
		lit = escapeTemplate(lit)
	}
	out.WriteString(lit)
	res := out.String()
	if err := c.noteAllocDir(res, field); err != nil {
		return "", err
	}
	return res, nil
}

// variable resolves one ${name}; raw is true when the value is a Swarm
// template to be left unescaped.
func (c *interpContext) variable(name, field string, templated bool) (value string, raw bool, err error) {
	port := func(prefix string) (int, bool) {
		label := strings.TrimPrefix(name, prefix)
		if p, ok := c.ports[label]; ok {
			return p, true
		}
		for l, p := range c.ports { // Nomad also offers labels with '-' as '_'
			if strings.ReplaceAll(l, "-", "_") == label {
				return p, true
			}
		}
		return 0, false
	}
	switch {
	case strings.HasPrefix(name, "NOMAD_ADDR_"):
		if p, ok := port("NOMAD_ADDR_"); ok {
			return "0.0.0.0:" + strconv.Itoa(p), false, nil
		}
	case strings.HasPrefix(name, "NOMAD_IP_"):
		if _, ok := port("NOMAD_IP_"); ok {
			return "0.0.0.0", false, nil
		}
	case strings.HasPrefix(name, "NOMAD_PORT_"):
		if p, ok := port("NOMAD_PORT_"); ok {
			return strconv.Itoa(p), false, nil
		}
	case name == "NOMAD_ALLOC_INDEX":
		if !templated {
			return "", false, c.w.errorf("%s uses ${NOMAD_ALLOC_INDEX}, which Swarm can only give in env, hostname and mounts (templates)", field)
		}
		return "{{.Task.Slot}}", true, nil
	case name == "NOMAD_ALLOC_DIR":
		return "/alloc", false, nil
	case name == "NOMAD_JOB_NAME" || name == "NOMAD_JOB_ID":
		return c.job, false, nil
	case name == "NOMAD_GROUP_NAME":
		return c.group, false, nil
	case name == "NOMAD_TASK_NAME":
		return c.task, false, nil
	case strings.HasPrefix(name, "NOMAD_META_"):
		if v, ok := c.meta[strings.TrimPrefix(name, "NOMAD_META_")]; ok {
			return v, false, nil
		}
	case strings.HasPrefix(name, "meta."):
		if v, ok := c.meta[strings.TrimPrefix(name, "meta.")]; ok {
			return v, false, nil
		}
	case strings.HasPrefix(name, "attr.") || strings.HasPrefix(name, "node.") || strings.HasPrefix(name, "env[") || strings.HasPrefix(name, "env."):
	default:
		if strings.HasPrefix(name, "NOMAD_") {
			break
		}
		if v, ok := c.env[name]; ok && c.depth < 4 {
			c.depth++
			defer func() { c.depth-- }()
			s, err := c.interpolate(v, field, false)
			return s, false, err
		}
		return "${" + name + "}", false, nil
	}
	return "", false, c.w.errorf("%s uses ${%s}, which the swarm adapter cannot provide", field, name)
}

// allocPathRE finds absolute paths under /alloc.
var allocPathRE = regexp.MustCompile(`(^|[\s=:,"'])/alloc(/[^\s,"']*)?`)

// noteAllocDir records a use of the alloc data dir; other alloc paths
// (logs, tmp) have no volume on Swarm and are refused.
func (c *interpContext) noteAllocDir(s, field string) error {
	for _, m := range allocPathRE.FindAllStringSubmatch(s, -1) {
		rest := m[2]
		if rest == "/data" || strings.HasPrefix(rest, "/data/") {
			c.usesAllocDir = true
			continue
		}
		return c.w.errorf("%s uses /alloc%s: only the alloc data dir %s is provided (as a volume)", field, rest, AllocDataDir)
	}
	return nil
}

// escapeTemplate keeps Swarm's template expansion from reading literal text.
func escapeTemplate(s string) string {
	return strings.ReplaceAll(s, "{{", `{{"{{"}}`)
}

// mergedMeta is the task's meta as Nomad merges it: job, then group, then task.
func mergedMeta(job *api.Job, g *api.TaskGroup, t *api.Task) map[string]string {
	out := map[string]string{}
	for _, m := range []map[string]string{job.Meta, g.Meta, t.Meta} {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
