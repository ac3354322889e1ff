package translate

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/hashicorp/nomad/api"
)

// AllocIndex stands for the instance's index in Container.Env values: the
// one runtime variable only the orchestrator knows (Swarm's task slot,
// counting from 1; Nomad's alloc index counts from 0). Translate leaves it
// nowhere else, so an adapter can expand it unambiguously (ExpandIndex).
const AllocIndex = "${NOMAD_ALLOC_INDEX}"

// ExpandIndex renders an env value in an adapter's own syntax: literal
// escapes each stretch of literal text (nil keeps it as it is), and index
// is what stands for the instance's index there.
func ExpandIndex(value string, literal func(string) string, index string) string {
	parts := strings.Split(value, AllocIndex)
	if literal != nil {
		for i, p := range parts {
			parts[i] = literal(p)
		}
	}
	return strings.Join(parts, index)
}

// interpContext resolves Nomad's runtime variables for one task.
//
//	${NOMAD_ADDR_<label>}   0.0.0.0:<container port>   (listen on the task's own address)
//	${NOMAD_IP_<label>}     0.0.0.0
//	${NOMAD_PORT_<label>}   <container port>
//	${NOMAD_ALLOC_INDEX}    AllocIndex, in env only (the adapter expands it)
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
	target           string
	ports            map[string]int
	job, group, task string
	meta             map[string]string
	env              map[string]string
	usesAllocDir     bool
	depth            int
}

var interpRE = regexp.MustCompile(`\$\{([^}]*)\}`)

// interpolate replaces the variables in s, a value of field. Only in env
// (index true) may ${NOMAD_ALLOC_INDEX} stand: the orchestrators expand
// per-instance values in the environment, not in the command line.
func (c *interpContext) interpolate(s, field string, index bool) (string, error) {
	var out strings.Builder
	last := 0
	for _, m := range interpRE.FindAllStringSubmatchIndex(s, -1) {
		out.WriteString(s[last:m[0]])
		name := strings.TrimSpace(s[m[2]:m[3]])
		rep, err := c.variable(name, field, index)
		if err != nil {
			return "", err
		}
		if index && name != "NOMAD_ALLOC_INDEX" && strings.Contains(rep, AllocIndex) {
			// Nomad would keep it literally; here it would read as the index
			return "", c.w.errorf("%s: ${%s} is %q, which holds %s literally", field, name, rep, AllocIndex)
		}
		out.WriteString(rep)
		last = m[1]
	}
	out.WriteString(s[last:])
	res := out.String()
	if err := c.noteAllocDir(res, field); err != nil {
		return "", err
	}
	return res, nil
}

// variable resolves one ${name}.
func (c *interpContext) variable(name, field string, index bool) (string, error) {
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
			return "0.0.0.0:" + strconv.Itoa(p), nil
		}
	case strings.HasPrefix(name, "NOMAD_IP_"):
		if _, ok := port("NOMAD_IP_"); ok {
			return "0.0.0.0", nil
		}
	case strings.HasPrefix(name, "NOMAD_PORT_"):
		if p, ok := port("NOMAD_PORT_"); ok {
			return strconv.Itoa(p), nil
		}
	case name == "NOMAD_ALLOC_INDEX":
		if !index {
			return "", c.w.errorf("%s uses ${NOMAD_ALLOC_INDEX}, which %s can only give in env", field, c.target)
		}
		return AllocIndex, nil
	case name == "NOMAD_ALLOC_DIR":
		return "/alloc", nil
	case name == "NOMAD_JOB_NAME" || name == "NOMAD_JOB_ID":
		return c.job, nil
	case name == "NOMAD_GROUP_NAME":
		return c.group, nil
	case name == "NOMAD_TASK_NAME":
		return c.task, nil
	case strings.HasPrefix(name, "NOMAD_META_"):
		if v, ok := c.meta[strings.TrimPrefix(name, "NOMAD_META_")]; ok {
			return v, nil
		}
	case strings.HasPrefix(name, "meta."):
		if v, ok := c.meta[strings.TrimPrefix(name, "meta.")]; ok {
			return v, nil
		}
	case strings.HasPrefix(name, "attr.") || strings.HasPrefix(name, "node.") || strings.HasPrefix(name, "env[") || strings.HasPrefix(name, "env."):
	default:
		if strings.HasPrefix(name, "NOMAD_") {
			break
		}
		if v, ok := c.env[name]; ok && c.depth < 4 {
			c.depth++
			defer func() { c.depth-- }()
			return c.interpolate(v, field, false)
		}
		return "${" + name + "}", nil
	}
	return "", c.w.errorf("%s uses ${%s}, which the %s adapter cannot provide", field, name, c.target)
}

// allocPathRE finds absolute paths under /alloc.
var allocPathRE = regexp.MustCompile(`(^|[\s=:,"'])/alloc(/[^\s,"']*)?`)

// noteAllocDir records a use of the alloc data dir; other alloc paths
// (logs, tmp) have no volume and are refused.
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
